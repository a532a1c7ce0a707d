// Each step kind's effect (src/mitigation/effects.ts) against in-memory implementations of the interfaces it
// writes through: loopguard's ClbClient, KubeWriter and RecordStore (their methods it uses), and the real CLB
// observer over the same in-memory CLB.
import { describe, expect, it } from '@jest/globals';
import type { Originals } from '../../../src/api/originals.js';
import type { HealthCheck, ListenerInfo } from '../../../src/cloud/clb-client.js';
import { ClbObserver } from '../../../src/cloud/clb-observer.js';
import { ClbError } from '../../../src/cloud/errors.js';
import type { TargetRef } from '../../../src/model/facts.js';
import { LearnedCapabilities } from '../../../src/mitigation/capabilities.js';
import { clusterEffects, type EffectDeps } from '../../../src/mitigation/effects.js';
import { applyJsonPatch } from '../../../src/plan/config-patch.js';
import type { Step } from '../../../src/plan/steps.js';

const OWNER = 'shop/p';
const T: TargetRef = { kind: 'Ingress', namespace: 'shop', name: 'front' };
const HC: HealthCheck = { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, SourceIpType: 0 };

function world() {
  const objects = new Map<string, { metadata: { uid: string; annotations: Record<string, string> } }>([['front', { metadata: { uid: 'u1', annotations: {} } }]]);
  const configs = new Map<string, { metadata: { resourceVersion: string }; spec: unknown }>([
    ['cfg', { metadata: { resourceVersion: '1' }, spec: { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } } }],
  ]);
  const listeners = new Map<string, ListenerInfo[]>([['lb-1', [{ listenerId: 'lbl-1', name: 'l', protocol: 'TCP', port: 80, healthCheck: { ...HC }, rules: [] }]]]);
  const passToTarget = new Map<string, boolean>();
  const records = new Map<string, Originals>();
  const events: { type: string; reason: string; message: string; source: { component: string }; lastTimestamp: string }[] = [];
  const writes: string[] = [];
  const capabilities = new LearnedCapabilities();
  const reader = {
    describeLoadBalancers: async () => [],
    describeTargetHealth: async () => [],
    describeListeners: async (id: string) => {
      const ls = listeners.get(id);
      if (!ls) throw new ClbError({ code: 'InvalidParameter.LBIdNotFound', retryable: false, reason: 'ClbNotFound', message: `CLB ${id} not found`, throttled: false, apiMessage: 'not found' });
      return structuredClone(ls);
    },
  };
  const observer = new ClbObserver(reader);
  const deps: EffectDeps = {
    writer: {
      get: async (_kind, _ns, name) => objects.get(name) as never,
      patchAnnotations: async (_kind, _ns, name, compute) => {
        const o = objects.get(name);
        if (!o) return undefined;
        for (const [k, v] of Object.entries(compute(o as never) ?? {})) {
          if (v === null) delete o.metadata.annotations[k];
          else o.metadata.annotations[k] = v as string;
        }
        return o as never;
      },
      patchConfig: async (_ns, name, plan) => {
        const c = configs.get(name);
        if (!c) return 'gone';
        const next = applyJsonPatch(c, plan(c.spec));
        configs.set(name, { metadata: { resourceVersion: String(Number(c.metadata.resourceVersion) + 1) }, spec: next.spec });
        writes.push(`config ${name}`);
        return 'written';
      },
      eventsOf: async () => events as never,
    },
    records: {
      update: async (_target, _owner, change) => {
        const next = change(records.get('front'));
        if (next === undefined) records.delete('front');
        else records.set('front', next);
      },
    },
    clb: {
      describeListeners: reader.describeListeners,
      modifyListenerHealthCheck: async (lb, id, hc) => {
        const l = listeners.get(lb)?.find((x) => x.listenerId === id);
        if (l) l.healthCheck = hc;
        writes.push(`listener ${lb}/${id} ${hc.SourceIpType}`);
        return { taskId: 't', attempts: 1 };
      },
      modifyLoadBalancerPassToTarget: async (lb, to) => {
        passToTarget.set(lb, to);
        writes.push(`pass ${lb} ${to}`);
        return { taskId: 't', attempts: 1 };
      },
    },
    observer,
    capabilities,
  };
  const apply = (step: Step, target: TargetRef = T) => clusterEffects(deps).apply(OWNER, target, step, new AbortController().signal);
  return { objects, configs, listeners, passToTarget, records, events, writes, capabilities, apply };
}

describe('the effect of each step kind', () => {
  it('RecordOriginals merges into the record as stored; a target that is gone is gone', async () => {
    const w = world();
    w.records.set('front', { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } } });
    expect(await w.apply({ kind: 'RecordOriginals', record: { v: 1, listeners: { 'lbl-1': { sourceIpType: 1 }, 'lbl-2': { sourceIpType: 0 } } } })).toEqual({ status: 'done' });
    // The original recorded first survives.
    expect(w.records.get('front')?.listeners).toEqual({ 'lbl-1': { sourceIpType: 0 }, 'lbl-2': { sourceIpType: 0 } });
    expect(await w.apply({ kind: 'RecordOriginals', record: { v: 1 } }, { ...T, name: 'gone' })).toEqual({ status: 'gone' });
  });

  it('AnnotateTarget: the record first, then the annotations; a release forgets after, and an emptied record goes', async () => {
    const w = world();
    await w.apply({ kind: 'AnnotateTarget', set: { a: 'x' }, record: { v: 1, annotations: { a: null } } });
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
