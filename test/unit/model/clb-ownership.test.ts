// The CLB a target names is checked against what a namespace user cannot write: TKE's owner tags and status.
import { describe, expect, it } from '@jest/globals';
import { clbOwnership } from '../../../src/model/clb-ownership.js';
import { clb, context, ingress, service } from './fixtures.js';
import { assessTarget } from '../../../src/model/assessment.js';

describe('clbOwnership', () => {
  const rows = [
    { name: 'owner tag names this Service', target: service({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-serviceuuid': 'u1' } }), state: 'Own' },
    { name: 'owner tag names this Service; status empty does not matter', target: service({ uid: 'u1', loadBalancerIps: [] }), clb: clb({ tags: { 'tke-lb-serviceuuid': 'u1' } }), state: 'Own' },
    { name: 'owner tag names another Service', target: service({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-serviceuuid': 'u2' } }), state: 'Foreign' },
    { name: 'owner tag present, this Service has no uid', target: service(), clb: clb({ tags: { 'tke-lb-serviceuuid': 'u2' } }), state: 'Foreign' },
    { name: "an Ingress's CLB named by a Service", target: service({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-ingress-uuid': 'u1' } }), state: 'Foreign' },
    { name: "a Service's CLB named by an Ingress", target: ingress({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-serviceuuid': 'u1' } }), state: 'Foreign' },
    { name: 'Ingress owner tag matches', target: ingress({ uid: 'i1' }), clb: clb({ tags: { 'tke-lb-ingress-uuid': 'i1' } }), state: 'Own' },
    { name: 'no owner tag (existing CLB): status VIP is one of the CLB VIPs', target: service({ loadBalancerIps: ['10.0.0.10'] }), clb: clb(), state: 'Own' },
    { name: 'no owner tag: status VIP is another address', target: service({ loadBalancerIps: ['10.0.0.99'] }), clb: clb(), state: 'Foreign' },
    { name: 'no owner tag, no status yet', target: service({ loadBalancerIps: [] }), clb: clb(), state: 'Unverified' },
    { name: 'IPv6 CLB: status shows its IPv6 address', target: service({ loadBalancerIps: ['2001:db8::5'] }), clb: clb({ vips: [], ipv6Address: '2001:db8::5' }), state: 'Own' },
    { name: 'unrelated tags are ignored', target: service({ loadBalancerIps: ['10.0.0.10'] }), clb: clb({ tags: { 'tke-createdBy-flag': 'yes', team: 'a' } }), state: 'Own' },
  ] as const;
  it.each(rows)('$name → $state', ({ target, clb: c, state }) => {
    expect(clbOwnership(target, c).state).toBe(state);
  });

  // Issue 22 #9: the message reaches an Event and the status in the target's namespace, read by whoever forged the id.
  it.each([
    { name: "another Service's uid", target: service({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-serviceuuid': 'victim-uid-0001' } }) },
    { name: "an Ingress's uid", target: service({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-ingress-uuid': 'victim-uid-0001' } }) },
    { name: "a Service's uid, named by an Ingress", target: ingress({ uid: 'u1' }), clb: clb({ tags: { 'tke-lb-serviceuuid': 'victim-uid-0001' } }) },
    { name: "the CLB's own addresses", target: service({ loadBalancerIps: ['10.0.0.99'] }), clb: clb({ vips: ['10.9.9.9'] }) },
  ])('a foreign CLB message never quotes the owner ($name) nor its kind', ({ target, clb: c }) => {
    const o = clbOwnership(target, c);
    if (o.state !== 'Foreign') throw new Error(`expected Foreign, got ${o.state}`);
    expect(o.why).toMatch(/^CLB lb-\S+ belongs to another object, which loopguard will not touch \(/);
    expect(o.why).not.toMatch(/victim-uid|10\.9\.9\.9|tke-lb-|uid/);
    // The only kind it names is the target's own.
    const other = target.kind === 'Service' ? 'Ingress' : 'Service';
    expect(o.why).not.toContain(other);
  });
});

describe('assessTarget: a Service with a CLB that is not its own', () => {
  it('is a ForeignClb conflict with no changes, before any other verdict about the CLB', () => {
    const a = assessTarget(service({ uid: 'u1', externalTrafficPolicy: 'Local' }), context({ clb: clb({ loadBalancerType: 'OPEN', tags: { 'tke-lb-serviceuuid': 'victim' } }) }));
    expect(a.verdict).toBe('Conflict');
    expect(a.rootCause.id).toBe('ForeignClb');
    expect(a.changes).toEqual([]);
    expect(a.desired).toBeUndefined();
    expect(a.rootCause.message).toMatch(/service\.kubernetes\.io\/loadbalance-id is written by TKE/);
  });

  it('is Pending (ClbOwnershipUnverified) while status has no address and the CLB no owner tag', () => {
    const a = assessTarget(service({ loadBalancerIps: [], externalTrafficPolicy: 'Local' }), context({}));
    expect(a.verdict).toBe('Pending');
    expect(a.rootCause.id).toBe('ClbOwnershipUnverified');
  });
});
