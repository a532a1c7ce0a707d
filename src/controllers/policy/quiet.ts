// Quiet rounds: a converged policy whose inputs have not changed since its last round is not planned again.
//
// A converged policy comes back when its next batch of drift checks is due (requeue.ts): every few seconds with
// thousands of CLBs. Each such round used to gather, plan and report every target again from the caches: at 12,000
// targets about 200 MiB allocated per round, one every 5 s (bench/scale, 2026-11-26, V8's sampling heap profiler),
// which set the RSS peak right after Ready and kept a core busy for nothing. Every round of a converged policy
// re-planned the same inputs to the same outcomes.
//
// So each reconcile stamps its inputs (the informer caches' versions, a policy's counting only changes other than
// its status, the CLB observer's generation, the cluster profile, the learned capabilities, whether the
// TkeServiceConfig cache has synced). A policy's status is left out: it is what the round writes, and counting it
// made one more full round after every status change (at Ready, bench/scale). A round that converged keeps
// its stamp and the CLBs its targets are bound to. The next reconcile with the same stamp only makes the drift
// checks due (the same reads as ever, drift-signal.ts); if they find nothing new (the observer's generation is
// unchanged) it is done and comes back at the drift pace. Anything new (a drift found, an object changed, one of
// loopguard's own writes seen by an informer) makes the full round, in the same reconcile.
//
// Safety does not move: a drift is found by the same reads on the same schedule, and it is planned and corrected in
// the reconcile that found it. What only time changes (a standing Event's refresh, the OpenReports resync) is kept
// by a full round at least once per drift interval (`fullEveryMs`). A round that did not converge (waiting on
// TKE, a failure, a grace period counting, shutdown) keeps no stamp: its next round is full.
import type { LoopbackPolicyStatus } from '../../api/loopbackpolicy.js';
import type { ClusterLoopbackPolicyStatus } from '../../api/clusterloopbackpolicy.js';
import type { TargetOutcome } from '../../model/status.js';
import type { RoundResult } from './round.js';

/** A converged round's inputs and the CLBs its targets are bound to (for the drift checks). */
export interface QuietRound {
  stamp: string;
  /** When the full round that converged started (ms). */
  at: number;
  clbs: readonly string[];
  /**
   * The status the round left (written, or found already so), as `statusKey`. A status edited by someone else is not
   * an input the stamp counts, so the quiet reconcile compares it and makes the full round, which writes it back.
   */
  status: string;
  /** The status the round built, as `statusKey` (with `status`, tells whether a difference was taken as it is). */
  built: string;
}

/** Whether a round converged: nothing left to wait for, retry or resume, so the same inputs plan the same. */
export function converged(
  run: Pick<RoundResult, 'waiting' | 'graceEndsAt' | 'stopped' | 'skipped' | 'releases' | 'policyError'>,
  outcomes: readonly Pick<TargetOutcome, 'error' | 'held' | 'plan'>[],
  streak: number,
): boolean {
  if (run.waiting || run.graceEndsAt !== undefined || run.stopped.length > 0 || run.skipped > 0 || run.releases.length > 0 || run.policyError || streak > 0) return false;
  // A held target in Audit with steps left (a wait for TKE that Audit reports but never runs) may plan differently
  // as time passes: its grace period is judged against the clock, which no stamp shows.
  return outcomes.every((o) => o.error === undefined && !(o.held && (o.plan?.length ?? 0) > 0));
}

/**
 * Whether this reconcile may only make the drift checks: the last round converged on the same inputs, recently
 * enough, and the policy's status is still the one that round left.
 */
export function mayStayQuiet(
  last: QuietRound | undefined,
  now: { stamp: string; status: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined },
  at: number,
  fullEveryMs: number,
): last is QuietRound {
  return last !== undefined && last.stamp === now.stamp && at - last.at < fullEveryMs && now.status !== undefined && statusKey(now.status) === last.status;
}

/**
 * A status as compared for "is a write needed": the evaluation time alone changing is not news. Keys are sorted: the
 * cached status comes back from the apiserver in its own key order, not the order buildPolicyStatus writes, and
 * comparing those strings as they were made every converged round write an unchanged status (bench/idle: 60 writes
 * in 10 min of nothing changing).
 */
export function statusKey(s: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus): string {
  // Kept per status object: a quiet reconcile (every few seconds) compares the cached status, which the informer
  // replaces, never edits, so one serialization per status it delivers.
  let key = keys.get(s);
  if (key === undefined) {
    const sorted = (_key: string, v: unknown): unknown =>
      v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : v;
    key = JSON.stringify({ ...s, lastEvaluatedTime: undefined }, sorted);
    keys.set(s, key);
  }
  return key;
}

const keys = new WeakMap<object, string>();

/** Status equality for "is a write needed" (statusKey). */
export function sameStatus(a: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined, b: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus): boolean {
  return a !== undefined && statusKey(a) === statusKey(b);
}

/**
 * The status a quiet reconcile expects to find, as statusKey, after a full round that built `built` and found
 * `cached`. Normally what was built (written, or already there). But server-side apply leaves what another field
 * manager added (a condition, a field loopguard does not write): when the last round expected this same status and
 * the cache still shows another, the difference is someone else's and stays, so the cached status is the one to
 * expect; otherwise every reconcile of the policy would be a full round. A status someone else edited since the last
 * round matches neither: the round's write is expected to land.
 */
export function expectedStatus(built: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus, cached: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined, last: QuietRound | undefined): string {
  const key = statusKey(built);
  if (cached === undefined || last === undefined) return key;
  // Also when the last round built this same status and had already taken the cached one as it is: the drift
  // interval's full round finds the same difference, which is no reason for one more full round and write. A status
  // built differently (a verdict changed) is expected to land.
  const found = statusKey(cached);
  return last.status === key || (last.built === key && last.status === found) ? found : key;
}

/**
 * A stamp's last part: the namespaces' reports version (namespace-reports.ts), which a cluster policy's status reads
 * (the report names). Replaced with the version its own publish returned when a round converges: a stamp taken
 * before the round would count the round's own first report writes as a change and make one more full round.
 */
export function withReportsVersion(stamp: string, version: number): string {
  const cut = stamp.lastIndexOf(REPORTS);
  return `${cut < 0 ? stamp : stamp.slice(0, cut)}${REPORTS}${version}`;
}

const REPORTS = '|reports=';

/**
 * A policy as a round reads it: everything but the status (loopguard's own write) and the apiserver's bookkeeping.
 * The policies' informers count an update for the stamp only when this changes (ResilientInformer `versionOf`).
 */
export function policyInputs(p: { metadata?: { resourceVersion?: string; managedFields?: unknown }; spec?: unknown }): string {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = p.metadata ?? {};
  return JSON.stringify([metadata, p.spec]);
}
