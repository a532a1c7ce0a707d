// The account's default health-check source, judged from the listeners TKE created that nobody is known to have
// switched (src/model/account-default.ts): which listeners witness it, and what they add up to.
import { describe, expect, it } from '@jest/globals';
import { judgeAccountDefault, MIN_WITNESSES, witnessListeners, type AccountEvidence } from '../../../src/model/account-default.js';
import type { ClbFacts, ClbObservation, ServiceFacts } from '../../../src/model/facts.js';
import { clb, l4Listener, service } from './fixtures.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';

/** A private Service with a TCP and a UDP port on its own CLB `lb`, both listeners on `source`. */
function twoPorts(name: string, lb: string, source: 0 | 1, annotations: Record<string, string> = {}, clbExtra: Partial<ClbFacts> = {}, factsExtra: Partial<ServiceFacts> = {}): AccountEvidence {
  const facts: ServiceFacts = service(
    { name, ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], ...factsExtra },
    { 'service.kubernetes.io/loadbalance-id': lb, ...annotations },
  );
  const observed: ClbObservation = {
    state: 'Found',
    clb: clb({ loadBalancerId: lb, listeners: [l4Listener(`${lb}-tcp`, 'TCP', 80, source), l4Listener(`${lb}-udp`, 'UDP', 53, source)], ...clbExtra }),
  };
  return { facts, clb: observed, recorded: false };
}

describe('witnessListeners: which listeners show the account default', () => {
  const cases: [string, AccountEvidence, number][] = [
    ['a Service TKE built, unannotated, no record: both listeners', twoPorts('a', 'lb-a', 1), 2],
    ['prevent-loopback: "false" asks nothing of TKE', twoPorts('a', 'lb-a', 1, { [PREVENT]: 'false' }), 2],
    ['prevent-loopback: "true": TKE switches its listeners', twoPorts('a', 'lb-a', 1, { [PREVENT]: 'true' }), 0],
    ['prevent-loopback unreadable: TKE may still read it as a request', twoPorts('a', 'lb-a', 1, { [PREVENT]: 'yes' }), 0],
    ['a TkeServiceConfig may declare the source', twoPorts('a', 'lb-a', 1, { 'service.cloud.tencent.com/tke-service-config': 'cfg' }), 0],
    ['an auto TkeServiceConfig as well', twoPorts('a', 'lb-a', 1, { 'service.cloud.tencent.com/tke-service-config-auto': 'true' }), 0],
    ['a CLB the user brought may carry listeners the user made', twoPorts('a', 'lb-a', 0, { 'service.kubernetes.io/tke-existed-lbid': 'lb-a' }), 0],
    ['loopguard holds a record', { ...twoPorts('a', 'lb-a', 1), recorded: true }, 0],
    ['loopguard wrote an annotation (a lost record)', twoPorts('a', 'lb-a', 1, {}, {}, { setByLoopguard: { [PREVENT]: '2026-11-01T00:00:00Z' } }), 0],
    ['an IPv6 CLB has no 100.64 source', twoPorts('a', 'lb-a', 0, {}, { addressIpVersion: 'IPv6FullChain' }), 0],
    ['a CLB whose VIP is not the Service\'s (ownership unverified or foreign)', twoPorts('a', 'lb-a', 0, {}, {}, { loadBalancerIps: ['10.9.9.9'] }), 0],
    ['a CLB not read', { ...twoPorts('a', 'lb-a', 0), clb: { state: 'NotObserved' } }, 0],
    ['another load-balancer implementation', twoPorts('a', 'lb-a', 0, {}, {}, { loadBalancerClass: 'example.com/lb' }), 0],
    ['not a LoadBalancer Service', twoPorts('a', 'lb-a', 0, {}, {}, { type: 'ClusterIP' }), 0],
    ['a public CLB gets the default too', twoPorts('a', 'lb-a', 0, {}, { loadBalancerType: 'OPEN' }), 2],
  ];
  it.each(cases)('%s', (_name, evidence, n) => {
    expect(witnessListeners(evidence).size).toBe(n);
  });

  it('only the listeners serving the Service\'s ports (TKE made those)', () => {
    const e = twoPorts('a', 'lb-a', 1);
    if (e.clb.state !== 'Found') throw new Error('fixture');
    const withOther: AccountEvidence = { ...e, clb: { state: 'Found', clb: { ...e.clb.clb, listeners: [...e.clb.clb.listeners, l4Listener('lbl-other', 'TCP', 8080, 0)] } } };
    expect([...witnessListeners(withOther).entries()]).toEqual([
      ['lb-a/lb-a-tcp', 1],
      ['lb-a/lb-a-udp', 1],
    ]);
  });
});

describe('judgeAccountDefault', () => {
  const cases: [string, AccountEvidence[], { source: string; range100_64: number; vip: number; witnesses: string[] }][] = [
    ['no Service', [], { source: 'Unknown', range100_64: 0, vip: 0, witnesses: [] }],
    ['two listeners on 100.64: the 100.64 default', [twoPorts('a', 'lb-a', 1)], { source: 'Range100_64', range100_64: 2, vip: 0, witnesses: ['Service/shop/a'] }],
    ['two listeners on the VIP: the VIP default', [twoPorts('a', 'lb-a', 0)], { source: 'Vip', range100_64: 0, vip: 2, witnesses: ['Service/shop/a'] }],
    [
      'annotated and recorded Services do not count: what is left decides',
      [twoPorts('a', 'lb-a', 0), twoPorts('b', 'lb-b', 1, { [PREVENT]: 'true' }), { ...twoPorts('c', 'lb-c', 1), recorded: true }],
      { source: 'Vip', range100_64: 0, vip: 2, witnesses: ['Service/shop/a'] },
    ],
    ['mixed: some were switched, by whom is unknown', [twoPorts('a', 'lb-a', 0), twoPorts('b', 'lb-b', 1)], { source: 'Unknown', range100_64: 2, vip: 2, witnesses: ['Service/shop/a', 'Service/shop/b'] }],
    ['only annotated Services: nothing to go by', [twoPorts('a', 'lb-a', 1, { [PREVENT]: 'true' })], { source: 'Unknown', range100_64: 0, vip: 0, witnesses: [] }],
    [
      'two Services naming the same CLB: each listener counts once',
      [twoPorts('a', 'lb-a', 1), twoPorts('b', 'lb-a', 1)],
      { source: 'Range100_64', range100_64: 2, vip: 0, witnesses: ['Service/shop/a', 'Service/shop/b'] },
    ],
  ];
  it.each(cases)('%s', (_name, evidence, want) => {
    const got = judgeAccountDefault(evidence);
    expect({ source: got.source, range100_64: got.range100_64, vip: got.vip, witnesses: [...got.witnesses.keys()] }).toEqual(want);
  });

  it(`fewer than ${MIN_WITNESSES} listeners say nothing`, () => {
    const one: AccountEvidence = { ...twoPorts('a', 'lb-a', 1), facts: service({ name: 'a' }, { 'service.kubernetes.io/loadbalance-id': 'lb-a' }) };
    if (one.clb.state !== 'Found') throw new Error('fixture');
    expect(judgeAccountDefault([one])).toMatchObject({ source: 'Unknown', range100_64: 1, vip: 0 });
  });
});
