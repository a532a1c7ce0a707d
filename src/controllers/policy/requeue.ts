// Pure: when a policy is reconciled again, from what its round found (docs/execution.md "The round", "Reporting and
// backoff"); a wait on TKE also comes back at the end of a grace period if that comes sooner.
import type { TargetOutcome } from '../../model/status.js';
import type { RoundResult } from './round.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';

/**
 * Root causes whose CLB is read again soon instead of at the drift interval, backing off while nothing changes (a CLB
 * that is gone for good stops costing a read every few seconds): TKE still builds the CLB (nothing changes on the
 * Service when it finishes: listeners appear only in the CLB API), or another policy (of another namespace) may switch
 * a shared CLB's other listeners, and nothing on this policy's Services says so (SharedClb: prevent-loopback follows
 * without a drift interval).
 */
const RECHECK_CAUSES = new Set(['ClbCreating', 'ListenersNotReady', 'ClbNotFound', 'ClbNotObserved', 'SharedClb']);
const rechecked = (a: TargetOutcome['assessment']): boolean => !!a.loadBalancerId && RECHECK_CAUSES.has(a.rootCause.id);
const RECHECK_MS = 3_000;
/** After a grace period's end: the CLB read that decides must be made after it (tkeGraceOver). */
const GRACE_SLACK_MS = 250;
const RECHECK_MAX_MS = 5 * 60_000;

export interface RequeueInput extends Pick<RoundResult, 'releases' | 'waitsOnTke' | 'graceEndsAt'> {
  /** Every target's outcome (conflicts included), not only the round's. */
  outcomes: readonly TargetOutcome[];
  /** Consecutive rounds that waited on TKE before this one. */
  streak: number;
  driftCheckIntervalMs: number;
  now: number;
  /** ×0.9–1.1, so that policies do not come back in lockstep. */
  jitter: (ms: number) => number;
}

export interface Requeue {
  outcome: ReconcileOutcome;
  /** The CLBs being built: their cached reads are dropped so the next round reads them again. */
  invalidate: string[];
  /** The waiting streak to keep (0: converged). */
  streak: number;
}

export function nextReconcile(r: RequeueInput): Requeue {
  const transient = [...r.outcomes.map((o) => o.error), ...r.releases.map((x) => x.error)].filter((e) => e && !e.permanent);
  if (transient.length > 0) {
    return { outcome: { retry: new Error(`${transient.length} target(s) failed transiently, retrying with backoff: ${transient[0]?.message ?? ''}`) }, invalidate: [], streak: r.streak };
  }
  const invalidate = r.outcomes.flatMap((o) => (rechecked(o.assessment) ? [o.assessment.loadBalancerId as string] : []));
  if (invalidate.length > 0 || r.waitsOnTke) {
    const streak = r.streak + 1;
    const wait = Math.min(RECHECK_MS * 2 ** Math.max(0, streak - 1), RECHECK_MAX_MS, r.driftCheckIntervalMs);
    // A grace period that ends sooner decides sooner: the read right after it lets loopguard act (a late switch),
    // instead of leaving health checks on a bound VIP until the backoff comes round.
    if (r.graceEndsAt !== undefined && r.graceEndsAt - r.now + GRACE_SLACK_MS < wait) {
      return { outcome: { requeueAfterMs: Math.max(0, r.graceEndsAt - r.now) + GRACE_SLACK_MS }, invalidate, streak };
    }
    return { outcome: { requeueAfterMs: r.jitter(wait) }, invalidate, streak };
  }
  // A time that decides a verdict (a record that may only be late: lost-record.ts) comes before the interval's round.
  const interval = r.jitter(r.driftCheckIntervalMs);
  const decides = r.graceEndsAt !== undefined ? Math.max(0, r.graceEndsAt - r.now) + GRACE_SLACK_MS : Infinity;
  return { outcome: { requeueAfterMs: Math.min(interval, decides) }, invalidate: [], streak: 0 };
}

/**
 * Whether a target's outcome holds until something changes, or must be planned again in its policy's next round: a
 * failure; a correction held in Audit that time decides; in Enforce, steps left (a wait for TKE); a CLB being built;
 * a shared CLB waiting for another policy; an Ingress before the TkeServiceConfig cache has synced (its plan is not
 * known yet).
 */
export function settled(o: Pick<TargetOutcome, 'error' | 'held' | 'plan' | 'assessment'>, enforcing: boolean, configsKnown: boolean): boolean {
  const left = (o.plan?.length ?? 0) > 0;
  if (o.error !== undefined || ((o.held || enforcing) && left)) return false;
  return !(o.assessment.target.kind === 'Ingress' && !configsKnown) && !rechecked(o.assessment);
}
