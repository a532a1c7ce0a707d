// The TKE simulator's keyed work queue: dedup, per-key exclusivity, re-run after re-add, retries, waiting.
import { describe, expect, it } from '@jest/globals';
import { WorkQueue } from '../../sim/tke-simulator/work-queue.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('WorkQueue', () => {
  it('runs a key queued several times before it starts once', async () => {
    const runs: string[] = [];
    const gate = deferred();
    const q = new WorkQueue(async (k) => {
      runs.push(k);
      if (k === 'block') await gate.promise;
    }, { concurrency: 1 });
    q.add('block');
    q.add('a');
    q.add('a');
    q.add('a');
    gate.resolve();
    await q.idle();
    expect(runs).toEqual(['block', 'a']);
    await q.stop();
  });

  it('never runs one key twice at once, and re-runs a key re-added while running', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const gate = deferred();
    const q = new WorkQueue(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      runs++;
      if (runs === 1) await gate.promise;
      active--;
    }, { concurrency: 4 });
    q.add('k');
    await new Promise((r) => setImmediate(r));
    q.add('k');
    q.add('k');
    gate.resolve();
    await q.idle();
    expect(maxActive).toBe(1);
    expect(runs).toBe(2);
    await q.stop();
  });

  it('retries failures with backoff and reports them', async () => {
    const errors: number[] = [];
    let calls = 0;
    const done = deferred();
    const q = new WorkQueue(
      async () => {
        calls++;
        if (calls < 3) throw new Error('boom');
        done.resolve();
      },
      { baseRetryMs: 5, onError: (_k, _e, attempt) => errors.push(attempt) },
    );
    q.add('k');
    await done.promise;
    expect(errors).toEqual([1, 2]);
    await q.stop();
  });

  it('addAndWait resolves after each key has run once after the call', async () => {
    const seen: string[] = [];
    const q = new WorkQueue(async (k) => {
      await new Promise((r) => setTimeout(r, 5));
      seen.push(k);
    });
    await q.addAndWait(['x', 'y', 'z']);
    expect(seen.sort()).toEqual(['x', 'y', 'z']);
    await q.stop();
  });
});
