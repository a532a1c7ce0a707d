// Pure helpers shared by the text formats: aligned columns (kubectl's layout), the profile line, the summary line,
// and terminal-safe text (values may come from annotations anyone with `edit` on a target can write).
import type { ClusterProfileStatus } from '../../api/loopbackpolicy.js';
import { countsSummary } from '../../model/verdict-counts.js';
import type { Report, TargetReport } from '../report.js';

/** Control characters would garble a terminal or a PR comment: replaced, as in the policy status. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
}

/** Columns separated by three spaces, each as wide as its widest cell. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((r) => r.map(printable));
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('   ').trimEnd()).join('\n');
}

export function profileLine(p: ClusterProfileStatus): string {
  const version = p.kubeProxyVersion ? ` ${p.kubeProxyVersion}` : '';
  const upgrade = p.upgradeTo ? `, upgrade to ${p.upgradeTo}` : '';
  return `cluster profile: kube-proxy ${p.kubeProxyMode}${version} (from ${p.source}); prevent-loopback supported: ${p.preventLoopbackSupported}${upgrade}; VIP binding: ${p.vipBinding ?? 'Unknown'}`;
}

/** "4 targets: 2 at risk, 1 skipped, 1 not applicable", then how many at-risk targets no policy covers (doctor). */
export function summaryLine(report: Report): string {
  if (report.counts.total === 0) return 'no Service or Ingress selected';
  const n = report.uncovered ?? 0;
  return `${countsSummary(report.counts)}${n > 0 ? `; ${n} at risk and uncovered (no LoopbackPolicy or ClusterLoopbackPolicy selects ${n === 1 ? 'it' : 'them'})` : ''}`;
}

/** The policy covering the target, or UNCOVERED (at risk, no policy), or (defaults). */
export function policyCell(t: TargetReport): string {
  return t.policy ?? (t.uncovered ? 'UNCOVERED' : '(defaults)');
}

/** The details' line on coverage (doctor): which policy manages the target, or that none covers it. */
export function coverageLine(t: TargetReport): string | undefined {
  if (t.uncovered) return 'Uncovered: no LoopbackPolicy or ClusterLoopbackPolicy selects it, so nothing will mitigate it until one does';
  return t.policy ? `Covered by: ${t.policy}` : undefined;
}

/** The verdict as a cell: a conditional verdict carries a question mark (its condition is in the details). */
export function verdictCell(t: TargetReport): string {
  return t.condition ? `${t.verdict}?` : t.verdict;
}

export function planCell(t: TargetReport): string {
  if (t.plan.length === 0) return t.planStops ? 'blocked' : '-';
  return `${t.plan.length} step${t.plan.length === 1 ? '' : 's'}${t.planStops ? ', then blocked' : ''}`;
}

export function locationCell(t: TargetReport): string {
  return t.source ? `${t.source.file}:${t.source.line}` : '-';
}
