// The figures of bench:fleet (pure, unit-tested): from the emulator's per-caller counts of the Enforce phase and the
// times each cluster finished, the per-caller RequestLimitExceeded answers, the fractions and the final line.
import type { StatsSnapshot } from '../sim/clb-emulator/index.js';

export const QUOTA = 20;

export interface CallerCounts {
  calls: number;
  /** Answers RequestLimitExceeded (any sub-code). */
  rle: number;
}

/** Calls and RequestLimitExceeded answers of one caller, every action together. */
export function callerCounts(stats: Pick<StatsSnapshot, 'byCaller'>, caller: string): CallerCounts {
  let calls = 0;
  let rle = 0;
  for (const outcomes of Object.values(stats.byCaller[caller] ?? {})) {
    for (const [outcome, n] of Object.entries(outcomes)) {
      calls += n;
      if (outcome.startsWith('RequestLimitExceeded')) rle += n;
    }
  }
  return { calls, rle };
}

export function sumCounts(counts: readonly CallerCounts[]): CallerCounts {
  return counts.reduce((a, c) => ({ calls: a.calls + c.calls, rle: a.rle + c.rle }), { calls: 0, rle: 0 });
}

export function fraction(c: CallerCounts): number {
  return c.calls > 0 ? c.rle / c.calls : 0;
}

export interface FleetLine {
  clusters: number;
  listeners: number;
  /** Seconds from the policies applied to the last listener switched (NaN when not converged). */
  tActual: number;
  loopguards: CallerCounts;
  tke: CallerCounts;
  converged: boolean;
}

/** T_min: every ModifyListener call the fleet needs (one per listener) at the account's quota. */
export function tMin(listeners: number, quota = QUOTA): number {
  return listeners / quota;
}

/** The last line of the bench; write_ratio = T_min / T_actual (0 when not converged). */
export function fleetLine(f: FleetLine, quota = QUOTA): string {
  const ratio = f.converged && f.tActual > 0 ? tMin(f.listeners, quota) / f.tActual : 0;
  return (
    `fleet: clusters=${f.clusters} listeners=${f.listeners} quota=${quota} write_ratio=${ratio.toFixed(3)} ` +
    `rle_fraction=${fraction(f.loopguards).toFixed(4)} tke_rle_fraction=${fraction(f.tke).toFixed(4)} converged=${f.converged}`
  );
}

/** p-th percentile (nearest rank) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}
