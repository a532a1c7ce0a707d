import { describe, expect, it } from '@jest/globals';
import { schedule, type ScheduleInput } from '../../../src/probe/schedule.js';

const base: ScheduleInput = { targets: 10, windowSeconds: 300, ratePerSecond: 5, minIntervalSeconds: 10, windowIndex: 7, seed: 'node-1' };

/** The most probes in any one second of the window. */
function busiestSecond(atMs: number[]): number {
  const sorted = [...atMs].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('a window of probes from one node', () => {
  it.each([
    // targets, window, rate, min interval -> probes per target, targets probed, probes
    [1, 300, 5, 10, 30, 1, 30], // one target: capped by the per-target interval (300 s / 10 s)
    [10, 300, 5, 10, 30, 10, 300],
    [100, 300, 5, 10, 15, 100, 1500], // the rate binds: 1,500 probes a window
    [1000, 300, 5, 10, 1, 1000, 1000], // the 1,000 targets: each once a window, 3.3 probes/s
    [1500, 300, 5, 10, 1, 1500, 1500],
    [2000, 300, 5, 10, 1, 1500, 1500], // no room for all: 1,500 of them this window
    [0, 300, 5, 10, 0, 0, 0],
    [3, 2, 5, 1, 2, 3, 6], // the integration test's plan
  ])('%i targets, %i s window, %i/s, %i s apart: %i each, %i probed, %i probes', (targets, windowSeconds, ratePerSecond, minIntervalSeconds, perTarget, probed, total) => {
    const s = schedule({ ...base, targets, windowSeconds, ratePerSecond, minIntervalSeconds });
    expect({ perTarget: s.perTarget, probed: s.probed, total: s.probes.length }).toEqual({ perTarget, probed, total });
    const times = s.probes.map((p) => p.atMs);
    expect(times.every((t) => t >= 0 && t < windowSeconds * 1000)).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    if (total > 0) expect(busiestSecond(times)).toBeLessThanOrEqual(Math.ceil(ratePerSecond) + 1);
    const counts = new Map<number, number>();
    for (const p of s.probes) counts.set(p.target, (counts.get(p.target) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === perTarget)).toBe(true);
    expect(counts.size).toBe(probed);
  });

  it('puts each probe in its own slot of 1/rate seconds, at a random place in it', () => {
    const { probes } = schedule({ ...base, targets: 100 });
    const slotMs = 200; // 300 s / 1,500 probes
    expect(probes.every((p, i) => p.atMs >= i * slotMs && p.atMs < (i + 1) * slotMs)).toBe(true);
    expect(new Set(probes.map((p, i) => p.atMs - i * slotMs)).size).toBeGreaterThan(100);
  });

  it('spreads one target over the window: its probes are about a round apart', () => {
    const s = schedule({ ...base, targets: 10 });
    const mine = s.probes.filter((p) => p.target === 3).map((p) => p.atMs);
    const gaps = mine.slice(1).map((t, i) => t - mine[i]!);
    // A round is 10 slots of 1 s; the jitter moves each probe within its slot.
    expect(Math.min(...gaps)).toBeGreaterThan(8_000);
    expect(Math.max(...gaps)).toBeLessThan(12_000);
  });

  it('jitters: another node, or the next window, another order; the same node and window, the same', () => {
    const order = (i: Partial<ScheduleInput>) => schedule({ ...base, ...i }).probes.slice(0, 10).map((p) => p.target);
    expect(order({})).toEqual(order({}));
    expect(order({ seed: 'node-2' })).not.toEqual(order({}));
    expect(order({ windowIndex: 8 })).not.toEqual(order({}));
  });

  it('gives every target its turn when a window has no room for all', () => {
    const seen = new Set<number>();
    for (let w = 0; w < 4; w++) for (const p of schedule({ ...base, targets: 2000, windowIndex: w }).probes) seen.add(p.target);
    expect(seen.size).toBe(2000);
  });
});
