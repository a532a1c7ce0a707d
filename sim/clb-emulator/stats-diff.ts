import type { StatsSnapshot } from './admin-types.js';

/**
 * Counters of `later` minus those of `earlier` (a mark taken before), zero entries dropped: what happened in
 * between. Pure and server-free so the admin route and clients that hold two snapshots can both use it. Counters
 * only grow between resets, so a negative difference means a reset happened in between; it is kept visible
 * rather than clamped.
 */
export function diffStats(later: StatsSnapshot, earlier: StatsSnapshot): StatsSnapshot {
  const errors: StatsSnapshot['errors'] = {};
  for (const action of keys(later.errors, earlier.errors)) {
    const d = diffCounter(later.errors[action] ?? {}, earlier.errors[action] ?? {});
    if (Object.keys(d).length > 0) errors[action] = d;
  }
  const byCaller: StatsSnapshot['byCaller'] = {};
  for (const caller of keys(later.byCaller, earlier.byCaller)) {
    const l = later.byCaller[caller] ?? {};
    const e = earlier.byCaller[caller] ?? {};
    for (const action of keys(l, e)) {
      const d = diffCounter(l[action] ?? {}, e[action] ?? {});
      if (Object.keys(d).length > 0) (byCaller[caller] ??= {})[action] = d;
    }
  }
  return {
    calls: diffCounter(later.calls, earlier.calls),
    byCaller,
    throttled: diffCounter(later.throttled, earlier.throttled),
    errors,
    listenerWrites: diffCounter(later.listenerWrites, earlier.listenerWrites),
    ruleWrites: diffCounter(later.ruleWrites, earlier.ruleWrites),
    tasks: {
      started: later.tasks.started - earlier.tasks.started,
      succeeded: later.tasks.succeeded - earlier.tasks.succeeded,
      failed: later.tasks.failed - earlier.tasks.failed,
    },
  };
}

/** Calls per caller and action, all outcomes summed: `{loopguard: {DescribeListeners: 40, …}, tke: {…}}`. */
export function callsByCallerAndAction(stats: Pick<StatsSnapshot, 'byCaller'>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [caller, actions] of Object.entries(stats.byCaller)) {
    for (const [action, outcomes] of Object.entries(actions)) {
      (out[caller] ??= {})[action] = Object.values(outcomes).reduce((a, b) => a + b, 0);
    }
  }
  return out;
}

function keys(a: object, b: object): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])];
}

function diffCounter(later: Record<string, number>, earlier: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys(later, earlier)) {
    const d = (later[k] ?? 0) - (earlier[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}
