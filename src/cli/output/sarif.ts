// Pure: SARIF 2.1.0 for code scanning (GitHub, GitLab): one result per target at risk (error; warning when the verdict
// depends on CLB facts the manifests lack) or unsupported (note), located at the manifest line that declares it.
// One rule per root cause, described by the catalogue (src/model/root-causes.ts). Validated against the SARIF 2.1.0
// JSON schema in test/unit/cli/sarif.test.ts.
import type { Log, ReportingDescriptor, Result } from 'sarif';
import { ROOT_CAUSES, type RootCauseId } from '../../model/root-causes.js';
import { alternativeText } from '../../model/topology.js';
import type { Report, TargetReport } from '../report.js';
import { targetLabel } from '../report.js';
import { coverageLine, printable } from './text.js';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
const DOCS = 'docs/diagnosis.md';

function levelOf(t: TargetReport): Result.level | undefined {
  if (t.verdict === 'AtRisk') return t.condition ? 'warning' : 'error';
  if (t.verdict === 'Unsupported') return 'note';
  return undefined;
}

function rule(id: string): ReportingDescriptor {
  const known = ROOT_CAUSES[id as RootCauseId];
  return {
    id,
    name: id,
    shortDescription: { text: known ? known.summary : id },
    fullDescription: { text: `${known ? `${known.verdict}: ${known.summary}. ` : ''}Every rule and its source: ${DOCS}, section 9 (root-cause catalogue).` },
    defaultConfiguration: { level: known?.verdict === 'AtRisk' ? 'error' : 'note' },
    properties: { tags: ['tencent-cloud', 'clb', 'loopback', known?.verdict ?? 'unknown'] },
  };
}

function message(t: TargetReport): string {
  const parts = [`${targetLabel(t)}: ${t.message}`];
  const coverage = coverageLine(t);
  if (coverage) parts.push(`${coverage}.`);
  if (t.condition) parts.push(`Condition: ${t.condition}.`);
  if (t.plan.length > 0) parts.push(`loopguard Enforce would: ${t.plan.map((s, i) => `(${i + 1}) ${s}`).join(' ')}`);
  if (t.alternatives.length > 0) parts.push(`Alternatives: ${t.alternatives.map((a) => a.advice).join('; ')}.`);
  return printable(parts.join(' '));
}

/** A path as a SARIF relative URI reference (forward slashes, each segment percent-encoded). */
export function uriReference(path: string): string {
  return path.split(/[\\/]/).map(encodeURIComponent).join('/');
}

export function renderSarif(report: Report, version: string): string {
  const flagged = report.targets.flatMap((t) => {
    const level = levelOf(t);
    return level ? [{ t, level }] : [];
  });
  const ruleIds = [...new Set(flagged.map((f) => f.t.rootCause))].sort();
  const results: Result[] = flagged.map(({ t, level }) => ({
    ruleId: t.rootCause,
    ruleIndex: ruleIds.indexOf(t.rootCause),
    level,
    message: { text: message(t) },
    ...(t.source
      ? {
          locations: [
            {
              physicalLocation: { artifactLocation: { uri: uriReference(t.source.file), uriBaseId: '%SRCROOT%' }, region: { startLine: t.source.line } },
              logicalLocations: [{ name: t.name, fullyQualifiedName: `${t.namespace}/${t.kind}/${t.name}`, kind: 'resource' }],
            },
          ],
        }
      : {}),
    partialFingerprints: { 'loopguardTarget/v1': `${t.kind}/${t.namespace}/${t.name}/${t.rootCause}` },
    properties: {
      verdict: t.verdict,
      ...(t.policy ? { policy: t.policy } : {}),
      ...(t.uncovered ? { uncovered: true } : {}),
      ...(t.condition ? { condition: t.condition } : {}),
      plan: t.plan,
      alternatives: t.alternatives.map(alternativeText),
    },
  }));
  const log: Log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'loopguard', semanticVersion: version, version, rules: ruleIds.map(rule) } },
        originalUriBaseIds: { '%SRCROOT%': { description: { text: 'the directory loopguard plan ran in' } } },
        results,
        properties: { clusterProfile: report.clusterProfile, counts: report.counts, ...(report.uncovered !== undefined ? { uncovered: report.uncovered } : {}), notes: report.notes },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
