// Pure: the fleet view (`doctor` over several contexts, fleet-report.ts) in every doctor format. Text and Markdown: a
// roll-up table (one row per cluster, failed ones with their error), then one target table with a cluster column and
// the details of what needs attention. JSON/YAML: the FleetReport, every target with its `cluster`. SARIF: one run
// per cluster (automationDetails names it), every result with the cluster in its properties and logical location.
import type { Log, Result, Run } from 'sarif';
import { stringify as toYaml } from 'yaml';
import { countsSummary } from '../../model/verdict-counts.js';
import { fleetRollup, fleetTargets, type ClusterRollup, type ClusterRow, type FleetReport } from '../fleet-report.js';
import { needsDetails, targetLabel, type TargetReport } from '../report.js';
import { cell, code, details, html, policyMarkdown } from './markdown.js';
import type { OutputFormat } from './render.js';
import { renderSarif, SARIF_SCHEMA } from './sarif.js';
import { targetDetails } from './table.js';
import { columns, planCell, policyCell, printable, profileLine, verdictCell } from './text.js';

const numbers = (r: ClusterRollup | undefined): string[] => (r ? [r.targets, r.atRisk, r.mitigated, r.uncovered].map(String) : ['-', '-', '-', '-']);

function rowNote(c: ClusterRow): string {
  if (c.error) return c.error;
  return c.report ? profileLine(c.report.clusterProfile).replace(/^cluster profile: /, '') : '';
}

export function fleetHeadline(report: FleetReport): string {
  const scanned = report.clusters.length - report.failed;
  const failed = report.failed > 0 ? `, ${report.failed} could not be scanned` : '';
  const atRiskIn = report.clusters.filter((c) => (c.rollup?.atRisk ?? 0) > 0).length;
  const risk = report.atRisk ? `; at risk in ${atRiskIn} of ${scanned}` : '; nothing at risk';
  return `fleet: ${report.clusters.length} cluster${report.clusters.length === 1 ? '' : 's'}${failed}; ${countsSummary(report.counts)}${risk}`;
}

function renderText(report: FleetReport, wide: boolean): string {
  const out: string[] = [];
  const total = fleetRollup(report);
  out.push(
    columns(
      ['CLUSTER', 'STATUS', 'TARGETS', 'AT RISK', 'MITIGATED', 'UNCOVERED', 'PROFILE / ERROR'],
      [...report.clusters.map((c) => [c.cluster, c.status, ...numbers(c.rollup), rowNote(c)]), ['(fleet)', '', ...numbers(total), '']],
    ),
  );
  for (const c of report.clusters) for (const n of c.report?.account?.advice ?? []) out.push(`account (${printable(c.cluster)}): ${printable(n)}`);
  for (const c of report.clusters) for (const n of c.report?.notes ?? []) out.push(`note (${printable(c.cluster)}): ${printable(n)}`);
  const targets = fleetTargets(report);
  if (targets.length > 0) {
    const header = ['CLUSTER', 'NAMESPACE', 'KIND', 'NAME', 'CLB', 'VERDICT', 'ROOT CAUSE', 'PLAN', ...(wide ? ['MITIGATIONS'] : []), 'POLICY'];
    const row = (t: TargetReport) => [t.cluster ?? '-', t.namespace, t.kind, t.name, t.loadBalancerId ?? '-', verdictCell(t), t.rootCause, planCell(t), ...(wide ? [t.mitigations.join(',') || '-'] : []), policyCell(t)];
    out.push('', columns(header, targets.map(row)));
    for (const t of targets.filter((x) => wide || needsDetails(x))) out.push('', ...targetDetails(t).map((l, i) => (i === 0 ? `[${printable(t.cluster ?? '')}] ${l}` : l)));
  }
  out.push('', fleetHeadline(report));
  return `${out.join('\n')}\n`;
}

function renderFleetMarkdown(report: FleetReport): string {
  const out = [`### loopguard doctor: ${cell(fleetHeadline(report).replace(/^fleet: /, ''))}`, ''];
  out.push('| Cluster | Status | Targets | At risk | Mitigated | Uncovered | Profile / error |', '|---|---|---|---|---|---|---|');
  for (const c of report.clusters) out.push(`| ${code(c.cluster)} | ${c.status === 'Failed' ? '**Failed**' : 'Scanned'} | ${numbers(c.rollup).join(' | ')} | ${cell(rowNote(c))} |`);
  out.push(`| (fleet) | | ${numbers(fleetRollup(report)).join(' | ')} | |`, '');
  for (const c of report.clusters) for (const n of c.report?.account?.advice ?? []) out.push(`> account (${cell(c.cluster)}): ${cell(n)}`, '');
  for (const c of report.clusters) for (const n of c.report?.notes ?? []) out.push(`> note (${cell(c.cluster)}): ${cell(n)}`, '');
  const targets = fleetTargets(report);
  if (targets.length > 0) {
    out.push('| Cluster | Target | CLB | Verdict | Root cause | Plan | Policy |', '|---|---|---|---|---|---|---|');
    for (const t of targets) {
      const bold = t.verdict === 'AtRisk' ? '**' : '';
      out.push(`| ${code(t.cluster ?? '-')} | ${code(targetLabel(t))} | ${cell(t.loadBalancerId ?? '-')} | ${bold}${cell(verdictCell(t))}${bold} | ${cell(t.rootCause)} | ${cell(planCell(t))} | ${policyMarkdown(t)} |`);
    }
    out.push('');
    for (const t of targets.filter(needsDetails)) out.push(...details(t).map((l, i) => (i === 0 ? l.replace('<summary>', `<summary>${html(t.cluster ?? '')}: `) : l)));
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** One SARIF run per cluster; a cluster that could not be scanned is a run whose invocation failed, with the reason. */
function renderFleetSarif(report: FleetReport, version: string): string {
  const runs: Run[] = report.clusters.map((c) => {
    const automationDetails = { id: `loopguard-doctor/${c.cluster}/` };
    if (!c.report) {
      return {
        tool: { driver: { name: 'loopguard', semanticVersion: version, version } },
        automationDetails,
        invocations: [{ executionSuccessful: false, toolExecutionNotifications: [{ level: 'error', message: { text: printable(c.error ?? 'not scanned') } }] }],
        results: [],
        properties: { cluster: c.cluster },
      };
    }
    const [run] = (JSON.parse(renderSarif(c.report, version)) as Log).runs;
    const withCluster = (r: Result): Result => {
      const fqn = r.partialFingerprints?.['loopguardTarget/v1'] ?? '';
      const [kind = '', namespace = '', name = ''] = fqn.split('/');
      return {
        ...r,
        locations: r.locations ?? [{ logicalLocations: [{ name, fullyQualifiedName: `${c.cluster}/${namespace}/${kind}/${name}`, kind: 'resource' }] }],
        partialFingerprints: { 'loopguardTarget/v1': `${c.cluster}/${fqn}` },
        properties: { ...r.properties, cluster: c.cluster },
      };
    };
    return { ...(run as Run), automationDetails, results: (run?.results ?? []).map(withCluster), properties: { ...run?.properties, cluster: c.cluster } };
  });
  const log: Log = { $schema: SARIF_SCHEMA, version: '2.1.0', runs };
  return `${JSON.stringify(log, null, 2)}\n`;
}

export function renderFleet(report: FleetReport, format: OutputFormat, version: string): string {
  switch (format) {
    case 'table':
      return renderText(report, false);
    case 'wide':
      return renderText(report, true);
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'yaml':
      return toYaml(report, { lineWidth: 0 });
    case 'markdown':
      return renderFleetMarkdown(report);
    case 'sarif':
      return renderFleetSarif(report, version);
  }
}
