// A Gateway's plan is its Service's L4 plan with the annotation written to the Gateway's own EnvoyProxy
// (docs/gateways.md §3, §5): the same order (originals, sources, prevent-loopback), the same release, and nothing at
// all when no EnvoyProxy of its own can carry it.
import { describe, expect, it } from '@jest/globals';
import { assessTarget } from '../../../src/model/assessment.js';
import type { GatewayFacts } from '../../../src/model/facts.js';
import { PREVENT_LOOPBACK } from '../../../src/plan/l4.js';
import { planOrphan, planPolicy, planTarget } from '../../../src/plan/policy-plan.js';
import { snapshot } from '../reconcile/fixtures.js';
import { describeStep } from '../../../src/plan/steps.js';
import { clb, context, l4Listener, service } from '../model/fixtures.js';

const OWNER = 'shop/gateways';
const input = { owner: OWNER, rejected: { keepalive: false, range100_64: false }, now: new Date(0), graceMs: 10_000 };
const svc = service({ namespace: 'envoy-gateway-system', name: 'envoy-shop-api-1', uid: 'uid-svc', externalTrafficPolicy: 'Local', generatedFor: 'Gateway shop/api' });
const gateway: GatewayFacts = {
  kind: 'Gateway',
  namespace: 'shop',
  name: 'api',
  uid: 'uid-gw',
  className: 'eg',
  service: { state: 'Own', facts: svc },
  envoyProxy: { level: 'Gateway', namespace: 'shop', name: 'api-proxy', state: 'Found', annotations: { 'example.com/team': 'api' } },
  loadBalancerId: 'lb-abc',
};
const assessment = assessTarget(gateway, context({ clb: clb({ tags: { 'tke-lb-serviceuuid': 'uid-svc' }, listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0)] }) }));

describe('a Gateway planned through its own EnvoyProxy', () => {
  it('switches its listeners, then sets prevent-loopback in the EnvoyProxy, recording the original there', () => {
    const plan = planTarget(input, { assessment, annotations: { 'example.com/team': 'api' }, envoyProxy: { namespace: 'shop', name: 'api-proxy' } });
    expect(plan.layer).toBe('L4');
    expect(plan.steps.map((s) => s.kind)).toEqual(['RecordOriginals', 'SetListenerHealthCheckSource', 'AnnotateTarget']);
    const annotate = plan.steps[2]!;
    expect(annotate).toMatchObject({
      kind: 'AnnotateTarget',
      set: { [PREVENT_LOOPBACK]: 'true' },
      envoyProxy: { namespace: 'shop', name: 'api-proxy' },
      // The record names the EnvoyProxy beside the original: a restore goes there even once the Gateway is gone.
      originals: { annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: 'shop', name: 'api-proxy' } },
    });
    expect(describeStep(annotate)).toMatch(/^annotate service\.cloud\.tencent\.com\/prevent-loopback: "true" in EnvoyProxy shop\/api-proxy's envoyService\.annotations; /);
  });

  it('plans nothing without an EnvoyProxy loopguard may write', () => {
    expect(planTarget(input, { assessment, annotations: undefined }).steps).toEqual([]);
  });

  it('releases through the EnvoyProxy: the key back to its original, the sources after kube-proxy lets the VIP go', () => {
    const originals = { v: 1 as const, annotations: { [PREVENT_LOOPBACK]: null }, listeners: { 'lbl-tcp': { sourceIpType: 0 as const } }, loadBalancerId: 'lb-abc', applied: ['annotation:' + PREVENT_LOOPBACK] };
    const release = planOrphan(input, {
      target: { kind: 'Gateway', namespace: 'shop', name: 'api' },
      annotations: { 'example.com/team': 'api', [PREVENT_LOOPBACK]: 'true' },
      envoyProxy: { namespace: 'shop', name: 'api-proxy' },
      ownership: { owner: OWNER, originals },
      loadBalancerId: 'lb-abc',
    });
    expect(release.steps.map((s) => [s.kind, 'envoyProxy' in s ? s.envoyProxy : undefined])).toEqual([
      ['AnnotateTarget', { namespace: 'shop', name: 'api-proxy' }],
      ['AwaitTke', undefined],
    ]);
    expect(release.steps[0]).toMatchObject({ set: { [PREVENT_LOOPBACK]: null }, restore: true });
  });

  describe('a deleted Gateway (its record stale)', () => {
    const originals = { v: 1 as const, annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: 'shop', name: 'api-proxy' }, listeners: { 'lbl-tcp': { sourceIpType: 0 as const } }, loadBalancerId: 'lb-abc' };
    const stale = (envoyProxy?: { namespace: string; name: string }, annotations?: Record<string, string>) =>
      planOrphan(input, { target: { kind: 'Gateway', namespace: 'shop', name: 'api' }, annotations, ...(envoyProxy ? { envoyProxy } : {}), ownership: { owner: OWNER, originals }, stale: true });
    const forgetAll = { kind: 'AnnotateTarget', forget: ['annotation/' + PREVENT_LOOPBACK, 'listener/lbl-tcp/sourceIpType'], drops: true, restore: true };

    it('takes the key out of the EnvoyProxy its record names, and the record away; its CLB went with the Service', () => {
      const release = stale({ namespace: 'shop', name: 'api-proxy' }, { 'example.com/team': 'api', [PREVENT_LOOPBACK]: 'true' });
      expect(release.steps).toEqual([{ ...forgetAll, set: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: 'shop', name: 'api-proxy' } }]);
    });

    it('leaves a key someone put back as it was: only the record goes', () => {
      expect(stale({ namespace: 'shop', name: 'api-proxy' }, { 'example.com/team': 'api' }).steps).toEqual([{ ...forgetAll, set: {}, envoyProxy: { namespace: 'shop', name: 'api-proxy' } }]);
    });

    it("without the EnvoyProxy (gone, or another live Gateway's record holds the key there): only the record goes", () => {
      expect(stale().steps).toEqual([{ ...forgetAll, set: {} }]);
    });
  });

  describe('a Gateway moved to another EnvoyProxy, then released', () => {
    // The record names api-proxy (where loopguard wrote the key); the Gateway now uses new-proxy, where the user set
    // prevent-loopback themselves.
    const moved: GatewayFacts = { ...gateway, envoyProxy: { level: 'Gateway', namespace: 'shop', name: 'new-proxy', state: 'Found', annotations: { [PREVENT_LOOPBACK]: 'true' } } };
    const originals = { v: 1 as const, annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: 'shop', name: 'api-proxy' } };
    const release = (recorded?: { ref: { namespace: string; name: string }; annotations: Record<string, string> }) =>
      planPolicy(snapshot([], { extra: { owner: OWNER, orphans: [{ facts: moved, ownership: { owner: OWNER, originals }, ...(recorded ? { envoyProxy: recorded } : {}) }] } })).releases;

    it('gives the key back in the EnvoyProxy the record names, and leaves the user\'s in the new one', () => {
      const [r] = release({ ref: { namespace: 'shop', name: 'api-proxy' }, annotations: { [PREVENT_LOOPBACK]: 'true' } });
      const annotate = r!.steps.filter((s) => s.kind === 'AnnotateTarget' && Object.keys(s.set).length > 0);
      expect(annotate).toEqual([expect.objectContaining({ set: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: 'shop', name: 'api-proxy' }, restore: true })]);
    });

    it('writes nothing when that EnvoyProxy is gone or another live Gateway holds it: never the one in force now', () => {
      const [r] = release();
      expect((r?.steps ?? []).filter((s) => s.kind === 'AnnotateTarget' && 'envoyProxy' in s)).toEqual([]);
    });
  });

  describe('a Gateway moved to another EnvoyProxy while managed', () => {
    // loopguard wrote the key into api-proxy (the record names it); the Gateway now uses new-proxy.
    const NEW = { namespace: 'shop', name: 'new-proxy' };
    const OLD = { namespace: 'shop', name: 'api-proxy' };
    const moved: GatewayFacts = { ...gateway, envoyProxy: { level: 'Gateway', ...NEW, state: 'Found', annotations: { 'example.com/team': 'api' } } };
    const recorded = { v: 1 as const, annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: OLD, listeners: { 'lbl-tcp': { sourceIpType: 0 as const } }, loadBalancerId: 'lb-abc' };
    const switched = clb({ tags: { 'tke-lb-serviceuuid': 'uid-svc' }, listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] });
    const plan = (facts: GatewayFacts, originals: typeof recorded | Omit<typeof recorded, 'annotations' | 'envoyProxy'>, envoyProxy?: { ref: typeof OLD; annotations: Record<string, string> }) =>
      planPolicy(snapshot([{ facts, clb: { state: 'Found', clb: switched }, ownership: { owner: OWNER, originals }, ...(envoyProxy ? { envoyProxy } : {}) }], { spec: { mode: 'Enforce', targets: ['Gateway'] }, extra: { owner: OWNER } })).targets[0]!.plan.steps;

    it('first gives the key back in the EnvoyProxy the record names and forgets it there; nothing goes into the new one yet', () => {
      expect(plan(moved, recorded, { ref: OLD, annotations: { [PREVENT_LOOPBACK]: 'true' } })).toEqual([
        { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, envoyProxy: OLD, forget: ['annotation/' + PREVENT_LOOPBACK], restore: true },
      ]);
    });

    it("only forgets when that EnvoyProxy is gone or another live Gateway's record holds the key there", () => {
      expect(plan(moved, recorded)).toEqual([{ kind: 'AnnotateTarget', set: {}, forget: ['annotation/' + PREVENT_LOOPBACK], restore: true }]);
    });

    it('a Gateway left with no EnvoyProxy in force gives the key back too', () => {
      const { envoyProxy: _none, ...bare } = moved;
      expect(plan(bare, recorded, { ref: OLD, annotations: { [PREVENT_LOOPBACK]: 'true' } })).toEqual([
        { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, envoyProxy: OLD, forget: ['annotation/' + PREVENT_LOOPBACK], restore: true },
      ]);
    });

    it('then writes the key into the EnvoyProxy in force, the record naming that one', () => {
      const { annotations: _a, envoyProxy: _e, ...rest } = recorded;
      const steps = plan(moved, rest);
      expect(steps.filter((s) => s.kind === 'AnnotateTarget')).toEqual([
        expect.objectContaining({ set: { [PREVENT_LOOPBACK]: 'true' }, envoyProxy: NEW, originals: expect.objectContaining({ annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: NEW }) }),
      ]);
    });

    it('a Gateway still in the EnvoyProxy its record names is not moved', () => {
      const stays: GatewayFacts = { ...gateway, envoyProxy: { level: 'Gateway', ...OLD, state: 'Found', annotations: { [PREVENT_LOOPBACK]: 'true' } } };
      const steps = plan(stays, recorded, { ref: OLD, annotations: { [PREVENT_LOOPBACK]: 'true' } });
      expect(steps.filter((s) => 'forget' in s || ('restore' in s && s.restore))).toEqual([]);
    });
  });
});
