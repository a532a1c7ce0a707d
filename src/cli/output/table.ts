// Pure: the terminal formats. `table`: one line per target, then the details (message, the plan Enforce would carry
// out, the topology alternatives) of the targets that need attention. `wide`: more columns and every target's details.
import type { Report, TargetReport } from '../report.js';
import { needsDetails, targetLabel } from '../report.js';
import { columns, coverageLine, locationCell, planCell, policyCell, printable, profileLine, summaryLine, verdictCell } from './text.js';

// The doctor shows the covering policy (or UNCOVERED) in every table; `plan` in the wide one.
function row(t: TargetReport, report: Report, wide: boolean): string[] {
  const where = report.kind === 'PlanReport' ? locationCell(t) : (t.loadBalancerId ?? '-');
  const base = [t.namespace, t.kind, t.name, where, verdictCell(t), t.rootCause, planCell(t)];
  if (wide) return [...base, t.mitigations.join(',') || '-', policyCell(t)];
  return report.kind === 'DoctorReport' ? [...base, policyCell(t)] : base;
}

function header(report: Report, wide: boolean): string[] {
  const base = ['NAMESPACE', 'KIND', 'NAME', report.kind === 'PlanReport' ? 'SOURCE' : 'CLB', 'VERDICT', 'ROOT CAUSE', 'PLAN'];
  if (wide) return [...base, 'MITIGATIONS', 'POLICY'];
  return report.kind === 'DoctorReport' ? [...base, 'POLICY'] : base;
}

export function targetDetails(t: TargetReport): string[] {
  const lines = [`${targetLabel(t)}: ${verdictCell(t)} (${t.rootCause})${t.loadBalancerId ? `, CLB ${t.loadBalancerId}` : ''}`];
  lines.push(`  ${t.message}`);
  const coverage = coverageLine(t);
  if (coverage) lines.push(`  ${coverage}`);
  if (t.condition) lines.push(`  Condition: ${t.condition}`);
  if (t.measured) lines.push(`  Measured: ${t.measured}`);
  if (t.assumed && Object.keys(t.assumed).length > 0) {
    lines.push(`  Assumed for this plan (manifests cannot say): ${Object.entries(t.assumed).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  if (t.plan.length > 0) {
    lines.push('  Enforce would:');
    t.plan.forEach((step, i) => lines.push(`    ${i + 1}. ${step}`));
  }
  if (t.planStops) lines.push(`  The plan stops there: ${t.planStops}`);
  for (const a of t.advice) lines.push(`  Note: ${a}`);
  if (t.alternatives.length > 0) {
    lines.push('  Alternatives:');
    for (const a of t.alternatives) {
      lines.push(`    - ${a.advice}`);
      lines.push(`      fixes and leaves: ${a.limits}`);
      lines.push(`      source: ${a.source}`);
    }
  }
  for (const w of t.warnings) lines.push(`  Warning: ${w}`);
  return lines.map(printable);
}

export function renderTable(report: Report, wide: boolean): string {
  const out: string[] = [profileLine(report.clusterProfile)];
  for (const a of report.account?.advice ?? []) out.push(`account: ${printable(a)}`);
  for (const n of report.notes) out.push(`note: ${printable(n)}`);
  out.push('');
  if (report.targets.length > 0) {
    out.push(columns(header(report, wide), report.targets.map((t) => row(t, report, wide))));
    const detailed = report.targets.filter((t) => wide || needsDetails(t));
    for (const t of detailed) out.push('', ...targetDetails(t));
    out.push('');
  }
  out.push(`${summaryLine(report)}${report.atRisk ? '' : '; nothing at risk'}`);
  if (report.scan) {
    const calls = Object.values(report.scan.clbCalls).reduce((a, b) => a + b, 0);
    out.push(`scanned ${report.scan.scope} (context ${report.scan.context}): ${report.scan.clbsRead} CLB${report.scan.clbsRead === 1 ? '' : 's'} read with ${calls} read-only CLB API call${calls === 1 ? '' : 's'}, nothing written`);
  }
  return `${out.join('\n')}\n`;
}
