// Which call proves that an async write has landed (pure; tencent-clb-client.ts does the I/O). The CLB quota is per
// action (tencent-cloud.md §3 "Rate limits"): a write's completion can be shown by `DescribeTaskStatus` (Status 0) or
// by a `DescribeListeners` read of the written listener that shows the written fields, and the two actions have
// separate quotas. Sending every proof to DescribeTaskStatus made it the account's busiest action (bench:fleet: its
// calls alone needed 31–35 s of the quota for 18 s of writes), so a proof goes to the reads when the polls have no room
// (chooseProof says when).
//
// When does a read prove completion? The API does not say when a written value becomes visible (docs/tencent-cloud.md
// §3 "When a write shows"). Two worlds:
// - `atCompletion` (the emulator's reading, sim/README.md assumption 2): a read shows the new value only once the task
//   has succeeded, so a read that shows it proves the write;
// - `early`: the value shows while the task still runs (it may still fail): a read that shows it proves nothing about
//   the task, and `prevent-loopback` after such a "proof" could make kube-proxy bind the VIP while health checks still
//   come from it.
// loopguard does not assume either. It starts `unknown`: a read that shows the value is confirmed by a
// DescribeTaskStatus of the same task before the write counts as done (no cheaper than today, and right in both
// worlds). Status 0 then is one confirmation of `atCompletion`; Status 2 (still running: the value showed early) or 1
// (failed after showing it) settles `early` for good, and every later proof is a DescribeTaskStatus. After
// CONFIRMATIONS confirmations with none early, reads prove on their own. In an `early` world that escapes the
// confirmations (every confirmed task had ended by the time its confirmation was answered) a later read can still
// come before its task ends; that read was answered after the task had been accepted and the field written, and the
// task's remaining time is then below the health check's own detection time (2–10 failed probes 2–300 s apart, SDK
// HealthCheck), so no backend is marked down by it; a task that fails after showing the value is put right by the
// drift check like any other source put back. This is the conservative choice available without a documented answer.

export type ProofAction = 'DescribeTaskStatus' | 'DescribeListeners';
export type Visibility = 'unknown' | 'atCompletion' | 'early';

/**
 * Reads confirmed by DescribeTaskStatus, all at completion, before reads prove on their own. Five extra polls per process
 * is the whole price in the emulator's world; in an early one the first confirmation already finds the task running
 * whenever tasks outlast a round trip (the real CLB's take about 0.75 s, docs/execution.md "Large CLBs").
 */
export const CONFIRMATIONS = 5;

/** An action's load now (ActionThrottle.load). */
export interface ActionLoad {
  /** The rate calls are sent at now, req/s. */
  rate: number;
  /** Calls waiting for their turn. */
  waiting: number;
  /** Calls in flight. */
  running: number;
}

/** Calls per second the action can take beyond those queued on it now (negative: a backlog). */
export function room(load: ActionLoad): number {
  return load.rate - load.waiting - load.running;
}

export interface ProofContext {
  /** The write shows in a listener read (a listener or rule HealthCheck, KeepaliveEnable); not an attribute write. */
  readable: boolean;
  /** The last read of this write did not show it: running or failed, and only DescribeTaskStatus tells which. */
  lastReadMissed: boolean;
  visibility: Visibility;
}

/**
 * The action of the next proof of one write: DescribeTaskStatus while it has room for one more call within the second
 * and the account has not cut it below DescribeListeners; otherwise DescribeListeners when the write can be read,
 * reads can prove (not an `early` world), the last read did not miss, and it has more room; DescribeTaskStatus again
 * otherwise (also on a tie: it is the one proof that is right in every world).
 *
 * Why the task first: loopguard sees only its own calls. DescribeListeners is also what TKE's own syncs read in the
 * same cluster (about 45 % of that action's calls in bench:l4), so a read that *looks* roomier can still be the
 * account's busiest action; the polls carry only loopguard's own writes. A poll that would queue, or an action the
 * account has refused (a rate cut below the reads'), is evidence that others poll too (a fleet on one account), and
 * then the reads take the proofs.
 */
export function chooseProof(load: Readonly<Record<ProofAction, ActionLoad>>, ctx: ProofContext): ProofAction {
  if (!ctx.readable || ctx.lastReadMissed || ctx.visibility === 'early') return 'DescribeTaskStatus';
  const tasks = load.DescribeTaskStatus;
  const reads = load.DescribeListeners;
  if (room(tasks) >= 1 && tasks.rate >= reads.rate) return 'DescribeTaskStatus';
  return room(reads) > room(tasks) ? 'DescribeListeners' : 'DescribeTaskStatus';
}

export interface VisibilityState {
  visibility: Visibility;
  /** Confirmations so far, all at completion. */
  confirmed: number;
}

export const INITIAL_VISIBILITY: Readonly<VisibilityState> = Object.freeze({ visibility: 'unknown', confirmed: 0 });

/** Whether a read that shows the written value needs DescribeTaskStatus to confirm it before the write counts as done. */
export function needsConfirmation(state: VisibilityState): boolean {
  return state.visibility !== 'atCompletion';
}

/**
 * A read showed the written value and DescribeTaskStatus, asked after that read was answered, says `status`
 * (0 succeeded, 1 failed, 2 running). 0: one more confirmation of `atCompletion`; 1 or 2: the value showed before the
 * task ended, `early` for good.
 */
export function onConfirmation(state: VisibilityState, status: number): VisibilityState {
  if (state.visibility === 'early') return state;
  if (status === 1 || status === 2) return { visibility: 'early', confirmed: state.confirmed };
  if (status !== 0) return state;
  const confirmed = state.confirmed + 1;
  return { visibility: confirmed >= CONFIRMATIONS ? 'atCompletion' : state.visibility, confirmed };
}

/**
 * Whether `read` (the health check, or the listener fields, as a listener read returned them) shows every field of
 * `written`. Fields the read leaves out do not match: the write is not shown.
 */
export function shows<T extends object>(read: T | undefined, written: T): boolean {
  if (!read) return false;
  const fields = read as Record<string, unknown>;
  return Object.entries(written).every(([k, v]) => fields[k] === v);
}
