// The CLB id on a target is user-writable text: the observer sends only well-formed ids to the CLB API, so a junk
// id can neither fail the DescribeLoadBalancers batch it would share with 19 other targets nor probe the API.
import { describe, expect, it } from '@jest/globals';
import type { ClbReader } from '../../src/cloud/index.js';
import { ClbObserver } from '../../src/cloud/clb-observer.js';

describe('ClbObserver and malformed ids', () => {
  it('never sends an id that is not a CLB id, and reports it as not found', async () => {
    const asked: string[][] = [];
    const reader: ClbReader = {
      describeLoadBalancers: async (ids) => {
        asked.push([...ids]);
        return [];
      },
      describeListeners: async () => [],
      describeTargetHealth: async () => [],
    };
    const junk = ['lb-GZ_1234/../x', `lb-${'x'.repeat(190)}\u0007`, 'LB-ABCD1234', ''];
    const result = await new ClbObserver(reader).observe(['lb-abcd1234', ...junk], 60_000);
    expect(asked).toEqual([['lb-abcd1234']]);
    for (const id of junk) expect(result.get(id)).toEqual({ state: 'NotFound', loadBalancerId: id });
    expect(result.get('lb-abcd1234')).toEqual({ state: 'NotFound', loadBalancerId: 'lb-abcd1234' });
  });

  it('makes no call at all when every id is junk', async () => {
    let calls = 0;
    const reader: ClbReader = {
      describeLoadBalancers: async () => {
        calls++;
        return [];
      },
      describeListeners: async () => [],
      describeTargetHealth: async () => [],
    };
    await new ClbObserver(reader).observe(['lb-../../x'], 60_000);
    expect(calls).toBe(0);
  });
});
