// The test support's waitFor (test/support/kube.ts): a failed read is retried until the deadline, unless it says
// waiting cannot help (WaitHopeless), which ends the wait at once.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { WaitHopeless, waitFor } from '../support/kube.js';

describe('waitFor', () => {
  it('retries a read that throws until it returns a value', async () => {
    let reads = 0;
    const value = await waitFor('a value', () => {
      reads++;
      if (reads < 3) throw new Error('not yet');
      return 'done';
    }, { timeoutMs: 10_000, intervalMs: 1 });
    expect(value).toBe('done');
    expect(reads).toBe(3);
  });

  describe('its pauses', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    /** The times (ms after the start) at which a wait that never ends read, over the first `ms`. */
    async function readTimes(options: { intervalMs?: number }, ms: number): Promise<number[]> {
      jest.useFakeTimers({ now: 0 });
      const times: number[] = [];
      const wait = waitFor('never', () => void times.push(Date.now()), { timeoutMs: 60_000, ...options }).catch(() => undefined);
      await jest.advanceTimersByTimeAsync(ms);
      jest.useRealTimers();
      void wait;
      return times;
    }

    it('grow by half from 100 ms to 500 ms without an interval of its own', async () => {
      // 100, 150, 225, 338, 500, 500, …
      expect(await readTimes({}, 3_000)).toEqual([0, 100, 250, 475, 813, 1313, 1813, 2313, 2813]);
    });

    it('stay at the interval a wait passes', async () => {
      expect(await readTimes({ intervalMs: 100 }, 1_000)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    });
  });

  it('ends at once when a read throws WaitHopeless, with its message', async () => {
    let reads = 0;
    const wait = waitFor('a dead process', () => {
      reads++;
      throw new WaitHopeless('the process exited');
    }, { timeoutMs: 60_000, intervalMs: 1 });
    await expect(wait).rejects.toThrow('the process exited');
    expect(reads).toBe(1);
  });
});
