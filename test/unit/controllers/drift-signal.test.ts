// Drift checks in two tiers (src/controllers/drift-signal.ts): the full cycle's length, simulated rounds of both tiers
// over many intervals (what each costs, how stale anything gets), and the escalation from the health signal.
import { describe, expect, it } from '@jest/globals';
import { MAX_TARGET_HEALTH_IDS } from '../../../src/cloud/batching.js';
import { DEFAULTS } from '../../../src/runtime/config.js';
import { DriftScheduler, dueForDrift, fullIntervalMs, signalIntervalMs, signalled } from '../../../src/controllers/drift-signal.js';

const S = 1_000;
const MIN = 60 * S;
/** loopguard's default share (--cloud-rate-limit 10 per action) and the part full reads may take (20 %). */
const SHARE = DEFAULTS.cloudRateLimit;
const FULL_READ_SHARE = DEFAULTS.driftFullReadShare / 100;

describe('the full cycle', () => {
  it.each([
    // [CLBs, drift interval, full cycle]: the drift interval while its full reads cost ≤ 2/s, longer beyond
    [20, 5 * MIN, 5 * MIN],
    [600, 5 * MIN, 5 * MIN],
    [1_000, 5 * MIN, 500 * S],
    [3_000, 5 * MIN, 1_500 * S],
    [3_000, 2 * MIN, 1_500 * S],
    [10_000, 5 * MIN, 5_000 * S],
    [5, 2 * S, 2_500],
  ])('%i CLBs at a %i ms interval: every CLB re-read in full every %i ms', (clbs, interval, full) => {
    expect(fullIntervalMs(interval, clbs, SHARE * FULL_READ_SHARE)).toBe(full);
  });
});

/**
 * n CLBs all read at t = 0, then rounds as the controller schedules them until `until`; `drifted` (id → when) makes
 * the signal escalate that CLB once its health is read after the drift. Returns every read by tier.
 */
function simulate(n: number, I: number, until: number, drifted = new Map<string, number>()) {
  const scheduler = new DriftScheduler(I, SHARE * FULL_READ_SHARE);
  const readAt = new Map(Array.from({ length: n }, (_, i) => [`lb-${i}`, 0]));
  const healthAt = new Map(readAt);
  const reads: Array<{ at: number; id: string; tier: 'full' | 'signal' | 'escalated' }> = [];
  const corrected = new Map<string, number>();
  scheduler.plan(readAt, healthAt, 0);
  for (let now = scheduler.roundMs(n); now <= until; now += scheduler.roundMs(n)) {
    const plan = scheduler.plan(readAt, healthAt, now);
    const suspects = plan.signal.filter((id) => (drifted.get(id) ?? Infinity) <= now && !corrected.has(id));
    for (const id of plan.signal) {
      healthAt.set(id, now);
      reads.push({ at: now, id, tier: 'signal' });
    }
    for (const id of [...plan.full, ...suspects]) {
      readAt.set(id, now);
      healthAt.set(id, now);
      reads.push({ at: now, id, tier: suspects.includes(id) ? 'escalated' : 'full' });
      if ((drifted.get(id) ?? Infinity) <= now && !corrected.has(id)) corrected.set(id, now);
    }
  }
  return { reads, readAt, healthAt, corrected, fullMs: scheduler.fullIntervalMs(), round: scheduler.roundMs(n) };
}

describe('two tiers over many intervals', () => {
  it('3,000 CLBs at the defaults: DescribeListeners ≤ 25 % of the share, every CLB health-read each half interval and read in full each cycle', () => {
    const I = 5 * MIN;
    const n = 3_000;
    const until = 12 * I;
    const { reads, readAt, healthAt, fullMs, round } = simulate(n, I, until);
    expect(fullMs).toBe(1_500 * S);
    // Steady state (after the first full cycle): per second, by action.
    const from = fullMs;
    const seconds = (until - from) / 1000;
    const inSteady = reads.filter((r) => r.at > from);
    const full = inSteady.filter((r) => r.tier === 'full').length;
    const signal = inSteady.filter((r) => r.tier === 'signal').length;
    const describeListeners = full / seconds;
    // DescribeTargetHealth: the signal's calls of 30 plus one call per full-read batch of 20.
    const describeTargetHealth = (signal / MAX_TARGET_HEALTH_IDS + full / 20) / seconds;
    expect(describeListeners).toBeLessThanOrEqual(0.25 * SHARE);
    expect(describeListeners).toBeGreaterThan(0.19 * SHARE);
    expect(describeTargetHealth).toBeLessThanOrEqual(0.25 * SHARE);
    // Every CLB's health read within half an interval (and a round), and read in full within the cycle.
    for (const at of healthAt.values()) expect(until - at).toBeLessThanOrEqual(signalIntervalMs(I) + round);
    for (const at of readAt.values()) expect(until - at).toBeLessThan(fullMs + round);
  });

  it('a few CLBs keep full reads every drift interval, as with one tier', () => {
    const I = 5 * MIN;
    const { reads, readAt } = simulate(50, I, 10 * I);
    for (let k = 3; k < 10; k++) {
      const full = reads.filter((r) => r.tier === 'full' && r.at > k * I && r.at <= (k + 1) * I).length;
      expect(full).toBeGreaterThanOrEqual(50 - 20);
      expect(full).toBeLessThanOrEqual(50 + 20);
    }
    for (const at of readAt.values()) expect(10 * I - at).toBeLessThanOrEqual(I);
  });

  it('a drift the signal sees is read in full within half an interval and a round, long before the full cycle comes round', () => {
    const I = 5 * MIN;
    const n = 3_000;
    const drifted = new Map([['lb-1234', 31 * MIN + 7 * S], ['lb-7', 40 * MIN], ['lb-2999', 50 * MIN + 1 * S]]);
    const { corrected, fullMs, round } = simulate(n, I, 12 * I, drifted);
    for (const [id, at] of drifted) {
      const found = corrected.get(id);
      expect({ id, found: found !== undefined }).toEqual({ id, found: true });
      expect((found as number) - at).toBeLessThanOrEqual(signalIntervalMs(I) + round);
    }
    expect(signalIntervalMs(I) + round).toBeLessThan(I);
    expect(fullMs).toBeGreaterThan(4 * I);
  });
});

describe('after a cold start', () => {
  it('an Enforce that read every CLB within 100 s does not make them come due together: every interval within 1.05 × its budget', () => {
    const I = 5 * MIN;
    const n = 1_000;
    const scheduler = new DriftScheduler(I, SHARE * FULL_READ_SHARE);
    const readAt = new Map<string, number>();
    const healthAt = new Map<string, number>();
    // The policy's first round sees no cached CLB; then the round's own reads (not drift reads) cover every CLB.
    scheduler.plan(readAt, healthAt, 0);
    for (let i = 0; i < n; i++) {
      const at = 10 * S + Math.floor((i * 100 * S) / n);
      readAt.set(`lb-${i}`, at);
      healthAt.set(`lb-${i}`, at);
    }
    const full: number[] = [];
    for (let now = 110 * S; now <= 8 * I; now += scheduler.roundMs(n)) {
      const plan = scheduler.plan(readAt, healthAt, now);
      for (const id of [...plan.full, ...plan.signal]) healthAt.set(id, now);
      for (const id of plan.full) {
        readAt.set(id, now);
        full.push(now);
      }
    }
    const budget = (n * I) / scheduler.fullIntervalMs();
    // Intervals from the end of the cold start on (bench:idle's quiet period starts after convergence).
    for (let from = 150 * S; from + I <= 8 * I; from += I) {
      const reads = full.filter((t) => t > from && t <= from + I).length;
      expect({ from, reads, ok: reads <= 1.05 * budget + 20 }).toEqual({ from, reads, ok: true });
    }
  });
});

describe('one round', () => {
  const I = 5 * MIN;
  it.each<[string, { readAt: [string, number][]; healthAt: [string, number][]; now: number }, { full: string[]; signal: string[] }]>([
    ['a first round reads nothing fresh', { readAt: [['a', 0]], healthAt: [['a', 0]], now: 1_000 }, { full: [], signal: [] }],
    ['health older than half an interval is signalled', { readAt: [['a', 0]], healthAt: [['a', 0]], now: I / 2 }, { full: [], signal: ['a'] }],
    ['a CLB due in full is not signalled too (the full read reads health)', { readAt: [['a', 0]], healthAt: [['a', 0]], now: I }, { full: ['a'], signal: [] }],
    ['a classic or gone CLB (not in healthAt) gets full reads only', { readAt: [['a', 0], ['b', 0]], healthAt: [['a', 0]], now: I / 2 }, { full: [], signal: ['a'] }],
  ])('%s', (_name, i, want) => {
    // A few CLBs: the full cycle is the drift interval.
    expect(new DriftScheduler(I, 2).plan(new Map(i.readAt), new Map(i.healthAt), i.now)).toEqual(want);
  });

  it('signals in whole DescribeTargetHealth batches; what is left waits, unless overdue', () => {
    const health = new Map(Array.from({ length: 100 }, (_, i) => [`lb-${i}`, 0]));
    // 100 CLBs, 0.4 of the signal interval since the last round: 40 earned → one batch of 30, 10 carried.
    const r = dueForDrift(health, 1_000, 400, { at: 0, carry: 0 }, 30);
    expect(r.due).toHaveLength(30);
    expect(r.clock.carry).toBe(10);
    // Overdue CLBs go whatever was earned, and fill their call with the next oldest (a call for one would waste it).
    const late = dueForDrift(new Map([['a', 0], ['b', 500], ['c', 999]]), 1_000, 1_000, { at: 999, carry: 0 }, 2);
    expect(late.due).toEqual(['a', 'b']);
  });

  it('the signal covers found CLBs that are not classic, with the newer of the two read times', () => {
    const found = (forward: number) => ({ state: 'Found' as const, clb: { loadBalancerId: 'x', loadBalancerType: 'INTERNAL', addressIpVersion: 'IPV4', vips: [], tags: {}, status: 1, forward, passToTarget: false, listeners: [] } });
    const cached = new Map<string, ReturnType<typeof found> | { state: 'NotFound'; loadBalancerId: string }>([
      ['lb-a', found(1)],
      ['lb-classic', found(0)],
      ['lb-gone', { state: 'NotFound', loadBalancerId: 'lb-gone' }],
    ]);
    const out = signalled(new Map([['lb-a', 100], ['lb-classic', 100], ['lb-gone', 100]]), { cached: (id) => cached.get(id) }, { readAt: (id) => (id === 'lb-a' ? 500 : undefined) });
    expect([...out]).toEqual([['lb-a', 500]]);
  });
});
