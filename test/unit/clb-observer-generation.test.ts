// The observer's generation tells a converged policy whether its drift checks found anything new (quiet.ts): it
// moves when a cached observation changes, never when a read finds what was cached.
import { describe, expect, it } from '@jest/globals';
import type { ClbReader, ListenerInfo, LoadBalancerInfo } from '../../src/cloud/index.js';
import { ClbObserver } from '../../src/cloud/clb-observer.js';

const LB: LoadBalancerInfo = {
  loadBalancerId: 'lb-abcd1234',
  name: 'svc',
  type: 'INTERNAL',
  ipVersion: 'IPv4',
  addressIpVersion: 'IPV4',
  vips: ['10.0.0.8'],
  status: 1,
  forward: 1,
  tags: {},
  passToTarget: false,
  clusterIds: [],
};

function world() {
  let source = 0;
  let exists = true;
  const listener = (): ListenerInfo => ({ listenerId: 'lbl-1', name: 'tcp', protocol: 'TCP', port: 80, healthCheck: { HealthSwitch: 1, SourceIpType: source }, rules: [] });
  const reader: ClbReader = {
    describeLoadBalancers: async (ids) => (exists ? [LB].filter((lb) => ids.includes(lb.loadBalancerId)) : []),
    describeListeners: async () => [listener()],
    describeTargetHealth: async () => [],
  };
  return { reader, setSource: (s: number) => (source = s), remove: () => (exists = false) };
}

describe('ClbObserver.generation', () => {
  it('moves on a new CLB, a changed read, a write, a drop or a seed; not on a read that finds the same', async () => {
    const w = world();
    const o = new ClbObserver(w.reader);
    const id = LB.loadBalancerId;
    await o.observe([id], 60_000);
    const first = o.generation;
    expect(first).toBe(1);
    await o.reread([id]);
    expect(o.generation).toBe(first);
    w.setSource(1);
    await o.reread([id]);
    expect(o.generation).toBe(first + 1);
    o.listenerSourceWritten(id, 'lbl-1', 0);
    expect(o.generation).toBe(first + 2);
    w.remove();
    await o.reread([id]);
    expect(o.cached(id)).toEqual({ state: 'NotFound', loadBalancerId: id });
    expect(o.generation).toBe(first + 3);
    o.invalidate(id);
    o.invalidate(id);
    expect(o.generation).toBe(first + 4);
    expect(o.seed([{ id, at: 1, observation: { state: 'NotFound', loadBalancerId: id } }])).toBe(1);
    expect(o.generation).toBe(first + 5);
  });
});
