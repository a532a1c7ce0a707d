// When the CLB calls happened: the emulator's counters polled every second, kept as per-second deltas by caller
// and action, so a bench can show whether reads are spread out or come in bursts, and the peak rate per action
// against the caller's share of the quota.
import type { ClbEmulator, StatsSnapshot } from '../sim/clb-emulator/index.js';
import { callsByCallerAndAction } from '../sim/clb-emulator/index.js';

export interface TimelinePoint {
  at: number;
  /** caller → action → calls since the previous point. */
  delta: Record<string, Record<string, number>>;
}

export const READ_ACTIONS = new Set(['DescribeLoadBalancers', 'DescribeListeners', 'DescribeTargetHealth', 'DescribeTaskStatus', 'DescribeLoadBalancersDetail', 'DescribeRewrite']);
export const isRead = (action: string): boolean => action.startsWith('Describe') || READ_ACTIONS.has(action);

export class ClbTimeline {
  readonly points: TimelinePoint[] = [];
  private last: Record<string, Record<string, number>> = {};
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly emulator: ClbEmulator,
    private readonly intervalMs = 1_000,
  ) {}

  async start(): Promise<this> {
    this.last = callsByCallerAndAction(await this.emulator.admin.stats());
    this.timer = setInterval(() => void this.poll(), this.intervalMs);
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.poll();
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const now: StatsSnapshot = await this.emulator.admin.stats();
      const cur = callsByCallerAndAction(now);
      const delta: TimelinePoint['delta'] = {};
      for (const [caller, actions] of Object.entries(cur)) {
        for (const [action, n] of Object.entries(actions)) {
          const d = n - (this.last[caller]?.[action] ?? 0);
          if (d > 0) (delta[caller] ??= {})[action] = d;
        }
      }
      this.last = cur;
      this.points.push({ at: Date.now(), delta });
    } finally {
      this.busy = false;
    }
  }

  /** Calls of `caller` matching `action` in [from, to), in buckets of `bucketMs` (index 0 starts at `from`). */
  buckets(caller: string, from: number, to: number, bucketMs: number, action: (a: string) => boolean = isRead): number[] {
    const out = new Array<number>(Math.max(1, Math.ceil((to - from) / bucketMs))).fill(0);
    for (const p of this.points) {
      if (p.at < from || p.at >= to + this.intervalMs) continue;
      const i = Math.min(out.length - 1, Math.floor((p.at - from) / bucketMs));
      for (const [a, n] of Object.entries(p.delta[caller] ?? {})) if (action(a)) out[i] = (out[i] ?? 0) + n;
    }
    return out;
  }

  /** The highest rate (calls/s) of any one action of `caller`, over sliding windows of `windowMs`. */
  peakRate(caller: string, from: number, to: number, windowMs = 5_000): { action: string; rps: number } {
    const pts = this.points.filter((p) => p.at >= from && p.at < to + this.intervalMs);
    let best = { action: 'none', rps: 0 };
    for (let i = 0; i < pts.length; i++) {
      const sums: Record<string, number> = {};
      const start = (pts[i] as TimelinePoint).at - this.intervalMs;
      for (let j = i; j < pts.length && (pts[j] as TimelinePoint).at - start <= windowMs; j++) {
        for (const [a, n] of Object.entries((pts[j] as TimelinePoint).delta[caller] ?? {})) sums[a] = (sums[a] ?? 0) + n;
      }
      for (const [a, n] of Object.entries(sums)) if (n / (windowMs / 1000) > best.rps) best = { action: a, rps: n / (windowMs / 1000) };
    }
    return best;
  }
}

/** One line per bucket: `  0:00-0:30 |#########           | 45`, scaled to the largest bucket. */
export function histogram(buckets: readonly number[], bucketMs: number, width = 40): string[] {
  const max = Math.max(1, ...buckets);
  const clock = (ms: number) => `${Math.floor(ms / 60_000)}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;
  return buckets.map((n, i) => `${clock(i * bucketMs).padStart(5)}-${clock((i + 1) * bucketMs).padEnd(5)} |${'#'.repeat(Math.round((n / max) * width)).padEnd(width)}| ${n}`);
}
