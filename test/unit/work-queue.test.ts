import { describe, expect, it, jest } from '@jest/globals';
import { jitteredDelay } from '../../src/runtime/backoff.js';
import { ShutdownAbortError, WorkQueue } from '../../src/runtime/work-queue.js';

/** A promise with its resolver, to hold a handler inside its critical section. */
function gate(): { open: () => void; wait: Promise<void> } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
}

function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 2);
    };
    tick();
  });
}

describe('backoff', () => {
  it("doubles a key's retry delay per failure from the base and caps it at the max; another key starts at the base", async () => {
    const retries: string[] = [];
    const q = new WorkQueue(
      't',
      async () => {
        throw new Error('boom');
      },
      { backoff: { baseMs: 1, maxMs: 8 }, observer: { failed: (_n, key, _e, retryIn) => retries.push(`${key}:${retryIn}`) } },
    );
    q.start();
    q.add('a');
    await until(() => retries.length === 6, 'six failures of a');
    q.add('b');
    await until(() => retries.includes('b:1'), 'the first failure of b');
    await q.shutdown(0);
    expect(retries.slice(0, 6)).toEqual(['a:1', 'a:2', 'a:4', 'a:8', 'a:8', 'a:8']);
  });

  it('jittered delays stay within [base, min(max, base·2^n)]', () => {
    expect(jitteredDelay(0, 800, 30_000, () => 0)).toBe(800);
    expect(jitteredDelay(3, 800, 30_000, () => 0.999)).toBe(6393);
    expect(jitteredDelay(20, 800, 30_000, () => 1)).toBe(30_000);
  });
});

describe('WorkQueue', () => {
  it('coalesces adds of a waiting key into one run', async () => {
    const runs: string[] = [];
    const q = new WorkQueue('t', async (key) => void runs.push(key));
    q.add('a');
    q.add('a');
    q.add('b');
    q.add('a');
    q.start();
    await q.whenIdle();
    expect(runs).toEqual(['a', 'b']);
  });

  it('reports the depth of the line after every change: keys waiting, then taken, then re-queued while in progress', async () => {
    const depths: number[] = [];
    const held = gate();
    const q = new WorkQueue('t', () => held.wait, { observer: { depth: (_name, depth) => depths.push(depth) } });
    q.add('a');
    q.add('b');
    expect(depths.at(-1)).toBe(2);
    q.start();
    expect([depths.at(-1), q.depth]).toEqual([1, 1]);
    q.add('a'); // in progress: back in line only once it is done
    expect(depths.at(-1)).toBe(1);
    held.open();
    await q.whenIdle();
    expect([depths.at(-1), q.depth]).toEqual([0, 0]);
  });

  it('never runs one key twice at once, and re-runs it once when added during processing', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const first = gate();
    const q = new WorkQueue(
      't',
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs++;
        if (runs === 1) await first.wait;
        active--;
      },
      { concurrency: 4 },
    );
    q.start();
    q.add('a');
    await until(() => runs === 1, 'first run');
    q.add('a');
    q.add('a');
    expect(q.inProgressKeys).toEqual(['a']);
    first.open();
    await until(() => runs === 2 && active === 0, 'second run');
    await q.whenIdle();
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
  });

  it('bounds concurrency across keys', async () => {
    let active = 0;
    let maxActive = 0;
    const q = new WorkQueue(
      't',
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 20; i++) q.add(`k${i}`);
    q.start();
    await until(() => active === 0 && q.depth === 0 && q.inProgressKeys.length === 0, 'drain');
    expect(maxActive).toBe(3);
  });

  // On fake timers: on the real clock a timer can end a few ms before the handler's own Date.now() says it should
  // (Node starts it from the event loop's cached time), which made "≥ 18 ms" fail on a loaded machine.
  it('retries failures with growing per-key backoff and forgets them after success', async () => {
    jest.useFakeTimers();
    try {
      let attempts = 0;
      const failures: Array<number | undefined> = [];
      const q = new WorkQueue(
        't',
        async () => {
          attempts++;
          // Three failures, a success, then one more failure: its retry starts again from the base.
          if (attempts < 4 || attempts === 5) throw new Error('boom');
        },
        { backoff: { baseMs: 20, maxMs: 1_000 }, observer: { failed: (_n, _k, _e, retryIn) => failures.push(retryIn) } },
      );
      q.start();
      q.add('x');
      await jest.advanceTimersByTimeAsync(0);
      // Each retry comes exactly when its backoff has passed, not a millisecond before.
      for (const [backoff, before] of [[20, 1], [40, 2], [80, 3]] as const) {
        await jest.advanceTimersByTimeAsync(backoff - 1);
        expect(attempts).toBe(before);
        await jest.advanceTimersByTimeAsync(1);
        expect(attempts).toBe(before + 1);
      }
      expect(failures).toEqual([20, 40, 80]);
      q.add('x');
      await jest.advanceTimersByTimeAsync(0);
      expect(attempts).toBe(5);
      await jest.advanceTimersByTimeAsync(20);
      expect(attempts).toBe(6);
      expect(failures).toEqual([20, 40, 80, 20]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('requeues after the requested delay, keeping the earliest of several', async () => {
    jest.useFakeTimers();
    try {
      let runs = 0;
      const q = new WorkQueue('t', async () => {
        runs++;
        return runs === 1 ? { requeueAfterMs: 40 } : undefined;
      });
      q.start();
      q.add('x');
      await jest.advanceTimersByTimeAsync(39);
      expect(runs).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(runs).toBe(2);
      q.addAfter('y', 10_000);
      q.addAfter('y', 10);
      await jest.advanceTimersByTimeAsync(10);
      expect(runs).toBe(3);
    } finally {
      jest.useRealTimers();
    }
  });

  it('shutdown lets an in-flight handler finish without aborting it, and takes no more work', async () => {
    const entered = gate();
    const release = gate();
    let abortedWhileRunning: boolean | undefined;
    let runs = 0;
    const q = new WorkQueue('t', async (_key, signal) => {
      runs++;
      entered.open();
      // Like a CLB task being awaited: it ends on its own, and must not be cut off while the grace lasts.
      await release.wait;
      abortedWhileRunning = signal.aborted;
    });
    q.start();
    q.add('a');
    await entered.wait;
    q.addAfter('b', 5);
    const shutdown = q.shutdown(10_000);
    q.add('c');
    expect(q.inProgressKeys).toEqual(['a']);
    release.open();
    expect(await shutdown).toBe(true);
    expect(abortedWhileRunning).toBe(false);
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(1);
  });

  it('shutdown aborts what is still running when the grace period ends, and waits for it to unwind', async () => {
    const entered = gate();
    const events: string[] = [];
    let reason: unknown;
    const q = new WorkQueue('t', async (_key, signal) => {
      entered.open();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      reason = signal.reason;
      // Recording where it stopped (an Event, a log line) takes a moment; shutdown waits for it.
      await new Promise((r) => setTimeout(r, 10));
      events.push('unwound');
      throw signal.reason;
    });
    q.start();
    q.add('a');
    await entered.wait;
    const drained = await q.shutdown(30, { unwindMs: 5_000, onGraceOver: (keys) => events.push(`grace over: ${keys.join(',')}`) });
    expect(drained).toBe(false);
    expect(events).toEqual(['grace over: a', 'unwound']);
    expect(reason).toBeInstanceOf(ShutdownAbortError);
    expect((reason as Error).message).toContain('30 ms');
    expect(q.inProgressKeys).toEqual([]);
  });

  it('shutdown gives up on a handler that ignores the abort after the unwind time', async () => {
    const entered = gate();
    const q = new WorkQueue('t', async () => {
      entered.open();
      await new Promise(() => undefined);
    });
    q.start();
    q.add('a');
    await entered.wait;
    expect(await q.shutdown(10, { unwindMs: 10 })).toBe(false);
    expect(q.inProgressKeys).toEqual(['a']);
  });
});
