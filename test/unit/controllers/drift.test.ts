// Drift checks spread over the interval (src/controllers/drift-signal.ts's dueForDrift): simulated rounds over many intervals, counting
// when each CLB is read.
import { describe, expect, it } from '@jest/globals';
import { MAX_LOAD_BALANCER_IDS as DRIFT_BATCH } from '../../../src/cloud/batching.js';
import { MIN_DRIFT_ROUND_MS, dueForDrift, nextDriftRoundMs, type DriftClock } from '../../../src/controllers/drift-signal.js';

const MIN = 60_000;

/** n CLBs all read at t = 0 (a cold start), then rounds as the controller schedules them, until `until`. */
function simulate(n: number, intervalMs: number, until: number, extraRounds: number[] = [], otherReads: Array<{ at: number; id: string }> = []) {
  const readAt = new Map(Array.from({ length: n }, (_, i) => [`lb-${i}`, 0]));
  const reads: Array<{ at: number; id: string }> = [];
  let clock: DriftClock | undefined = dueForDrift(readAt, intervalMs, 0, undefined, DRIFT_BATCH).clock;
  let next = nextDriftRoundMs(n, intervalMs, DRIFT_BATCH);
  const extra = [...extraRounds].sort((a, b) => a - b);
  for (;;) {
    const now = Math.min(next, extra[0] ?? Infinity);
    if (now > until) break;
    if (now === extra[0]) extra.shift();
    else next = now + nextDriftRoundMs(n, intervalMs, DRIFT_BATCH);
    // Reads for other reasons (after TKE's grace period, a CLB being built) up to this round.
    while (otherReads.length > 0 && (otherReads[0] as { at: number }).at <= now) {
      const o = otherReads.shift() as { at: number; id: string };
      readAt.set(o.id, o.at);
      reads.push(o);
    }
    const r = dueForDrift(readAt, intervalMs, now, clock, DRIFT_BATCH);
    clock = r.clock;
    for (const id of r.due) {
      readAt.set(id, now);
      reads.push({ at: now, id });
    }
  }
  return { reads, readAt };
}

describe('drift checks', () => {
  it('read every CLB once per interval in steady state, never one twice, none left older than the interval', () => {
    const I = 5 * MIN;
    const { reads, readAt } = simulate(1000, I, 10 * I);
    // Interval 3..10: steady state. Exactly the drift budget per interval: n reads, each CLB once.
    for (let k = 3; k < 10; k++) {
      const inInterval = reads.filter((r) => r.at > k * I && r.at <= (k + 1) * I);
      expect(inInterval.length).toBeGreaterThanOrEqual(1000 - DRIFT_BATCH);
      expect(inInterval.length).toBeLessThanOrEqual(1000 + DRIFT_BATCH);
      expect(new Set(inInterval.map((r) => r.id)).size).toBe(Math.min(inInterval.length, 1000));
    }
    for (const at of readAt.values()) expect(10 * I - at).toBeLessThan(I);
  });

  it('spreads the reads: no 30 s window holds more than its share plus one batch, already in the first interval', () => {
    const I = 5 * MIN;
    const { reads } = simulate(1000, I, 4 * I);
    const window = 30_000;
    const share = (1000 * window) / I;
    for (let t = 0; t < 4 * I; t += window) {
      const n = reads.filter((r) => r.at > t && r.at <= t + window).length;
      expect(n).toBeLessThanOrEqual(share + DRIFT_BATCH);
      expect(n).toBeGreaterThanOrEqual(share - DRIFT_BATCH);
    }
  });

  it('rounds triggered by events in between (TKE syncs, Service edits) do not add reads', () => {
    const I = 5 * MIN;
    const events = Array.from({ length: 400 }, (_, i) => 1_000 + i * 2_917);
    const quiet = simulate(1000, I, 4 * I).reads.filter((r) => r.at > I).length;
    const busy = simulate(1000, I, 4 * I, events).reads.filter((r) => r.at > I).length;
    expect(Math.abs(busy - quiet)).toBeLessThanOrEqual(DRIFT_BATCH);
  });

  it('a first round reads nothing fresh; an overdue CLB is due whatever was earned', () => {
    const I = 2_000;
    const fresh = dueForDrift(new Map([['a', 1_000]]), I, 1_500, undefined, DRIFT_BATCH);
    expect(fresh.due).toEqual([]);
    const overdue = dueForDrift(new Map([['a', 0], ['b', 1_900]]), I, 2_000, { at: 1_999, carry: 0 }, 1);
    expect(overdue.due).toEqual(['a']);
  });

  it('schedules converged rounds one batch apart, within [MIN_DRIFT_ROUND_MS, interval]', () => {
    expect(nextDriftRoundMs(0, 5 * MIN, DRIFT_BATCH)).toBe(5 * MIN);
    expect(nextDriftRoundMs(10, 2_000, DRIFT_BATCH)).toBe(2_000);
    expect(nextDriftRoundMs(1000, 5 * MIN, DRIFT_BATCH)).toBe((5 * MIN * DRIFT_BATCH) / 1000);
    expect(nextDriftRoundMs(100_000, 5 * MIN, DRIFT_BATCH)).toBe(MIN_DRIFT_ROUND_MS);
  });

  it('reads for other reasons are spent from the budget: none while they come, every interval after them on budget', () => {
    const I = 90_000;
    const n = 1000;
    // After the Enforce: each CLB read once more when its TKE grace period ends, spread over 10–60 s.
    const other = Array.from({ length: n }, (_, i) => ({ at: 10_000 + Math.floor((i * 50_000) / n), id: `lb-${i}` }));
    const others = new Set(other);
    const { reads, readAt } = simulate(n, I, 4 * I, [], other);
    // Without the rule (other reads not counted) the spread went on reading fresh CLBs: 2 n in the first interval.
    expect(reads.filter((r) => r.at > 10_000 && r.at <= 60_000 && !others.has(r))).toEqual([]);
    // The first interval: the cold start's spread before the other reads (2 rounds), the n other reads, the spread
    // again after them (30 s of it, a debt of one batch at most: see dueForDrift); then n per interval.
    const perInterval = [0, 1, 2, 3].map((k) => reads.filter((r) => r.at > k * I && r.at <= (k + 1) * I).length);
    expect(perInterval).toEqual([1400, n, n, n]);
    for (const at of readAt.values()) expect(4 * I - at).toBeLessThan(I);
  });
});
