// Pure: verdicts counted and ordered, as a policy's status, a namespace's Report and the CLI show them.
import type { Verdict, VerdictCounts } from '../api/loopbackpolicy.js';
import type { Assessment } from './assessment-result.js';

/** Most severe first (so a truncated list keeps what needs attention), with how a summary names each count. */
const ORDER: Readonly<Record<Verdict, string>> = {
  AtRisk: 'at risk',
  Unsupported: 'unsupported',
  Conflict: 'in conflict',
  Pending: 'pending',
  Mitigated: 'mitigated',
  Skipped: 'skipped',
  NotApplicable: 'not applicable',
};
const VERDICTS = Object.keys(ORDER) as Verdict[];
export const SEVERITY = Object.fromEntries(VERDICTS.map((v, i) => [v, i])) as Record<Verdict, number>;

/** A verdict's count in VerdictCounts: its name, lower camel case (`AtRisk` → `atRisk`; the type checks each has one). */
const countKey = (v: Verdict) => `${v.charAt(0).toLowerCase()}${v.slice(1)}` as Uncapitalize<Verdict>;

export function countVerdicts(assessments: readonly Pick<Assessment, 'verdict'>[]): VerdictCounts {
  const counts: VerdictCounts = { atRisk: 0, mitigated: 0, notApplicable: 0, unsupported: 0, pending: 0, skipped: 0, conflict: 0, total: 0 };
  for (const a of assessments) {
    counts[countKey(a.verdict)]++;
    counts.total++;
  }
  return counts;
}

/** "10 targets: 3 at risk, 5 mitigated, 2 not applicable" (zero counts omitted). */
export function countsSummary(c: VerdictCounts): string {
  const parts = VERDICTS.filter((v) => c[countKey(v)] > 0).map((v) => `${c[countKey(v)]} ${ORDER[v]}`);
  return `${c.total} target${c.total === 1 ? '' : 's'}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}
