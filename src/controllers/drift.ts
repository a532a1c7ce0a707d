// When converged CLBs are read again (the drift check), spread evenly over the interval. Re-reading every CLB whose
// last read is older than the interval would read them all at once: a policy's CLBs are first read together, so
// they all come due together, and 1,000 CLBs became a 100 s burst at the whole read budget every interval (and
// stayed one). Instead each pass of the drift checks earns reads in proportion to the time since its last round,
// n · elapsed / interval for its n CLBs, and spends them on the CLBs read longest ago. Over any interval every CLB
// is read once (oldest first is a round-robin), at a steady n / interval per second, in batches of about
// DRIFT_BATCH (one DescribeLoadBalancers call), and the first interval already spreads the reads a cold start
// bunched together. A CLB not read for a whole interval is always due, whatever the reads earned.
// Reads made for other reasons since the last round (the read that decides after TKE's grace period, a CLB being
// built, a write's verification) are spent from the same budget and make their CLBs fresh: without that, the first
// interval after an Enforce read its CLBs twice (bench:idle, 1,000 targets: 1.43 × the budget).
// Pure: DriftScheduler (drift-signal.ts) keeps the clock per tier (full re-reads, health signal) and drift-checks.ts
// supplies the read times.

/**
 * CLBs per DescribeLoadBalancers call. The passes are timed so that about this many are due
 * (nextDriftRoundMs); a round that events trigger sooner reads what it has earned, which may be fewer.
 */
export const DRIFT_BATCH = 20;
/** No pass of drift checks more often than this. */
export const MIN_DRIFT_ROUND_MS = 5_000;

export interface DriftClock {
  /** The last round that took part in drift checks (ms since the epoch). */
  at: number;
  /** Reads earned but not spent (a fraction of a CLB, or what a small round left). */
  carry: number;
  /** The CLBs the last round chose (their reads are drift reads, not reads for other reasons). */
  chosen?: readonly string[];
}

/**
 * How the reads are grouped: `batch` ids per call (the carry never exceeds one); `wholeBatches`: read in whole
 * batches; `maxDebt`: the most reads made for other reasons are repaid (default n, one interval's reads).
 */
export interface DriftBatching {
  batch?: number;
  wholeBatches?: boolean;
  maxDebt?: number;
}

/**
 * The CLBs to read again this round, oldest read first, and the clock after it. `readAt`: each cached CLB
 * and when it was last read. Without a clock (the first pass) only CLBs overdue are due.
 */
export function dueForDrift(
  readAt: ReadonlyMap<string, number>,
  intervalMs: number,
  now: number,
  clock: DriftClock | undefined,
  { batch = DRIFT_BATCH, wholeBatches = false, maxDebt }: DriftBatching = {},
): { due: string[]; clock: DriftClock } {
  const n = readAt.size;
  const elapsed = clock ? Math.min(Math.max(0, now - clock.at), intervalMs) : 0;
  const chosen = new Set(clock?.chosen ?? []);
  // Read since the last round, not by it: spent from the budget, and not due again now.
  const elsewhere = clock ? [...readAt].filter(([id, at]) => at > clock.at && !chosen.has(id)).length : 0;
  const earned = (clock?.carry ?? 0) + (n * elapsed) / intervalMs - elsewhere;
  const oldest = [...readAt].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  const overdue = oldest.filter(([, at]) => now - at >= intervalMs).length;
  // wholeBatches: the few beyond a whole batch wait for the next round instead of costing a call of their own, and
  // overdue CLBs fill their call with the next oldest (read a little early rather than a call for a few).
  const take = wholeBatches
    ? Math.min(n, Math.max(Math.ceil(overdue / batch) * batch, Math.floor(earned / batch) * batch))
    : Math.min(n, Math.max(overdue, Math.floor(earned)));
  // What is left carries over, but never more than one batch: a pass that did not run for a while must not
  // make up for it with a burst (what became overdue meanwhile is read anyway).
  // Overspent (other reads, or overdue CLBs read beyond what was earned): a debt of up to one interval's reads, repaid
  // before reading ahead again; overdue CLBs are read whatever the debt, so none goes unread for an interval.
  const carry = Math.max(-(maxDebt ?? n), Math.min(earned - take, batch));
  const due = oldest.slice(0, take).map(([id]) => id);
  return { due, clock: { at: now, carry, chosen: due } };
}

/** When the next pass is due: when about one batch of its n CLBs has earned its read. */
export function nextDriftRoundMs(n: number, intervalMs: number, batch = DRIFT_BATCH): number {
  if (n <= 0) return intervalMs;
  return Math.min(intervalMs, Math.max(MIN_DRIFT_ROUND_MS, Math.min(intervalMs / 60, 60_000), (intervalMs * batch) / n));
}
