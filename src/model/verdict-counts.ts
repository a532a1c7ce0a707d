// Pure: verdicts counted and ordered, as a policy's status, a namespace's Report and the CLI show them.
import type { Verdict, VerdictCounts } from '../api/loopbackpolicy.js';
import type { Assessment } from './assessment-result.js';

/** Most severe first, so a truncated list keeps what needs attention. */
export const SEVERITY: Record<Verdict, number> = {
  AtRisk: 0,
  Unsupported: 1,
  Conflict: 2,
  Pending: 3,
  Mitigated: 4,
  Skipped: 5,
  NotApplicable: 6,
};

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

/** How a summary names each count, in its order. */
const SUMMARY: readonly [Uncapitalize<Verdict>, string][] = [
  ['atRisk', 'at risk'], ['unsupported', 'unsupported'], ['conflict', 'in conflict'], ['pending', 'pending'], ['mitigated', 'mitigated'], ['skipped', 'skipped'], ['notApplicable', 'not applicable'],
];

/** "10 targets: 3 at risk, 5 mitigated, 2 not applicable" (zero counts omitted). */
export function countsSummary(c: VerdictCounts): string {
  const parts = SUMMARY.filter(([k]) => c[k] > 0).map(([k, label]) => `${c[k]} ${label}`);
  return `${c.total} target${c.total === 1 ? '' : 's'}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}
