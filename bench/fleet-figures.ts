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

/** Answered calls (not RequestLimitExceeded) per action, every caller of `callers` together. */
export function answeredByAction(stats: Pick<StatsSnapshot, 'byCaller'>, callers: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const caller of callers) {
    for (const [action, outcomes] of Object.entries(stats.byCaller[caller] ?? {})) {
      for (const [outcome, n] of Object.entries(outcomes)) if (!outcome.startsWith('RequestLimitExceeded')) out[action] = (out[action] ?? 0) + n;
    }
  }
  return out;
}

/**
 * The quota's own floor for what the fleet did: the quota is per action, so the calls of the busiest action, at the
 * quota, take at least this long whatever the order. T_min counts ModifyListener only; every write also needs its
 * listener read and its task polled (the same account quota, and TKE's controllers spend it too).
 */
export function busiestAction(answered: Readonly<Record<string, number>>, quota = QUOTA): { action: string; calls: number; seconds: number } {
  let best = { action: '', calls: 0 };
  for (const [action, calls] of Object.entries(answered)) if (calls > best.calls) best = { action, calls };
  return { ...best, seconds: best.calls / quota };
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

/** RequestLimitExceeded answers per action of `callers`, every outcome summed (for a per-second timeline). */
export function rleByAction(stats: Pick<StatsSnapshot, 'byCaller'>, callers: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const caller of callers) {
    for (const [action, outcomes] of Object.entries(stats.byCaller[caller] ?? {})) {
      for (const [outcome, n] of Object.entries(outcomes)) if (outcome.startsWith('RequestLimitExceeded')) out[action] = (out[action] ?? 0) + n;
    }
  }
  return out;
}

/** Short names for the timeline: the capitals of the action (DescribeListeners → DL). */
const short = (action: string) => action.replace(/[a-z]/g, '');

/**
 * One line per second where anything was throttled: `t+4s 7 (DL 5, DTS 2)`, from cumulative snapshots taken about a
 * second apart (each with its time in seconds since the policies were applied).
 */
export function rleTimeline(points: ReadonlyArray<{ at: number; rle: Record<string, number> }>): string[] {
  const lines: string[] = [];
  for (let i = 1; i < points.length; i++) {
    const prev = (points[i - 1] as (typeof points)[number]).rle;
    const cur = points[i] as (typeof points)[number];
    const delta = Object.entries(cur.rle).flatMap(([a, n]) => (n - (prev[a] ?? 0) > 0 ? [[a, n - (prev[a] ?? 0)] as const] : []));
    const total = delta.reduce((s, [, n]) => s + n, 0);
    if (total > 0) lines.push(`t+${cur.at.toFixed(0)}s ${total} (${delta.map(([a, n]) => `${short(a)} ${n}`).join(', ')})`);
  }
  return lines;
}
