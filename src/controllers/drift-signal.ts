// Drift checks in two tiers, so that what converged CLBs cost grows slower than their number (issue 28 #6): the health
// signal twice per drift interval, the full re-read once per full cycle (docs/architecture.md "Drift checks": what each
// tier reads, why twice, the arithmetic). Each tier spreads its reads: a round earns n · elapsed / interval reads for n
// CLBs and spends them, in whole batches, on the CLBs read longest ago; a CLB not read for a whole interval is always
// due. Reads made for other reasons are spent from the same budget, up to a debt of one batch. Without the spread, CLBs
// read together came due together (1,000 CLBs: a 100 s burst at the whole read budget every interval); without the
// debt an Enforce's first interval read its CLBs twice (bench:idle, 1,000 targets: 1.43 × the budget); with a whole
// debt a cold start read nothing for a cycle, then every CLB as they came overdue together (bench:idle, 1,000 CLBs: 0
// DescribeListeners in the first interval, 1.67 × the budget in the second). Pure, but for the clocks DriftScheduler
// keeps; drift-checks.ts makes the reads.
import { MAX_LOAD_BALANCER_IDS, MAX_TARGET_HEALTH_IDS } from '../cloud/batching.js';
import type { ClbObservation } from '../model/facts.js';

/** No round of drift checks more often than this. */
export const MIN_DRIFT_ROUND_MS = 5_000;
/** Health reads per interval: see the top of this file. */
export const SIGNALS_PER_INTERVAL = 2;

export function signalIntervalMs(intervalMs: number): number {
  return intervalMs / SIGNALS_PER_INTERVAL;
}

/** How often each CLB is re-read in full: the drift interval, or longer so that `clbs` cost `fullReadsPerSecond`. */
export function fullIntervalMs(intervalMs: number, clbs: number, fullReadsPerSecond: number): number {
  return Math.max(intervalMs, Math.ceil((clbs / fullReadsPerSecond) * 1000));
}

export interface DriftClock {
  /** The last round (ms since the epoch). */
  at: number;
  /** Reads earned but not spent (a fraction of a CLB, or what a small round left), or a debt. */
  carry: number;
  /** The CLBs the last round chose (their reads are drift reads, not reads for other reasons). */
  chosen?: readonly string[];
}

/**
 * The CLBs to read again this round, oldest read first, in whole batches of `batch`, and the clock after it.
 * `readAt`: each CLB and when it was last read. Without a clock (the first round) only CLBs overdue are due.
 */
export function dueForDrift(
  readAt: ReadonlyMap<string, number>,
  intervalMs: number,
  now: number,
  clock: DriftClock | undefined,
  batch: number,
): { due: string[]; clock: DriftClock } {
  const n = readAt.size;
  const elapsed = clock ? Math.min(Math.max(0, now - clock.at), intervalMs) : 0;
  const chosen = new Set(clock?.chosen ?? []);
  // Read since the last round, not by it: spent from the budget, and not due again now.
  const elsewhere = clock ? [...readAt].filter(([id, at]) => at > clock.at && !chosen.has(id)).length : 0;
  const earned = (clock?.carry ?? 0) + (n * elapsed) / intervalMs - elsewhere;
  const oldest = [...readAt].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  const overdue = oldest.filter(([, at]) => now - at >= intervalMs).length;
  // The few beyond a whole batch wait for the next round instead of costing a call of their own, and overdue CLBs
  // fill their call with the next oldest (read a little early rather than a call for a few).
  const take = Math.min(n, Math.max(Math.ceil(overdue / batch) * batch, Math.floor(earned / batch) * batch));
  // Carried over: never more than one batch (a round that did not run for a while must not make up for it with a
  // burst), nor a debt of more than one batch (see the top of this file).
  const carry = Math.max(-batch, Math.min(earned - take, batch));
  const due = oldest.slice(0, take).map(([id]) => id);
  return { due, clock: { at: now, carry, chosen: due } };
}

/** When the next round is due: when about one batch of its n CLBs has earned its read. */
export function nextDriftRoundMs(n: number, intervalMs: number, batch: number): number {
  if (n <= 0) return intervalMs;
  return Math.min(intervalMs, Math.max(MIN_DRIFT_ROUND_MS, Math.min(intervalMs / 60, 60_000), (intervalMs * batch) / n));
}

/** The clocks of both tiers over every CLB loopguard works on (drift-checks.ts), and their count, which sets the full cycle. */
export class DriftScheduler {
  private clocks: { full?: DriftClock; signal?: DriftClock } = {};
  private clbs = 0;

  constructor(
    readonly intervalMs: number,
    private readonly fullReadsPerSecond: number,
  ) {}

  /** The full cycle now, or over `clbs` CLBs. */
  fullIntervalMs(clbs = this.clbs): number {
    return fullIntervalMs(this.intervalMs, clbs, this.fullReadsPerSecond);
  }

  /**
   * `readAt`: each CLB and when it was last read in full; `healthAt`: the CLBs the signal can check (signalled) and
   * when their health was last read, by either tier. Returns the CLBs to re-read in full this round, and those whose
   * health to read (`signal`: not those in `full`, whose full read reads their health too).
   */
  plan(readAt: ReadonlyMap<string, number>, healthAt: ReadonlyMap<string, number>, now: number): { full: string[]; signal: string[] } {
    this.clbs = readAt.size;
    const full = dueForDrift(readAt, this.fullIntervalMs(), now, this.clocks.full, MAX_LOAD_BALANCER_IDS);
    const signal = dueForDrift(healthAt, signalIntervalMs(this.intervalMs), now, this.clocks.signal, MAX_TARGET_HEALTH_IDS);
    this.clocks = { full: full.clock, signal: signal.clock };
    const inFull = new Set(full.due);
    return { full: full.due, signal: signal.due.filter((id) => !inFull.has(id)) };
  }

  /** When the drift checks of n CLBs come back: when about one batch of either tier is due. */
  roundMs(n: number): number {
    const signal = nextDriftRoundMs(n, signalIntervalMs(this.intervalMs), MAX_TARGET_HEALTH_IDS);
    return Math.min(nextDriftRoundMs(n, this.fullIntervalMs(), MAX_LOAD_BALANCER_IDS), signal);
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
  const served = (o: ClbObservation | undefined) => o?.state === 'Found' && o.clb.forward !== 0;
  return new Map([...readAt].flatMap(([id, at]): [string, number][] => (served(observer.cached(id)) ? [[id, Math.max(at, signal.readAt(id) ?? 0)]] : [])));
}
