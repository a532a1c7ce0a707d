// What loopguard learned about the account: a refusal is kept until proof or time says otherwise, and each change is
// told (the operator plans every target again: without the capability at once, with it on the retry).
import { describe, expect, it } from '@jest/globals';
import { LearnedCapabilities } from '../../../src/mitigation/capabilities.js';

describe('LearnedCapabilities', () => {
  it('tells each change once: learned, forgotten on proof, expired after retryAfterMs; not a refusal learned again', () => {
    const c = new LearnedCapabilities(1_000);
    let changes = 0;
    c.onChange = () => void changes++;
    c.learn('keepaliveRejected', 'no ticket', 0);
    c.learn('keepaliveRejected', 'no ticket again', 10);
    expect(changes).toBe(1);
    expect(c.snapshot(500)).toEqual({ keepaliveRejected: 'no ticket' });
    expect(c.forget('keepaliveRejected')).toBe(true);
    expect(c.forget('keepaliveRejected')).toBe(false);
    expect(changes).toBe(2);
    c.learn('range100_64Rejected', 'refused', 2_000);
    expect(c.snapshot(2_999)).toEqual({ range100_64Rejected: 'refused' });
    expect(changes).toBe(3);
    expect(c.snapshot(3_000)).toEqual({});
    expect(changes).toBe(4);
  });
});
