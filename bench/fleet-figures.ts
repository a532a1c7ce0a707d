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
  /** The busiest action (busiestAction): the quota's floor for what the fleet did, T_floor = its calls / quota. */
  floor: { action: string; seconds: number };
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

/**
 * The last line of the bench; write_ratio = T_min / T_actual, floor_ratio = T_floor / T_actual (how close the fleet came
 * to the quota of its busiest action, floor_action); both 0 when not converged.
 */
export function fleetLine(f: FleetLine, quota = QUOTA): string {
  const done = f.converged && f.tActual > 0;
  const ratio = done ? tMin(f.listeners, quota) / f.tActual : 0;
  const floorRatio = done ? f.floor.seconds / f.tActual : 0;
  return (
    `fleet: clusters=${f.clusters} listeners=${f.listeners} quota=${quota} write_ratio=${ratio.toFixed(3)} ` +
    `rle_fraction=${fraction(f.loopguards).toFixed(4)} tke_rle_fraction=${fraction(f.tke).toFixed(4)} converged=${f.converged} ` +
    `floor_action=${f.floor.action || 'none'} floor_ratio=${floorRatio.toFixed(3)}`
  );
}

/** p-th percentile (nearest rank) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** Calls and RequestLimitExceeded answers per action of `callers` together (for the per-second timelines). */
export function countsByAction(stats: Pick<StatsSnapshot, 'byCaller'>, callers: readonly string[]): Record<string, CallerCounts> {
  const out: Record<string, CallerCounts> = {};
  for (const caller of callers) {
    for (const [action, outcomes] of Object.entries(stats.byCaller[caller] ?? {})) {
      const c = (out[action] ??= { calls: 0, rle: 0 });
      for (const [outcome, n] of Object.entries(outcomes)) {
        c.calls += n;
        if (outcome.startsWith('RequestLimitExceeded')) c.rle += n;
      }
    }
  }
  return out;
}

/** Short names for the timeline: the capitals of the action (DescribeListeners → DL). */
const short = (action: string) => action.replace(/[a-z]/g, '');

/** A cumulative snapshot, `at` seconds after the policies were applied. */
export interface TimelinePoint {
  at: number;
  counts: Record<string, CallerCounts>;
}

/** Per action, what happened between two cumulative snapshots. */
function deltas(prev: TimelinePoint, cur: TimelinePoint): Record<string, CallerCounts> {
  const out: Record<string, CallerCounts> = {};
  for (const [a, c] of Object.entries(cur.counts)) {
    const p = prev.counts[a] ?? { calls: 0, rle: 0 };
    if (c.calls > p.calls) out[a] = { calls: c.calls - p.calls, rle: c.rle - p.rle };
  }
  return out;
}

/**
 * One line per second where anything was throttled: `t+4s 7 (DL 5, DTS 2)`, from cumulative snapshots taken about a
 * second apart.
 */
export function rleTimeline(points: readonly TimelinePoint[]): string[] {
  const lines: string[] = [];
  for (let i = 1; i < points.length; i++) {
    const cur = points[i] as TimelinePoint;
    const delta = Object.entries(deltas(points[i - 1] as TimelinePoint, cur)).filter(([, c]) => c.rle > 0);
    const total = delta.reduce((s, [, c]) => s + c.rle, 0);
    if (total > 0) lines.push(`t+${cur.at.toFixed(0)}s ${total} (${delta.map(([a, c]) => `${short(a)} ${c.rle}`).join(', ')})`);
  }
  return lines;
}

/**
 * Who asked for a throttled action in the second it was throttled: `t+2s DL 27 asked (loopguards 9, TKE 18)` for
 * every second and action with a RequestLimitExceeded answer to anyone, and the seconds in which TKE's controllers
 * alone asked more than the quota (throttling there is TKE's own, whatever the loopguards do). `lg` and `tke` are
 * snapshots taken together.
 */
export function demandTimeline(lg: readonly TimelinePoint[], tke: readonly TimelinePoint[], quota = QUOTA): { lines: string[]; tkeOverQuota: { seconds: number; tkeRle: number } } {
  const lines: string[] = [];
  const tkeOverQuota = { seconds: 0, tkeRle: 0 };
  for (let i = 1; i < Math.min(lg.length, tke.length); i++) {
    const dl = deltas(lg[i - 1] as TimelinePoint, lg[i] as TimelinePoint);
    const dt = deltas(tke[i - 1] as TimelinePoint, tke[i] as TimelinePoint);
    const seconds = ((lg[i] as TimelinePoint).at - (lg[i - 1] as TimelinePoint).at) || 1;
    const parts: string[] = [];
    let over = false;
    for (const a of new Set([...Object.keys(dl), ...Object.keys(dt)])) {
      const l = dl[a] ?? { calls: 0, rle: 0 };
      const t = dt[a] ?? { calls: 0, rle: 0 };
      if (t.calls / seconds > quota) {
        over = true;
        tkeOverQuota.tkeRle += t.rle;
      }
      if (l.rle + t.rle > 0) parts.push(`${short(a)} ${l.calls + t.calls} asked (loopguards ${l.calls}, TKE ${t.calls})`);
    }
    // A second counts once, however many of its actions TKE alone asked more than the quota of.
    if (over) tkeOverQuota.seconds += 1;
    if (parts.length > 0) lines.push(`t+${(lg[i] as TimelinePoint).at.toFixed(0)}s ${parts.join(', ')}`);
  }
  return { lines, tkeOverQuota };
}
