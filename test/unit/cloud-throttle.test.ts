import { describe, expect, it, jest } from '@jest/globals';
import { ActionThrottle, DEFAULT_ACTION_BUDGET, resolveBudget } from '../../src/cloud/throttle.js';
import { ClbWriteGate } from '../../src/cloud/write-gate.js';

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets queued microtasks and p-queue's scheduling run. */
const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('resolveBudget', () => {
  it('defaults to 10 req/s per action, 2 per 200 ms window — half the shared quota, spread out', () => {
    expect(DEFAULT_ACTION_BUDGET.rps).toBe(10);
    expect(resolveBudget('DescribeListeners')).toEqual({ rps: 10, burst: 2, concurrency: 10, intervalMs: 200 });
  });

  it('applies per-action overrides and derives the burst from the rate', () => {
    const opts = { budgets: { DescribeTaskStatus: { rps: 15 }, ModifyListener: { rps: 4, burst: 1 } } };
    expect(resolveBudget('DescribeTaskStatus', opts)).toEqual({ rps: 15, burst: 3, concurrency: 10, intervalMs: 200 });
    expect(resolveBudget('ModifyListener', opts)).toEqual({ rps: 4, burst: 1, concurrency: 10, intervalMs: 250 });
    expect(resolveBudget('DescribeListeners', { defaultBudget: { rps: 0.5 } })).toEqual({ rps: 0.5, burst: 1, concurrency: 10, intervalMs: 2000 });
  });

  it('a sliding window of burst/rps never admits more than rps per second', () => {
    for (const rps of [0.5, 1, 3, 7, 10, 15, 19, 20, 50]) {
      const b = resolveBudget('X', { defaultBudget: { rps } });
      // starts in any 1 s window ≤ burst · ceil(1000 / interval)
      expect(b.burst * Math.ceil(1000 / b.intervalMs)).toBeLessThanOrEqual(Math.ceil(rps));
    }
  });

  it('fails fast on invalid budgets', () => {
    expect(() => new ActionThrottle({ budgets: { X: { rps: 0 } } })).toThrow(/rps/);
    expect(() => new ActionThrottle({ defaultBudget: { rps: 5, concurrency: 0 } })).toThrow(/concurrency/);
    expect(() => new ActionThrottle({ budgets: { X: { rps: 5, burst: 1.5 } } })).toThrow(/burst/);
  });
});

describe('ActionThrottle', () => {
  it('spaces calls by the budget', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 100, burst: 1 } });
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 5 }, () => throttle.run('A', () => Promise.resolve(starts.push(performance.now())))));
    // 5 starts, at most 1 per 10 ms window → 40 ms between first and last, less up to 1 ms per gap: timers run on
    // the event loop's whole-millisecond clock, cached per turn (seen: 36.8 ms on a busy machine).
    expect((starts[4] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(36);
    throttle.close();
  });

  it('pacedWith: a write goes no faster than the poll it needs; a cut of the poll slows the write, not the reverse', async () => {
    // A lone client: both start at their ceilings.
    const throttle = new ActionThrottle({ defaultBudget: { rps: 100 }, budgets: { DescribeTaskStatus: { rps: 80 } }, pacedWith: { ModifyListener: 'DescribeTaskStatus' } });
    expect(throttle.rate('ModifyListener')).toBeCloseTo(80, 1);
    // The write's own cut leaves the polls alone.
    await throttle.run('ModifyListener', () => Promise.resolve());
    throttle.slowDown('ModifyListener');
    expect(throttle.rate('DescribeTaskStatus')).toBeCloseTo(80, 1);
    expect(throttle.rate('ModifyListener')).toBeLessThan(1);
    const throttle2 = new ActionThrottle({ defaultBudget: { rps: 100 }, budgets: { DescribeTaskStatus: { rps: 80 } }, pacedWith: { ModifyListener: 'DescribeTaskStatus' } });
    // 20 polls sent, then the first throttle: the polls are cut to 0.5 × 20/s, and the writes with them.
    await Promise.all(Array.from({ length: 20 }, () => throttle2.run('DescribeTaskStatus', () => Promise.resolve())));
    throttle2.slowDown('DescribeTaskStatus');
    const polls = throttle2.rate('DescribeTaskStatus');
    expect(polls).toBeGreaterThan(7);
    expect(polls).toBeLessThanOrEqual(10.01);
    expect(throttle2.rate('ModifyListener')).toBeCloseTo(polls, 1);
    // The pacer spaces the writes at that rate: 4 writes, 3 gaps of ≥ 1/polls s.
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 4 }, () => throttle2.run('ModifyListener', () => Promise.resolve())));
    expect(performance.now() - t0).toBeGreaterThanOrEqual((3 * 1000) / 10.01 - 5);
    throttle.close();
    throttle2.close();
    // Paced with several (a write proven by either a task poll or a listener read): the fastest of them bounds it.
    const either = new ActionThrottle({ defaultBudget: { rps: 100 }, budgets: { DescribeTaskStatus: { rps: 5 }, DescribeListeners: { rps: 20 } }, pacedWith: { ModifyListener: ['DescribeTaskStatus', 'DescribeListeners'] } });
    expect(either.rate('ModifyListener')).toBe(20);
    expect(either.load('ModifyListener')).toEqual({ rate: 20, waiting: 0, running: 0 });
    either.close();
    // A cycle is one level deep each way, not a recursion.
    const cycle = new ActionThrottle({ defaultBudget: { rps: 10 }, pacedWith: { A: 'B', B: 'A' } });
    expect([cycle.rate('A'), cycle.rate('B')]).toEqual([10, 10]);
    cycle.close();
  });

  it('congested: below the budget after a cut or while starting slowly; at the budget otherwise; fixed: during a cool-down', async () => {
    const adaptive = new ActionThrottle({ defaultBudget: { rps: 10 } });
    expect(adaptive.congested('A')).toBe(false);
    await adaptive.run('A', () => Promise.resolve());
    adaptive.slowDown('A');
    // B, first asked for after A's one refusal, starts at its budget: one refusal is not evidence of contention.
    expect([adaptive.congested('A'), adaptive.congested('B')]).toEqual([true, false]);
    adaptive.slowDown('A');
    // C, first asked for after a second, starts on that evidence at A's rate: congested too.
    expect([adaptive.congested('A'), adaptive.congested('C')]).toEqual([true, true]);
    expect(new ActionThrottle({ defaultBudget: { rps: 10 } }).congested('A')).toBe(false); // a lone client starts at its budget
    const fixed = new ActionThrottle({ defaultBudget: { rps: 10 }, adaptive: false, cooldownMs: 60_000 });
    expect(fixed.congested('A')).toBe(false);
    fixed.slowDown('A');
    expect(fixed.congested('A')).toBe(true);
    for (const t of [adaptive, fixed]) t.close();
  });

  it('keeps actions independent', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 1, burst: 1 } });
    await throttle.run('A', () => Promise.resolve());
    const t0 = performance.now();
    await throttle.run('B', () => Promise.resolve()); // B's window is fresh
    expect(performance.now() - t0).toBeLessThan(500);
    throttle.close();
  });

  it('pauses an action after RequestLimitExceeded and resumes after the cool-down', async () => {
    // Fake timers: measured on the real clock, a loaded machine's stale event-loop time once let the 50 ms timer end
    // 41 ms after the test's own reading of the clock.
    jest.useFakeTimers();
    try {
      const throttle = new ActionThrottle({ defaultBudget: { rps: 1000 }, cooldownMs: 50, adaptive: false });
      throttle.slowDown('A');
      expect(throttle.stats()['A']?.coolingDown).toBe(true);
      let ran = false;
      const done = throttle.run('A', () => Promise.resolve((ran = true)));
      await jest.advanceTimersByTimeAsync(49);
      expect(ran).toBe(false);
      expect(throttle.stats()['A']?.coolingDown).toBe(true);
      await jest.advanceTimersByTimeAsync(1);
      await done;
      expect(ran).toBe(true);
      expect(throttle.stats()['A']?.coolingDown).toBe(false);
      throttle.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it('a caller that aborts while waiting leaves the queue', async () => {
    const throttle = new ActionThrottle({ cooldownMs: 60_000, adaptive: false });
    throttle.slowDown('A');
    const ac = new AbortController();
    const p = throttle.run('A', () => Promise.resolve('never'), { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toBeDefined();
    throttle.close();
  });

  it('`stopping` drops a call still waiting for the budget, never one already running', async () => {
    const throttle = new ActionThrottle({ defaultBudget: { rps: 1, burst: 1 } });
    const stopping = new AbortController();
    let finish!: () => void;
    const running = throttle.run('A', () => new Promise<string>((resolve) => (finish = () => resolve('done'))), { stopping: stopping.signal });
    let ran = false;
    const waiting = throttle.run('A', () => Promise.resolve((ran = true)), { stopping: stopping.signal });
    await flush();
    stopping.abort(new Error('shutdown began'));
    await expect(waiting).rejects.toThrow('shutdown began');
    finish();
    await expect(running).resolves.toBe('done');
    expect(ran).toBe(false);
    throttle.close();
  });

  it('close() rejects waiting calls instead of leaving them hanging', async () => {
    const throttle = new ActionThrottle({ cooldownMs: 60_000, adaptive: false });
    throttle.slowDown('A');
    const p = throttle.run('A', () => Promise.resolve('never'));
    throttle.close();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('ClbWriteGate', () => {
  it('serializes writes to one CLB in submission order', async () => {
    const gate = new ClbWriteGate(4);
    const order: string[] = [];
    const first = deferred();
    const a = gate.run('lb-1', async () => {
      order.push('a start');
      await first.promise;
      order.push('a end');
    });
    const b = gate.run('lb-1', () => Promise.resolve(void order.push('b')));
    const c = gate.run('lb-1', () => Promise.resolve(void order.push('c')));
    await flush();
    expect(order).toEqual(['a start']);
    first.resolve();
    await Promise.all([a, b, c]);
    expect(order).toEqual(['a start', 'a end', 'b', 'c']);
    await flush();
    expect(gate.stats().clbs).toBe(0);
  });

  it('runs different CLBs concurrently, up to the bound', async () => {
    const gate = new ClbWriteGate(2);
    const release = deferred();
    let running = 0;
    let peak = 0;
    const write = (): Promise<void> => {
      running++;
      peak = Math.max(peak, running);
      return release.promise.then(() => void running--);
    };
    const all = Promise.all(['lb-1', 'lb-2', 'lb-3', 'lb-4'].map((lb) => gate.run(lb, write)));
    await flush();
    expect(running).toBe(2);
    release.resolve();
    await all;
    expect(peak).toBe(2);
  });

  it('a write queued behind a busy CLB does not take a slot from another CLB', async () => {
    const gate = new ClbWriteGate(2);
    const hold = deferred();
    const started: string[] = [];
    const busy = gate.run('lb-1', () => hold.promise);
    const queued = gate.run('lb-1', () => Promise.resolve(void started.push('lb-1#2')));
    const other = gate.run('lb-2', () => Promise.resolve(void started.push('lb-2')));
    await other;
    expect(started).toEqual(['lb-2']);
    hold.resolve();
    await Promise.all([busy, queued]);
    expect(started).toEqual(['lb-2', 'lb-1#2']);
  });

  it('an aborted waiter leaves, and the chain continues behind it', async () => {
    const gate = new ClbWriteGate(4);
    const hold = deferred();
    const ac = new AbortController();
    const first = gate.run('lb-1', () => hold.promise);
    const aborted = gate.run('lb-1', () => Promise.resolve('no'), ac.signal);
    const third = gate.run('lb-1', () => Promise.resolve('yes'));
    ac.abort();
    await expect(aborted).rejects.toBeDefined();
    hold.resolve();
    await first;
    await expect(third).resolves.toBe('yes');
  });

  it('a write aborted while running keeps the CLB until it has actually settled', async () => {
    const gate = new ClbWriteGate(4);
    const ac = new AbortController();
    const inFlight = deferred();
    const order: string[] = [];
    const first = gate.run('lb-1', () => inFlight.promise.then(() => void order.push('first settled')), ac.signal);
    const second = gate.run('lb-1', () => Promise.resolve(void order.push('second')));
    await flush();
    ac.abort();
    await expect(first).rejects.toBeDefined();
    await flush();
    expect(order).toEqual([]);
    inFlight.resolve();
    await second;
    expect(order).toEqual(['first settled', 'second']);
  });

  it('a failing write releases the CLB', async () => {
    const gate = new ClbWriteGate(1);
    await expect(gate.run('lb-1', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run('lb-1', () => Promise.resolve(1))).resolves.toBe(1);
  });
});
