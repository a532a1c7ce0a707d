// The test support's waitFor (test/support/kube.ts): a failed read is retried until the deadline, unless it says
// waiting cannot help (WaitHopeless), which ends the wait at once.
import { describe, expect, it } from '@jest/globals';
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
