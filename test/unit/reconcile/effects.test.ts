// Each step kind's effect (src/mitigation/steps/) against in-memory implementations of the interfaces it writes
// through (cluster-world.ts): loopguard's ClbClient, KubeWriter and RecordStore (their methods it uses), and the real
// CLB observer over the same in-memory CLB.
import { describe, expect, it } from '@jest/globals';
import type { Step } from '../../../src/plan/steps.js';
import { clusterWorld as world, HC, T } from './cluster-world.js';

describe('the effect of each step kind', () => {
  it('RecordOriginals merges into the record as stored; a target that is gone is gone', async () => {
    const w = world();
    w.records.set('front', { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } } });
    expect(await w.apply({ kind: 'RecordOriginals', originals: { v: 1, listeners: { 'lbl-1': { sourceIpType: 1 }, 'lbl-2': { sourceIpType: 0 } } } })).toEqual({ status: 'done' });
    // The original recorded first survives.
    expect(w.records.get('front')?.listeners).toEqual({ 'lbl-1': { sourceIpType: 0 }, 'lbl-2': { sourceIpType: 0 } });
    expect(await w.apply({ kind: 'RecordOriginals', originals: { v: 1 } }, { ...T, name: 'gone' })).toEqual({ status: 'gone' });
  });

  it('AnnotateTarget: the record first, then the annotations; a release forgets after, and an emptied record goes', async () => {
    const w = world();
    await w.apply({ kind: 'AnnotateTarget', set: { a: 'x' }, originals: { v: 1, annotations: { a: null } } });
    expect(w.objects.get('front')?.metadata.annotations).toEqual({ a: 'x' });
    expect(w.records.get('front')?.annotations).toEqual({ a: null });
    expect(await w.apply({ kind: 'AnnotateTarget', set: { a: null }, forget: ['annotation/a'], drops: true, restore: true })).toEqual({ status: 'done' });
    expect(w.objects.get('front')?.metadata.annotations).toEqual({});
    expect(w.records.has('front')).toBe(false);
    // Gone: nothing to annotate; a release still forgets, anything else is gone.
    expect(await w.apply({ kind: 'AnnotateTarget', set: { a: 'x' } }, { ...T, name: 'gone' })).toEqual({ status: 'gone' });
    expect(await w.apply({ kind: 'AnnotateTarget', set: {}, forget: ['annotation/a'] }, { ...T, name: 'gone' })).toEqual({ status: 'done' });
  });

  it('SetListenerHealthCheckSource changes only SourceIpType and forgets a learned 100.64 refusal', async () => {
    const w = world();
    w.capabilities.learn('range100_64Rejected', 'refused');
    const step: Step = { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 1 };
    expect(await w.apply(step)).toEqual({ status: 'done' });
    expect(w.listeners.get('lb-1')?.[0]?.healthCheck).toEqual({ ...HC, SourceIpType: 1 });
    expect(w.capabilities.snapshot().range100_64Rejected).toBeUndefined();
    // Already so: nothing written.
    await w.apply(step);
    expect(w.writes).toEqual(['listener lb-1/lbl-1 1']);
  });

  it('SetListenerHealthCheckSource: a late switch TKE made meanwhile is superseded; a vanished listener is transient; a restore on a gone CLB is done', async () => {
    const w = world();
    w.listeners.get('lb-1')![0]!.healthCheck = { ...HC, SourceIpType: 1 };
    const late: Step = { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 1, why: 'TKE did not switch it' };
    expect(await w.apply(late)).toMatchObject({ status: 'superseded' });
    expect(await w.apply({ ...late, listenerId: 'lbl-9', why: undefined } as Step)).toMatchObject({ status: 'failed', error: { reason: 'ListenerNotFound', permanent: false } });
    expect(await w.apply({ kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-gone', listenerId: 'x', protocol: 'TCP', port: 80, to: 0, restore: true })).toEqual({ status: 'done' });
    await expect(w.apply({ kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-gone', listenerId: 'x', protocol: 'TCP', port: 80, to: 1 })).rejects.toThrow(/not found/);
    expect(w.writes).toEqual([]);
  });

  it('SetLoadBalancerPassToTarget writes the CLB attribute', async () => {
    const w = world();
    expect(await w.apply({ kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-1', to: true })).toEqual({ status: 'done' });
    expect(w.passToTarget.get('lb-1')).toBe(true);
  });

  it('DeclareInTkeServiceConfig patches only the declared fields; a config gone meanwhile means planning again', async () => {
    const w = world();
    const declare: Step = { kind: 'DeclareInTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', vip: '10.0.0.9', edits: [{ kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 }] };
    expect(await w.apply(declare)).toEqual({ status: 'done' });
    expect(w.configs.get('cfg')?.spec).toEqual({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } });
    expect(await w.apply({ ...declare, config: 'missing' })).toMatchObject({ status: 'waiting', note: expect.stringMatching(/disappeared/) });
    expect(await w.apply({ kind: 'RemoveFromTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', vip: '10.0.0.9', removals: [{ edit: { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 }, level: 'field' }] })).toEqual({ status: 'done' });
    expect(w.configs.get('cfg')?.spec).toEqual({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } });
  });

  it('a change TKE syncs (annotations, config edits) first spends a DescribeListeners of the budget; bookkeeping alone does not; a refused wait changes nothing', async () => {
    const w = world();
    await w.apply({ kind: 'AnnotateTarget', set: { a: 'x' } });
    await w.apply({ kind: 'AnnotateTarget', set: {}, forget: ['annotation/a'] });
    const edit = { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 } as const;
    await w.apply({ kind: 'DeclareInTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', vip: '10.0.0.9', edits: [edit] });
    await w.apply({ kind: 'RemoveFromTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', vip: '10.0.0.9', removals: [{ edit, level: 'field' }] });
    expect(w.reserved).toEqual(['DescribeListeners', 'DescribeListeners', 'DescribeListeners']);
    // An annotation already as asked: no sync for TKE, nothing spent.
    await w.apply({ kind: 'AnnotateTarget', set: { a: 'x' } });
    expect(w.reserved).toHaveLength(3);
    // The wait comes before any write: shutdown ending it leaves the record and the object as they were.
    w.refuseReserve.error = new DOMException('shutting down', 'AbortError');
    const record = structuredClone(w.records.get('front'));
    await expect(w.apply({ kind: 'AnnotateTarget', set: { a: 'y' }, originals: { v: 1, annotations: { a: 'x' } } })).rejects.toThrow('shutting down');
    expect(w.records.get('front')).toEqual(record);
    await expect(w.apply({ kind: 'DeclareInTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', vip: '10.0.0.9', edits: [edit] })).rejects.toThrow('shutting down');
    expect(w.objects.get('front')?.metadata.annotations).toEqual({ a: 'x' });
    expect(w.configs.get('cfg')?.spec).toEqual({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } });
  });

  describe('AwaitTke', () => {
    const applied = (extra: Partial<Extract<Step, { kind: 'AwaitTke' }>> = {}): Step => ({ kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-1', config: 'cfg', since: new Date(Date.now() - 60_000).toISOString(), ...extra });
    const tkeWarning = (message: string) => ({ type: 'Warning', reason: 'SyncLoadBalancerFailed', message, source: { component: 'l7-lb-controller' }, lastTimestamp: new Date().toISOString() });

    it('waits for what TKE was asked; a wait for the config to apply waits until the grace period is over', async () => {
      const w = world();
      expect(await w.apply({ kind: 'AwaitTke', reason: 'SourceSwitched', loadBalancerId: 'lb-1' })).toMatchObject({ status: 'waiting', note: expect.stringMatching(/prevent-loopback/) });
      expect(await w.apply(applied())).toMatchObject({ status: 'waiting', note: expect.stringMatching(/for TKE to apply TkeServiceConfig cfg to CLB lb-1/) });
    });

    it.each([
      ['TKE refused keepalive: the capability is learned', [tkeWarning('keepalive: FailedOperation, the capability is not enabled')], {}, 'KeepaliveCapabilityMissing', true],
      ["TKE failed otherwise: TKE's message quoted", [tkeWarning('subnet is full')], {}, 'TkeSyncFailed', false],
      ['grace period over, keepalive wanted, no word from TKE', [], { graceOver: true, wantsKeepalive: true }, 'KeepaliveCapabilityMissing', false],
      ['grace period over, a rule source not applied', [], { graceOver: true }, 'TkeSyncFailed', false],
    ] as const)('%s', async (_name, events, extra, reason, learned) => {
      const w = world();
      w.events.push(...events);
      const result = await w.apply(applied(extra));
      expect(result).toMatchObject({ status: 'failed', error: { reason, permanent: true } });
      expect(w.capabilities.snapshot().keepaliveRejected !== undefined).toBe(learned);
    });
  });
});
