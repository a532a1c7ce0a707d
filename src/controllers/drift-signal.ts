// Drift checks in two tiers, so that what converged CLBs cost grows slower than their number (issue 28 #6).
// - The signal: every converged CLB's backend health, 30 CLBs per DescribeTargetHealth call (docs/tencent-cloud.md
//   §3), twice per drift interval. A change that can mean drift (src/cloud/health-summary.ts) sends that CLB to the
//   full re-read in the same round. Twice, because the CLB marks a backend Dead only after UnHealthNum failed probes
//   (3 × 5 s by default, §3 HealthCheck): read once per interval, a source put back on the VIP right after its CLB's
//   signal would show Dead only one interval later, and be corrected after more than one interval.
// - The full re-read (DescribeLoadBalancers + DescribeListeners per CLB + DescribeTargetHealth, clb-observer.ts) of
//   every CLB once per full cycle, for what health cannot show. The cycle is the drift interval while that costs
//   at most --drift-full-read-share (20 %) of --cloud-rate-limit in DescribeListeners (one call per CLB); with more
//   CLBs it stretches so that the full reads stay at that pace: 3,000 CLBs at the defaults (5 min, 10/s, 20 %) are
//   each re-read every 3,000 / 2 per s = 25 min instead of every 5 min. With the signal's DescribeTargetHealth
//   (N / 30 calls per half interval: 0.67/s at 3,000 CLBs, 0.77/s with the full reads') every action stays within a quarter of loopguard's share,
//   the rest left for new work (docs/architecture.md "Drift checks" has the arithmetic).
// Both tiers keep the spread schedule of drift.ts (reads earned in proportion to time, oldest first, debt for reads
// made for other reasons). Pure, but for the clocks DriftScheduler keeps; drift-checks.ts makes the reads.
import { MAX_LOAD_BALANCER_IDS, MAX_TARGET_HEALTH_IDS } from '../cloud/batching.js';
import type { ClbObservation } from '../model/facts.js';
import { dueForDrift, nextDriftRoundMs, type DriftClock } from './drift.js';

/** Health reads per interval: see the top of this file. */
export const SIGNALS_PER_INTERVAL = 2;

export function signalIntervalMs(intervalMs: number): number {
  return intervalMs / SIGNALS_PER_INTERVAL;
}

/** How often each CLB is re-read in full: the drift interval, or longer so that `clbs` cost `fullReadsPerSecond`. */
export function fullIntervalMs(intervalMs: number, clbs: number, fullReadsPerSecond: number): number {
  return Math.max(intervalMs, Math.ceil((clbs / fullReadsPerSecond) * 1000));
}

export interface TierClocks {
  full?: DriftClock;
  signal?: DriftClock;
}

export interface DriftTiersInput {
  /** Each cached CLB of the policy and when it was last read in full. */
  readAt: ReadonlyMap<string, number>;
  /** The CLBs the signal can check (found, not classic) and when their health was last read, by either tier. */
  healthAt: ReadonlyMap<string, number>;
  intervalMs: number;
  fullIntervalMs: number;
  now: number;
  clocks: TierClocks;
}

export interface DriftTiersPlan {
  /** CLBs to re-read in full this round, in whole batches unless overdue (not in `signal`: a full read reads their health too). */
  full: string[];
  /** CLBs whose health to read this round, in whole DescribeTargetHealth batches unless overdue. */
  signal: string[];
  clocks: TierClocks;
}

export function planDriftChecks(i: DriftTiersInput): DriftTiersPlan {
  // Whole batches for both: rounds come every few seconds for the signal, and a round's few full reads would each
  // cost a DescribeLoadBalancers and a DescribeTargetHealth call of their own. A debt of one batch at most: when a
  // cycle is longer than the interval, repaying a cold start's reads in full (every CLB read within a minute or two)
  // would read nothing for a cycle and then every CLB at once as they came overdue together (bench:idle, 1,000 CLBs:
  // 0 DescribeListeners in the first interval, 1,001 = 1.67 × the budget in the second). Read at the pace instead,
  // oldest first, and the first cycle spreads them.
  const full = dueForDrift(i.readAt, i.fullIntervalMs, i.now, i.clocks.full, { batch: MAX_LOAD_BALANCER_IDS, wholeBatches: true, maxDebt: MAX_LOAD_BALANCER_IDS });
  const signal = dueForDrift(i.healthAt, signalIntervalMs(i.intervalMs), i.now, i.clocks.signal, { batch: MAX_TARGET_HEALTH_IDS, wholeBatches: true, maxDebt: MAX_TARGET_HEALTH_IDS });
  const inFull = new Set(full.due);
  return { full: full.due, signal: signal.due.filter((id) => !inFull.has(id)), clocks: { full: full.clock, signal: signal.clock } };
}

/** When the drift checks of n CLBs come back: when about one batch of either tier is due. */
export function driftRoundMs(n: number, intervalMs: number, fullMs: number): number {
  return Math.min(nextDriftRoundMs(n, fullMs), nextDriftRoundMs(n, signalIntervalMs(intervalMs), MAX_TARGET_HEALTH_IDS));
}

/** The clocks of both tiers over every CLB loopguard works on (drift-checks.ts), and their count, which sets the full cycle. */
export class DriftScheduler {
  private clocks: TierClocks = {};
  private clbs = 0;

  constructor(
    readonly intervalMs: number,
    private readonly fullReadsPerSecond: number,
  ) {}

  /** The full cycle now. */
  fullIntervalMs(): number {
    return fullIntervalMs(this.intervalMs, this.clbs, this.fullReadsPerSecond);
  }

  plan(readAt: ReadonlyMap<string, number>, healthAt: ReadonlyMap<string, number>, now: number): DriftTiersPlan {
    this.clbs = readAt.size;
    const plan = planDriftChecks({ readAt, healthAt, intervalMs: this.intervalMs, fullIntervalMs: this.fullIntervalMs(), now, clocks: this.clocks });
    this.clocks = plan.clocks;
    return plan;
  }

  roundMs(n: number): number {
    return driftRoundMs(n, this.intervalMs, this.fullIntervalMs());
  }
}

/**
 * The CLBs of `readAt` the signal can check, and when their health was last read (a full read reads it too): found
 * CLBs that are not classic ones (DescribeTargetHealth does not serve those, §3; they get full reads only).
 */
export function signalled(
  readAt: ReadonlyMap<string, number>,
  observer: { cached(id: string): ClbObservation | undefined },
  signal: { readAt(id: string): number | undefined },
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id, at] of readAt) {
    const o = observer.cached(id);
    if (o?.state === 'Found' && o.clb.forward !== 0) out.set(id, Math.max(at, signal.readAt(id) ?? 0));
  }
  return out;
}
