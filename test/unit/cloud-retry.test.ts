import { describe, expect, it } from '@jest/globals';
import { ClbError, ClbTaskFailedError, ClbTaskTimeoutError } from '../../src/cloud/errors.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, resolveRetryPolicy, sleep, withRetry } from '../../src/cloud/retry.js';
import { pollDelays, waitForTask } from '../../src/cloud/task-waiter.js';

function failure(code: string, reason: ClbError['reason'], retryable: boolean, throttled = false): ClbError {
  return new ClbError({ code, reason, retryable, throttled, apiMessage: code, message: code });
}
const busy = (): ClbError => failure('FailedOperation.ResourceInOperating', 'ClbBusy', true);
const throttled = (): ClbError => failure('RequestLimitExceeded', 'Throttled', true, true);
const denied = (): ClbError => failure('UnauthorizedOperation', 'PermissionDenied', false);

/** A fake clock: sleeping advances it; nothing waits for real. */
function fakeClock() {
  let t = 0;
  const slept: number[] = [];
  return {
    now: () => t,
    slept,
    sleep: (ms: number) => {
      slept.push(ms);
      t += ms;
      return Promise.resolve();
    },
  };
}

describe('backoffDelay', () => {
  const policy = resolveRetryPolicy();

  it('caps grow 200 ms → 10 s (random = 1 gives the cap)', () => {
    const caps = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, policy, false, () => 1));
    expect(caps).toEqual([200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
  });

  it('full jitter is uniform under the cap, floored at minDelayMs', () => {
    expect(backoffDelay(3, policy, false, () => 0.5)).toBe(400);
    expect(backoffDelay(1, policy, false, () => 0)).toBe(DEFAULT_RETRY_POLICY.minDelayMs);
  });

  it('throttled calls wait at least 1 s plus jitter', () => {
    expect(backoffDelay(1, policy, true, () => 0)).toBe(1_050);
    expect(backoffDelay(2, policy, true, () => 1)).toBe(1_400);
    for (let i = 0; i < 100; i++) expect(backoffDelay(1, policy, true)).toBeGreaterThanOrEqual(1_000);
  });

  it('rejects nonsense policies', () => {
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => resolveRetryPolicy({ baseDelayMs: -1 })).toThrow(/baseDelayMs/);
  });
});

describe('withRetry', () => {
  it('retries retryable errors until success, with growing waits', async () => {
    const clock = fakeClock();
    let calls = 0;
    const result = await withRetry(
      async () => {
        calls++;
        if (calls < 4) throw busy();
        return 'done';
      },
      { sleep: clock.sleep, now: clock.now, random: () => 1 },
    );
    expect(result).toBe('done');
    expect(calls).toBe(4);
    expect(clock.slept).toEqual([200, 400, 800]);
  });

  it('does not retry permanent errors', async () => {
    const clock = fakeClock();
    let calls = 0;
    const err = await withRetry(
      () => {
        calls++;
        return Promise.reject(denied());
      },
      { sleep: clock.sleep, now: clock.now },
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect(clock.slept).toEqual([]);
    expect((err as ClbError).reason).toBe('PermissionDenied');
    expect((err as ClbError).attempts).toBe(1);
  });

  it('gives up after maxAttempts with the last error and its attempt count', async () => {
    const clock = fakeClock();
    const err = (await withRetry(() => Promise.reject(busy()), { policy: { maxAttempts: 3 }, sleep: clock.sleep, now: clock.now, random: () => 1 }).catch(
      (e: unknown) => e,
    )) as ClbError;
    expect(err.code).toBe('FailedOperation.ResourceInOperating');
    expect(err.attempts).toBe(3);
    expect(clock.slept).toEqual([200, 400]);
  });

  it('stops before a wait would pass the deadline', async () => {
    const clock = fakeClock();
    const err = (await withRetry(() => Promise.reject(busy()), {
      policy: { deadlineMs: 1_000, maxAttempts: 50 },
      sleep: clock.sleep,
      now: clock.now,
      random: () => 1,
    }).catch((e: unknown) => e)) as ClbError;
    // 200 + 400 = 600 ms slept; the next wait (800) would end at 1400 > 1000.
    expect(clock.slept).toEqual([200, 400]);
    expect(err.attempts).toBe(3);
  });

  it('waits ≥ 1 s after RequestLimitExceeded, never a hot loop', async () => {
    const clock = fakeClock();
    let calls = 0;
    await withRetry(
      async () => {
        if (++calls < 3) throw throttled();
        return 1;
      },
      { sleep: clock.sleep, now: clock.now, random: () => 0 },
    );
    expect(clock.slept).toEqual([1_050, 1_050]);
  });

  it('honours shouldRetry and reports each retry', async () => {
    const clock = fakeClock();
    const events: number[] = [];
    let calls = 0;
    const err = await withRetry(
      () => {
        calls++;
        return Promise.reject(new ClbTaskTimeoutError('t', 1000, {}));
      },
      { sleep: clock.sleep, now: clock.now, shouldRetry: (e) => !(e instanceof ClbTaskTimeoutError), onRetry: (e) => events.push(e.attempt) },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClbTaskTimeoutError);
    expect(calls).toBe(1);
    expect(events).toEqual([]);
  });

  it('stops waiting when the signal aborts (bounded shutdown) and does not retry', async () => {
    const ac = new AbortController();
    let calls = 0;
    const pending = withRetry(
      () => {
        calls++;
        return Promise.reject(busy());
      },
      { signal: ac.signal, policy: { baseDelayMs: 60_000, minDelayMs: 60_000, maxDelayMs: 60_000, deadlineMs: 3_600_000 } },
    );
    ac.abort();
    const err = (await pending.catch((e: unknown) => e)) as ClbError;
    expect(err.reason).toBe('Aborted');
    expect(calls).toBe(1);
  });

  it('sleep rejects at once on an already-aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(sleep(60_000, ac.signal)).rejects.toBeDefined();
  });
});

describe('task polling', () => {
  it('backs off geometrically up to the cap', () => {
    const next = pollDelays({ initialDelayMs: 100, factor: 1.5, maxDelayMs: 1_000, timeoutMs: 60_000 });
    expect(Array.from({ length: 9 }, next)).toEqual([100, 150, 225, 338, 506, 759, 1000, 1000, 1000]);
  });

  it('polls until Status 0', async () => {
    const clock = fakeClock();
    const statuses = [2, 2, 2, 0];
    const polls = await waitForTask('task-1', () => Promise.resolve({ status: statuses.shift() ?? 0 }), {
      sleep: clock.sleep,
      now: clock.now,
    });
    expect(polls).toBe(4);
    expect(clock.slept).toEqual([100, 150, 225, 338]);
  });

  it('Status 1 is a ClbTaskFailedError carrying the task message', async () => {
    const clock = fakeClock();
    const err = await waitForTask('task-1', () => Promise.resolve({ status: 1, message: 'backend conflict' }), {
      sleep: clock.sleep,
      now: clock.now,
      context: { action: 'ModifyListener', loadBalancerId: 'lb-1' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClbTaskFailedError);
    expect((err as ClbTaskFailedError).message).toContain('backend conflict');
    expect((err as ClbTaskFailedError).message).toContain('lb-1');
    expect((err as ClbTaskFailedError).retryable).toBe(true);
  });

  it('times out with ClbTaskTimeoutError instead of polling forever', async () => {
    const clock = fakeClock();
    let polls = 0;
    const err = await waitForTask(
      'task-1',
      () => {
        polls++;
        return Promise.resolve({ status: 2 });
      },
      { sleep: clock.sleep, now: clock.now, policy: { timeoutMs: 5_000 } },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClbTaskTimeoutError);
    expect(clock.now()).toBeLessThanOrEqual(5_000);
    expect(polls).toBeLessThan(20);
  });
});
