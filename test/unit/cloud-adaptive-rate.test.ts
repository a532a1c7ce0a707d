// The adaptive per-action rate (src/cloud/adaptive-rate.ts): AIMD under --cloud-rate-limit.
import { describe, expect, it, jest } from '@jest/globals';
import type { AccountEvidence, RateState } from '../../src/cloud/adaptive-rate.js';
import { currentRate, DEFAULT_ADAPTIVE_RATE, NO_EVIDENCE, onCall, onThrottled, rememberRefusal, resolveAdaptiveRate, startRate } from '../../src/cloud/adaptive-rate.js';
import { ActionThrottle } from '../../src/cloud/throttle.js';
import { Pacer } from '../../src/cloud/pacer.js';

const P = resolveAdaptiveRate(10);
/** AIMD alone: started on evidence of contention at the ceiling's rate (the rows that show the cut and the recovery). */
const AIMD_START: AccountEvidence = { refusedAt: [0, 0], sustained: 10 };
/** Refused twice (the recurrence that is evidence) at `t` ms, the account sustaining `sustained`. */
const refused = (t: number, sustained: number): AccountEvidence => ({ refusedAt: [t - 100, t], sustained });

/**
 * Replays events from the start state at t=0 (`evidence` then): at `t` ms, `throttled` (with the measured rate), `call`
 * (a call, the previous one having started at `call` ms; the evidence as given), or a reading.
 */
function replay(events: Array<{ t: number; throttled?: number; call?: number; evidence?: AccountEvidence }>, evidence: AccountEvidence = AIMD_START): number[] {
  const params = P;
  let state: RateState = startRate(params, 0, evidence);
  return events.map(({ t, throttled, call, evidence: later }) => {
    if (call !== undefined) state = onCall(state, params, t, call, later ?? NO_EVIDENCE);
    if (throttled !== undefined) state = onThrottled(state, params, t, throttled);
    return Number(currentRate(state, params, t).toFixed(3));
  });
}

describe('adaptive rate', () => {
  it("uses the AWS adaptive mode's cut and floor (β 0.7, 0.5 req/s), grows 0.1 req/s per second (bench:fleet), one cut per second, a deeper first cut (0.5) after a start without evidence, two refusals within 60 s as evidence, restart after 30 s idle", () => {
    expect(DEFAULT_ADAPTIVE_RATE).toEqual({ floor: 0.5, beta: 0.7, increasePerSecond: 0.1, holdMs: 1000, slowStartBeta: 0.5, contentionRefusals: 2, contentionMemoryMs: 60_000, idleRestartMs: 30_000 });
  });

  // The start (issue 40): the full share without evidence of contention, the rate the account sustains with it.
  it.each<[string, number, AccountEvidence, RateState]>([
    ['never refused: the full share, the first refusal to cut deeper', 5000, NO_EVIDENCE, { base: 10, since: 5000, cutAt: -Infinity, slowStart: true }],
    ['refused twice, the older 59.9 s ago: the rate the account sustains now, growing additively', 60_000, { refusedAt: [100, 30_000], sustained: 3.2 }, { base: 3.2, since: 60_000, cutAt: -Infinity }],
    ['refused twice on two actions within one second: evidence too', 2000, { refusedAt: [1500, 1600], sustained: 3.2 }, { base: 3.2, since: 2000, cutAt: -Infinity }],
    ['refused once (a lone cluster\'s discovery meeting TKE\'s syncs): not evidence, the full share', 1000, { refusedAt: [900], sustained: 3.2 }, { base: 10, since: 1000, cutAt: -Infinity, slowStart: true }],
    ['refused twice, the older 60 s ago: forgotten, one refusal left, the full share', 60_100, { refusedAt: [100, 30_000], sustained: 3.2 }, { base: 10, since: 60_100, cutAt: -Infinity, slowStart: true }],
    ['refused twice, the older exactly 60 s ago: forgotten (the memory is open at its end)', 60_100, { refusedAt: [100, 60_000], sustained: 3.2 }, { base: 10, since: 60_100, cutAt: -Infinity, slowStart: true }],
    ['the sustained rate is kept within the floor', 1000, refused(900, 0.1), { base: 0.5, since: 1000, cutAt: -Infinity }],
    ['and within the ceiling (a cut action of a larger budget)', 1000, refused(900, 14), { base: 10, since: 1000, cutAt: -Infinity }],
  ])('start: %s', (_name, now, evidence, state) => {
    expect(startRate(P, now, evidence)).toEqual(state);
  });

  it.each<[string, number[], number, number[]]>([
    ['the first refusal is remembered', [], 1000, [1000]],
    ['a second joins it, oldest first', [1000], 30_000, [1000, 30_000]],
    ['a third: only the last two are kept (all startRate needs)', [1000, 30_000], 61_000, [30_000, 61_000]],
  ])('remembered refusals: %s', (_name, before, now, after) => {
    expect(rememberRefusal(before, P, now)).toEqual(after);
  });

  it.each<[string, Array<{ t: number; throttled?: number; call?: number; evidence?: AccountEvidence }>, AccountEvidence, number[]]>([
    ['a lone client stays at the full share, however long', [{ t: 0 }, { t: 500 }, { t: 60_000 }], NO_EVIDENCE, [10, 10, 10]],
    ['the first refusal after a start without evidence cuts by half from what was allowed, then +0.1 req/s per second', [{ t: 1000, throttled: 10 }, { t: 6000 }, { t: 60_000 }], NO_EVIDENCE, [5, 5.5, 10]],
    ['…by half from what was sent when less', [{ t: 1000, throttled: 2 }], NO_EVIDENCE, [1]],
    ['after the first refusal the cut is β 0.7', [{ t: 2000, throttled: 10 }, { t: 3000, throttled: 5 }], NO_EVIDENCE, [5, 3.5]],
    ['a start on evidence cuts by β 0.7 at once', [{ t: 1000, throttled: 4 }], refused(0, 4), [2.8]],
    ['idle restart with fresh evidence: down to the rate the account sustains', [{ t: 0 }, { t: 100_000, call: 60_000, evidence: refused(99_000, 2) }, { t: 101_000 }], NO_EVIDENCE, [10, 2, 2.1]],
    ['idle restart without evidence: the full share again', [{ t: 1000, throttled: 10 }, { t: 100_000, call: 60_000 }, { t: 101_000, throttled: 10 }], NO_EVIDENCE, [5, 10, 5]],
    ['idle restart after one refusal: the full share again', [{ t: 0 }, { t: 100_000, call: 60_000, evidence: { refusedAt: [99_000], sustained: 2 } }], NO_EVIDENCE, [10, 10]],
    ['idle restart keeps a recent cut of its own below the start rate', [{ t: 40_000, throttled: 1 }, { t: 45_000, call: 10_000 }, { t: 46_000 }], NO_EVIDENCE, [0.5, 1, 1.1]],
    ['no restart while calls keep coming, nor before the first call', [{ t: 0, call: -Infinity, evidence: refused(0, 1) }, { t: 20_000, call: 19_900, evidence: refused(20_000, 1) }], NO_EVIDENCE, [10, 10]],
  ])('%s', (_name, events, evidence, rates) => {
    expect(replay(events, evidence)).toEqual(rates);
  });

  it('a start never goes above the ceiling or below the floor; a budget under the floor is its own floor', () => {
    expect(startRate(resolveAdaptiveRate(0.2), 0)).toMatchObject({ base: 0.2 });
    expect(() => resolveAdaptiveRate(10, { slowStartBeta: 1 })).toThrow(/slowStartBeta/);
    expect(() => resolveAdaptiveRate(10, { idleRestartMs: -1 })).toThrow(/idleRestartMs/);
    expect(() => resolveAdaptiveRate(10, { contentionMemoryMs: -1 })).toThrow(/contentionMemoryMs/);
    expect(() => resolveAdaptiveRate(10, { contentionRefusals: 0 })).toThrow(/contentionRefusals/);
    expect(() => resolveAdaptiveRate(10, { contentionRefusals: 1.5 })).toThrow(/contentionRefusals/);
  });

  it.each([
    ['starts at the ceiling (on evidence: the sustained rate 10)', [{ t: 0 }, { t: 60_000 }], [10, 10]],
    ['decrease: a throttle cuts to β × the rate sent', [{ t: 1000, throttled: 10 }], [7]],
    ['decrease: from what was measured when below the allowance', [{ t: 1000, throttled: 4 }], [2.8]],
    ['decrease: several throttles within the hold cut once', [{ t: 1000, throttled: 10 }, { t: 1500, throttled: 10 }, { t: 1999, throttled: 10 }], [7, 7.05, 7.1]],
    ['decrease: a throttle after the hold cuts again', [{ t: 1000, throttled: 10 }, { t: 2000, throttled: 7 }], [7, 4.9]],
    ['recovery: +0.1 req/s per second without throttling', [{ t: 1000, throttled: 10 }, { t: 6000 }, { t: 11_000 }], [7, 7.5, 8]],
    ['ceiling: recovery stops at --cloud-rate-limit', [{ t: 1000, throttled: 10 }, { t: 16_000 }, { t: 60_000 }], [7, 8.5, 10]],
    ['ceiling: a cut after a long quiet spell starts from the ceiling, not the unbounded growth', [{ t: 1000, throttled: 10 }, { t: 600_000, throttled: 20 }], [7, 7]],
    ['floor: never below 0.5 req/s', [{ t: 0, throttled: 1 }, { t: 1000, throttled: 0.6 }, { t: 2000, throttled: 0 }], [0.7, 0.5, 0.5]],
  ])('%s', (_name, events, rates) => {
    expect(replay(events)).toEqual(rates);
  });

  it('two clients cutting on the excess of a shared quota settle near half of it each', () => {
    // A fluid model of the emulator's bucket (20/s, burst 20): throttles land on each client in proportion to its rate.
    const params = resolveAdaptiveRate(20);
    let a = startRate(params, 0);
    let b: RateState = { base: 2, since: 0, cutAt: -Infinity };
    let tokens = 20;
    const shares: number[] = [];
    let turn = 0;
    for (let t = 0; t < 300_000; t += 100) {
      const ra = currentRate(a, params, t);
      const rb = currentRate(b, params, t);
      tokens = Math.min(20, tokens + 2 - (ra + rb) / 10);
      if (tokens < 0) {
        tokens = 0;
        // The refused call is a's or b's, alternately weighted by rate.
        turn += ra / (ra + rb);
        if (turn >= 1) {
          turn -= 1;
          a = onThrottled(a, params, t, ra);
        } else b = onThrottled(b, params, t, rb);
      }
      if (t >= 200_000) shares.push(ra / (ra + rb));
    }
    const mean = shares.reduce((x, y) => x + y, 0) / shares.length;
    expect(mean).toBeGreaterThan(0.4);
    expect(mean).toBeLessThan(0.6);
  });

  it('refuses constants that would not converge', () => {
    expect(() => resolveAdaptiveRate(0)).toThrow(/ceiling/);
    expect(() => resolveAdaptiveRate(10, { beta: 1 })).toThrow(/beta/);
    expect(() => resolveAdaptiveRate(10, { floor: 11 })).toThrow(/floor/);
    // A budget below the default floor keeps its rate.
    expect(resolveAdaptiveRate(0.2)).toMatchObject({ ceiling: 0.2, floor: 0.2 });
    expect(() => resolveAdaptiveRate(10, { increasePerSecond: 0 })).toThrow(/increasePerSecond/);
    expect(() => new ActionThrottle({ defaultBudget: { rps: 5 }, adaptive: { beta: 0 } })).toThrow(/beta/);
  });
});

describe('ActionThrottle with the adaptive rate', () => {
  it('per action: a throttle cuts only that action, and calls no longer pause', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 10 }, adaptive: {} });
    await throttle.run('A', () => Promise.resolve());
    await throttle.run('B', () => Promise.resolve());
    throttle.slowDown('A');
    const stats = throttle.stats();
    expect(stats['A']).toMatchObject({ coolingDown: false });
    // Measured: one call in the last second → the first cut, by half from 1 req/s.
    expect(throttle.rate('A')).toBeCloseTo(0.5, 1);
    expect(throttle.rate('B')).toBe(10);
    expect(Object.keys(throttle.rates()).sort()).toEqual(['A', 'B']);
    throttle.close();
  });

  it('a lone client starts every action at its full share, also after one refusal; after a second, a new action starts at the rate the account sustains', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 10 } });
    await throttle.run('A', () => Promise.resolve());
    expect([throttle.rate('A'), throttle.congested('A')]).toEqual([10, false]);
    throttle.slowDown('A');
    // One call in the last second, the first refusal: cut by half from 1 req/s, the floor.
    expect(throttle.rate('A')).toBeCloseTo(0.5, 1);
    // One refusal is not evidence: B starts at its ceiling.
    expect([throttle.rate('B'), throttle.congested('B')]).toEqual([10, false]);
    // A second refusal (within A's hold: no second cut, but it counts) is: C starts at A's rate now.
    throttle.slowDown('A');
    expect(throttle.rate('A')).toBeCloseTo(0.5, 1);
    expect(throttle.rate('C')).toBeCloseTo(0.5, 1);
    expect(throttle.congested('C')).toBe(true);
    // B, started before, keeps its state.
    expect(throttle.rate('B')).toBe(10);
    throttle.close();
  });

  it('spaces calls at the cut rate', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 100, burst: 5 }, adaptive: { floor: 1 } });
    // 20 calls at 100/s, then the first throttle: measured ≈ 20/s → 10/s, ≈ 100 ms apart.
    await Promise.all(Array.from({ length: 20 }, () => throttle.run('A', () => Promise.resolve())));
    throttle.slowDown('A');
    const rate = throttle.rate('A');
    // 0.5 × the calls of the last second: 10/s when the 20 took less than a second (fewer on a slow machine).
    expect(rate).toBeGreaterThan(1);
    expect(rate).toBeLessThanOrEqual(10.01);
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 4 }, () => throttle.run('A', () => Promise.resolve(starts.push(performance.now())))));
    // The rate grows back (0.1/s each second) while the calls wait: the gaps are at least 1 / the rate after them.
    expect((starts[3] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual((3 * 1000) / throttle.rate('A') - 5);
    throttle.close();
  });

  it('`stopping` drops a call still waiting for its turn at the cut rate, never one already running', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 10 }, adaptive: { floor: 0.5 } });
    const stopping = new AbortController();
    let finish!: () => void;
    const running = throttle.run('A', () => new Promise<string>((resolve) => (finish = () => resolve('done'))), { stopping: stopping.signal });
    throttle.slowDown('A');
    expect(throttle.rate('A')).toBeCloseTo(0.5, 2);
    let ran = false;
    // At 0.5 req/s the next start is ~2 s away: the call waits in the pacer.
    const waiting = throttle.run('A', () => Promise.resolve((ran = true)), { stopping: stopping.signal });
    await new Promise((r) => setTimeout(r, 50));
    expect(throttle.stats()['A']).toMatchObject({ waiting: 1, running: 1 });
    stopping.abort(new Error('shutdown began'));
    await expect(waiting).rejects.toThrow('shutdown began');
    finish();
    await expect(running).resolves.toBe('done');
    expect(ran).toBe(false);
    throttle.close();
  });

  it('adaptive: false keeps the fixed rate and pauses instead', () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 10 }, adaptive: false, cooldownMs: 50 });
    throttle.slowDown('A');
    expect(throttle.stats()['A']).toMatchObject({ coolingDown: true, rate: 10 });
    throttle.close();
  });
});

describe('Pacer', () => {
  it('releases in order, paces at the rate in force, and drops an aborted waiter', async () => {
    // 10/s: the second waiter is 100 ms away, so its abort comes first however slow the machine.
    let rate = 10;
    const pacer = new Pacer(() => rate);
    const order: number[] = [];
    const ac = new AbortController();
    const a = pacer.take().then(() => order.push(1));
    const b = pacer.take(ac.signal).then(() => order.push(2));
    const c = pacer.take().then(() => order.push(3));
    ac.abort(new Error('gone'));
    await expect(b).rejects.toThrow('gone');
    await Promise.all([a, c]);
    expect(order).toEqual([1, 3]);
    rate = 20;
    // On the pacer's own clock: the next start 1000/20 ms after the last, however late this test's awaits ran.
    const before = pacer.lastStart;
    await pacer.take();
    expect(pacer.lastStart - before).toBeGreaterThanOrEqual(50);
    expect(pacer.measured()).toBe(3);
    const pending = pacer.take();
    pacer.close();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('follows a rate change at once: the next start 1000/rate after the last (fake clock)', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      let rate = 10;
      const pacer = new Pacer(() => rate);
      await pacer.take();
      rate = 20;
      let started = false;
      const next = pacer.take().then(() => (started = true));
      await jest.advanceTimersByTimeAsync(49);
      expect(started).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await next;
      expect(started).toBe(true);
      pacer.close();
    } finally {
      jest.useRealTimers();
    }
  });
});
