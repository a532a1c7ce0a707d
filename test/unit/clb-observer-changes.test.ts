// The observer tells who works on a CLB that a read found it changed (onChange, routing.ts), never when a read finds
// what was cached (as a plan reads it), nor for a first read, loopguard's own writes, a drop or a seed.
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
  let healthy = true;
  const listener = (): ListenerInfo => ({ listenerId: 'lbl-1', name: 'tcp', protocol: 'TCP', port: 80, healthCheck: { HealthSwitch: 1, SourceIpType: source }, rules: [] });
  const reader: ClbReader = {
    describeLoadBalancers: async (ids) => (exists ? [LB].filter((lb) => ids.includes(lb.loadBalancerId)) : []),
    describeListeners: async () => [listener()],
    describeTargetHealth: async (ids) =>
      ids.map((loadBalancerId) => ({
        loadBalancerId,
        listeners: [{ listenerId: 'lbl-1', protocol: 'TCP', port: 80, rules: [{ locationId: 'loc-1', targets: [{ ip: '10.0.0.1', port: 30080, healthy, status: healthy ? 'Alive' : 'Dead' }] }] }],
      })),
  };
  return { reader, setSource: (s: number) => (source = s), setHealthy: (h: boolean) => (healthy = h), remove: () => (exists = false) };
}

describe('ClbObserver.onChange', () => {
  it('on a changed read or a CLB gone; not on a first read, a read that finds the same, a write, a drop or a seed', async () => {
    const w = world();
    const o = new ClbObserver(w.reader);
    const changes: string[] = [];
    o.onChange = (id) => void changes.push(id);
    const id = LB.loadBalancerId;
    // A first read: whoever planned the CLB's targets before planned them without it, and they stay pending.
    await o.observe([id], 60_000);
    expect(changes).toEqual([]);
    await o.reread([id]);
    expect(changes).toEqual([]);
    w.setSource(1);
    await o.reread([id]);
    expect(changes).toEqual([id]);
    // loopguard's own write: the round that made it planned on it.
    o.listenerSourceWritten(id, 'lbl-1', 0);
    expect(changes).toHaveLength(1);
    // Read back as written: nothing new.
    w.setSource(0);
    await o.reread([id]);
    expect(changes).toHaveLength(1);
    w.remove();
    await o.reread([id]);
    expect(o.cached(id)).toEqual({ state: 'NotFound', loadBalancerId: id });
    expect(changes).toEqual([id, id]);
    o.invalidate(id);
    expect(o.seed([{ id, at: 1, observation: { state: 'NotFound', loadBalancerId: id } }])).toBe(1);
    expect(changes).toHaveLength(2);
  });

  it("backend health: news behind a VIP source (a bound VIP shows so), not behind 100.64's (no plan reads it)", async () => {
    const w = world();
    const o = new ClbObserver(w.reader);
    const changes: string[] = [];
    o.onChange = (id) => void changes.push(id);
    const id = LB.loadBalancerId;
    await o.reread([id]);
    expect(o.cached(id)).toMatchObject({ clb: { listeners: [{ health: { alive: 1, dead: 0 } }] } });
    w.setHealthy(false);
    await o.reread([id]);
    expect(changes).toEqual([id]);
    w.setSource(1);
    await o.reread([id]);
    expect(changes).toEqual([id, id]);
    w.setHealthy(true);
    await o.reread([id]);
    expect(changes).toHaveLength(2);
    expect(o.cached(id)).toMatchObject({ clb: { listeners: [{ health: { alive: 1, dead: 0 } }] } });
  });
});

describe('ClbObserver.observe after a seed', () => {
  it("trusts a seeded read for the checkpoint's full cycle, a read of its own for the caller's bound", async () => {
    const w = world();
    let reads = 0;
    const counting: ClbReader = { ...w.reader, describeListeners: async (...a) => (reads++, w.reader.describeListeners(...a)) };
    const MIN = 60_000;
    let now = 100 * MIN;
    const o = new ClbObserver(counting, () => now);
    const id = LB.loadBalancerId;
    const found = await (async () => {
      const probe = new ClbObserver(w.reader, () => 0);
      await probe.observe([id], MIN);
      return probe.cached(id)!;
    })();
    // Read 20 minutes ago by the previous leader; the checkpoint of its 3,000 CLBs trusts reads for 25 minutes.
    o.seed([{ id, at: now - 20 * MIN, observation: found }], 25 * MIN);
    await o.observe([id], 5 * MIN);
    expect(reads).toBe(0);
    // Past the checkpoint's cycle: read again.
    now += 6 * MIN;
    await o.observe([id], 5 * MIN);
    expect(reads).toBe(1);
    // Its own read is held to the caller's bound.
    now += 6 * MIN;
    await o.observe([id], 5 * MIN);
    expect(reads).toBe(2);
  });
});
