// The observer keeps, besides the model's facts, only what a listener write sends back: each L4 listener's id and
// full HealthCheck as read. Not the SDK's other fields, nor listeners with rules (L7: their source goes through
// TkeServiceConfig), which at 3,000 CLBs were most of what it held.
import { describe, expect, it } from '@jest/globals';
import type { ClbReader, ListenerInfo, LoadBalancerInfo } from '../../src/cloud/index.js';
import { ClbObserver } from '../../src/cloud/clb-observer.js';

const LB: LoadBalancerInfo = {
  loadBalancerId: 'lb-abcd1234',
  name: 'k8s-shop-web',
  type: 'INTERNAL',
  ipVersion: 'IPv4',
  addressIpVersion: 'IPV4',
  vips: ['10.0.0.10'],
  status: 1,
  forward: 1,
  tags: {},
  passToTarget: false,
  clusterIds: [],
};
const FULL_HC = { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 0, ContextType: 'HEX' };
const LISTENERS: ListenerInfo[] = [
  { listenerId: 'lbl-tcp', name: 'TCP-80', protocol: 'TCP', port: 80, healthCheck: FULL_HC, rules: [] },
  { listenerId: 'lbl-udp', name: 'UDP-53', protocol: 'UDP', port: 53, rules: [] },
  { listenerId: 'lbl-http', name: 'HTTP-80', protocol: 'HTTP', port: 8080, keepaliveEnable: 0, rules: [{ locationId: 'loc-1', domain: 'a.example', url: '/', healthCheck: FULL_HC }] },
];

function reader(): ClbReader {
  return {
    describeLoadBalancers: async () => [LB],
    describeListeners: async () => LISTENERS,
    describeTargetHealth: async () => [],
  };
}

describe('ClbObserver raw listeners', () => {
  it('keeps each L4 listener id with its HealthCheck as read, and nothing of listeners with rules', async () => {
    const observer = new ClbObserver(reader());
    await observer.observe([LB.loadBalancerId], 60_000);
    expect(observer.rawListeners(LB.loadBalancerId)).toEqual([{ listenerId: 'lbl-tcp', healthCheck: FULL_HC }, { listenerId: 'lbl-udp' }]);
    // The facts still describe every listener.
    const o = observer.cached(LB.loadBalancerId);
    expect(o?.state === 'Found' ? o.clb.listeners.map((l) => l.listenerId) : []).toEqual(['lbl-tcp', 'lbl-udp', 'lbl-http']);
  });

  it('a source written changes only SourceIpType of the kept struct, and invalidate forgets it', async () => {
    const observer = new ClbObserver(reader());
    await observer.observe([LB.loadBalancerId], 60_000);
    observer.listenerSourceWritten(LB.loadBalancerId, 'lbl-tcp', 1);
    expect(observer.rawListeners(LB.loadBalancerId)?.[0]).toEqual({ listenerId: 'lbl-tcp', healthCheck: { ...FULL_HC, SourceIpType: 1 } });
    observer.invalidate(LB.loadBalancerId);
    expect(observer.rawListeners(LB.loadBalancerId)).toBeUndefined();
  });

  it('sweep forgets the CLBs no round asked for since the bound, whenever they were read, and keeps those asked for', async () => {
    const other = { ...LB, loadBalancerId: 'lb-efgh5678' };
    let now = 1_000;
    const observer = new ClbObserver({ ...reader(), describeLoadBalancers: async (ids) => [LB, other].filter((lb) => ids.includes(lb.loadBalancerId)) }, () => now);
    await observer.observe([LB.loadBalancerId, other.loadBalancerId], 60_000);
    now = 2_000;
    // A round asks for LB again (cached: no read); a drift re-read of the other one is not a round asking for it.
    await observer.observe([LB.loadBalancerId], 60_000);
    await observer.reread([other.loadBalancerId]);
    // Named by a current target: kept however long since a round asked (a long Enforce round writes to it).
    expect(observer.sweep(1_500, (id) => id === other.loadBalancerId)).toEqual([]);
    expect(observer.sweep(1_500)).toEqual([other.loadBalancerId]);
    expect([...observer.entries()].map((e) => e.id)).toEqual([LB.loadBalancerId]);
    expect(observer.cached(other.loadBalancerId)).toBeUndefined();
    expect(observer.rawListeners(other.loadBalancerId)).toBeUndefined();
    expect(observer.cached(LB.loadBalancerId)?.state).toBe('Found');
    // Seeded entries no round asked for count from their read time.
    observer.seed([{ id: other.loadBalancerId, at: 1_400, observation: { state: 'NotFound', loadBalancerId: other.loadBalancerId } }]);
    expect(observer.sweep(1_500)).toEqual([other.loadBalancerId]);
    expect(observer.sweep(1_500)).toEqual([]);
  });
});
