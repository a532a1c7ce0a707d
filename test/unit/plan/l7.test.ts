// The L7 plan as a table: the Ingress, its CLB, its TkeServiceConfig and its record in, the ordered steps of this
// round out (external-dns plan_test style). A round's steps end where TKE must act first (AwaitTke).
import { describe, expect, it } from '@jest/globals';
import type { Originals } from '../../../src/api/originals.js';
import { assessTarget } from '../../../src/model/assessment.js';
import type { ClbFacts, IngressFacts, ListenerFacts } from '../../../src/model/facts.js';
import type { ConfigView } from '../../../src/plan/l7.js';
import { planL7Release } from '../../../src/plan/l7.js';
import { planTarget } from '../../../src/plan/policy-plan.js';
import { describeStep, type Step } from '../../../src/plan/steps.js';
import { clb, context, ingress as ingressFacts, listener, registryView } from '../model/fixtures.js';

const OWNER = 'shop/p';
const NOW = new Date('2026-11-22T10:00:00Z');
const AUTO = 'ingress.cloud.tencent.com/tke-service-config-auto';
const PASS = 'ingress.cloud.tencent.com/pass-to-target';
const CONFIG = 'front-auto-ingress-config';
const VIP = '10.0.0.9';
/** An Ingress whose status shows its CLB's VIP (as TKE publishes it). */
const ingress = (extra: Parameters<typeof ingressFacts>[0] = {}, annotations: Record<string, string> = {}) => ingressFacts({ loadBalancerIps: [VIP], ...extra }, annotations);

function http(keepalive: 0 | 1, source: 0 | 1): ListenerFacts {
  return listener('lbl-80', 'HTTP', 80, { keepaliveEnable: keepalive, rules: [{ locationId: 'loc-a', domain: 'shop.example.com', url: '/', healthCheck: { sourceIpType: source } }] });
}
const lb = (keepalive: 0 | 1, source: 0 | 1, extra: Partial<ClbFacts> = {}): ClbFacts => clb({ loadBalancerId: 'lb-ing', vips: [VIP], listeners: [http(keepalive, source)], ...extra });
const owned = (r: Originals, extra: Record<string, string> = {}) => ({ 'loopguard.dev/originals': JSON.stringify(r), 'loopguard.dev/policy': OWNER, ...extra });
const declared = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1, domains: [{ domain: 'shop.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] }] }] } };
const autoConfig = (spec: unknown = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } }): ConfigView => ({ name: CONFIG, spec, exists: true });
const KEEPALIVE_AND_SOURCE = { l7: { keepalive: true, healthCheckSource: 'Range100_64' as const } };
const originals: Originals = { v: 1, listeners: { 'lbl-80': { keepaliveEnable: 0, keepaliveAdded: 'field' } }, rules: { 'lbl-80/loc-a': { sourceIpType: 0, added: 'healthCheck' } }, declaredAt: NOW.toISOString(), loadBalancerId: 'lb-ing' };

interface Row {
  name: string;
  ing: IngressFacts;
  clb: ClbFacts;
  config?: ConfigView;
  observedAt?: number;
  steps: Step[];
  error?: string;
}

const rows: Row[] = [
  {
    name: 'no config: ask TKE for its auto config (the original annotation recorded in the same patch), then wait',
    ing: ingress({}, {}),
    clb: lb(0, 0),
    steps: [
      { kind: 'AnnotateTarget', set: { [AUTO]: 'true' }, originals: { v: 1, annotations: { [AUTO]: null }, loadBalancerId: 'lb-ing' } },
      { kind: 'AwaitTke', reason: 'ConfigCreated', loadBalancerId: 'lb-ing', config: CONFIG, since: NOW.toISOString() },
    ],
  },
  {
    name: 'auto annotation on, TKE has not created the config yet: wait',
    ing: ingress({}, { [AUTO]: 'true' }),
    clb: lb(0, 0),
    config: { name: CONFIG, exists: false },
    steps: [{ kind: 'AwaitTke', reason: 'ConfigCreated', loadBalancerId: 'lb-ing', config: CONFIG }],
  },
  {
    name: 'config exists: record originals with declaredAt, declare only loopguard\'s fields, wait for TKE',
    ing: ingress({}, { [AUTO]: 'true' }),
    clb: lb(0, 0),
    config: autoConfig(),
    steps: [
      { kind: 'RecordOriginals', originals },
      {
        kind: 'DeclareInTkeServiceConfig',
        config: CONFIG,
        loadBalancerId: 'lb-ing',
        vip: VIP,
        edits: [
          { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 },
          { kind: 'ruleSource', protocol: 'HTTP', port: 80, domain: 'shop.example.com', url: '/', value: 1, enable: true },
        ],
      },
      { kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-ing', config: CONFIG, since: NOW.toISOString(), wantsKeepalive: true },
    ],
  },
  {
    name: 'declared, TKE not done within the grace period and a fresh read says so: the wait ends (graceOver)',
    ing: ingress({}, owned(originals, { [AUTO]: 'true' })),
    clb: lb(0, 0),
    config: autoConfig(declared),
    observedAt: NOW.getTime() + 10_000,
    steps: [{ kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-ing', config: CONFIG, since: NOW.toISOString(), graceOver: true, wantsKeepalive: true }],
  },
  {
    name: 'declared, the read predates the end of the grace period: still waiting (a restart keeps declaredAt)',
    ing: ingress({}, owned(originals, { [AUTO]: 'true' })),
    clb: lb(0, 0),
    config: autoConfig(declared),
    observedAt: NOW.getTime() + 9_000,
    steps: [{ kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-ing', config: CONFIG, since: NOW.toISOString(), wantsKeepalive: true }],
  },
  {
    name: 'TKE applied it: record what took effect (the drift rule reads it)',
    ing: ingress({}, owned(originals, { [AUTO]: 'true' })),
    clb: lb(1, 1),
    config: autoConfig(declared),
    steps: [{ kind: 'AnnotateTarget', set: {}, originals: { ...originals, applied: ['listener/lbl-80/keepaliveEnable', 'rule/lbl-80/loc-a/sourceIpType'] } }],
  },
  {
    name: 'someone took loopguard\'s declaration out of the config after it took effect: declared again as drift, the grace period restarts',
    ing: ingress({}, owned({ ...originals, declaredAt: '2026-11-22T09:00:00.000Z', applied: ['listener/lbl-80/keepaliveEnable', 'rule/lbl-80/loc-a/sourceIpType'] }, { [AUTO]: 'true' })),
    clb: lb(0, 1),
    config: autoConfig({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] }] }] } }),
    steps: [
      { kind: 'RecordOriginals', originals: { ...originals, applied: ['listener/lbl-80/keepaliveEnable', 'rule/lbl-80/loc-a/sourceIpType'] } },
      { kind: 'DeclareInTkeServiceConfig', config: CONFIG, loadBalancerId: 'lb-ing', vip: VIP, edits: [{ kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 }], drift: true },
      { kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-ing', config: CONFIG, since: NOW.toISOString(), wantsKeepalive: true },
    ],
  },
  {
    name: 'a named config that does not exist: nothing to write, a permanent error naming the fix',
    ing: ingress({}, { 'ingress.cloud.tencent.com/tke-service-config': 'mine' }),
    clb: lb(0, 0),
    config: { name: 'mine', exists: false },
    steps: [],
    error: 'TargetMisconfigured',
  },
];

describe('planL7Target', () => {
  it.each(rows)('$name', (row) => {
    const view = registryView(row.ing.annotations);
    const a = assessTarget({ ...row.ing, annotations: view.annotations }, context({ clb: row.clb, policy: KEEPALIVE_AND_SOURCE }));
    const plan = planTarget(
      { owner: OWNER, rejected: { keepalive: false, range100_64: false }, now: NOW, graceMs: 10_000 },
      { assessment: a, ...view, clb: row.clb, ...(row.observedAt !== undefined ? { observedAt: row.observedAt } : {}), ...(row.config ? { config: row.config } : {}) },
    );
    expect(plan.steps).toEqual(row.steps);
    expect(plan.error?.reason).toBe(row.error);
    for (const s of plan.steps) expect(describeStep(s)).toMatch(/\S/);
  });
});

describe('planL7Release', () => {
  const record: Originals = { ...originals, annotations: { [AUTO]: null } };

  it('declares the originals back and waits until the CLB shows them', () => {
    const { steps } = planL7Release({ originals: record, annotations: owned(record, { [AUTO]: 'true' }), now: NOW, graceMs: 10_000, clb: lb(1, 1), config: autoConfig(declared) });
    expect(steps.map((s) => s.kind)).toEqual(['DeclareInTkeServiceConfig', 'AwaitTke']);
    expect(steps[0]).toMatchObject({ restore: true, edits: [{ kind: 'keepalive', value: 0 }, { kind: 'ruleSource', value: 0 }] });
  });

  it('once the CLB shows them: takes out what loopguard added, then drops the auto annotation it added and the record', () => {
    const restored = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 0, domains: [{ domain: 'shop.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 0 } }] }] }] } };
    const { steps } = planL7Release({ originals: record, annotations: owned(record, { [AUTO]: 'true' }), now: NOW, graceMs: 10_000, clb: lb(0, 0), config: autoConfig(restored) });
    expect(steps.map((s) => s.kind)).toEqual(['RemoveFromTkeServiceConfig', 'AnnotateTarget']);
    expect(steps[1]).toEqual({ kind: 'AnnotateTarget', set: { [AUTO]: null }, forget: [`annotation/${AUTO}`, 'listener/lbl-80/keepaliveEnable', 'rule/lbl-80/loc-a/sourceIpType'], drops: true, restore: true });
  });

  it('a Service on the CLB keeps the VIP bound (prevent-loopback): the rule source stays on 100.64, its declaration stays in the config, its original is forgotten', () => {
    const why = 'kept on 100.64.0.0/10, originals forgotten: ns/api on CLB lb-ing still carries prevent-loopback, which keeps the VIP bound on every node';
    const first = planL7Release({ originals: record, annotations: owned(record, { [AUTO]: 'true' }), now: NOW, graceMs: 10_000, clb: lb(1, 1), config: autoConfig(declared), vipBound: why });
    // Only keepalive is declared back: the rule's sourceIpType is not put back on the VIP.
    expect(first.steps.map((s) => s.kind)).toEqual(['DeclareInTkeServiceConfig', 'AwaitTke']);
    expect(first.steps[0]).toMatchObject({ restore: true, edits: [{ kind: 'keepalive', value: 0 }] });
    // Once the CLB shows keepalive back (the rule still on 100.64): only keepalive's declaration goes, the record goes.
    const keepaliveBack = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 0, domains: [{ domain: 'shop.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] }] }] } };
    const { steps } = planL7Release({ originals: record, annotations: owned(record, { [AUTO]: 'true' }), now: NOW, graceMs: 10_000, clb: lb(0, 1), config: autoConfig(keepaliveBack), vipBound: why });
    expect(steps.map((s) => s.kind)).toEqual(['RemoveFromTkeServiceConfig', 'AnnotateTarget']);
    expect((steps[0] as { removals: { edit: { kind: string } }[] }).removals.map((r) => r.edit.kind)).toEqual(['keepalive']);
    expect(steps[1]).toMatchObject({ kind: 'AnnotateTarget', forget: expect.arrayContaining(['rule/lbl-80/loc-a/sourceIpType']), drops: true, kept: `1 rule source(s) ${why}` });
    expect(describeStep(steps[1] as Step)).toContain('1 rule source(s) kept on 100.64.0.0/10');
  });

  it('the config is gone: nothing can carry the originals to the CLB, so the release does not wait forever', () => {
    const { steps } = planL7Release({ originals: record, annotations: owned(record), now: NOW, graceMs: 10_000, clb: lb(1, 1), config: { name: CONFIG, exists: false } });
    expect(steps).toEqual([{ kind: 'AnnotateTarget', set: { [AUTO]: null }, forget: [`annotation/${AUTO}`, 'listener/lbl-80/keepaliveEnable', 'rule/lbl-80/loc-a/sourceIpType'], drops: true, restore: true }]);
  });

  it('PassToTarget loopguard turned on goes back', () => {
    const r: Originals = { v: 1, loadBalancer: { passToTarget: false } };
    const { steps } = planL7Release({ originals: r, annotations: owned(r), now: NOW, graceMs: 10_000, clb: lb(0, 0, { passToTarget: true }) });
    expect(steps[0]).toEqual({ kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-ing', to: false, restore: true });
  });

  it('PassToTarget loopguard declared: the original declared back through the annotation, TKE awaited, then the annotation given back', () => {
    const r: Originals = { v: 1, loadBalancer: { passToTarget: false }, annotations: { [PASS]: null }, loadBalancerId: 'lb-ing', declaredAt: '2026-11-22T09:00:00.000Z' };
    const on = lb(0, 0, { passToTarget: true });
    const first = planL7Release({ originals: r, annotations: owned(r, { [PASS]: 'true' }), now: NOW, graceMs: 10_000, clb: on });
    expect(first.steps).toEqual([
      { kind: 'AnnotateTarget', set: { [PASS]: 'false' }, originals: { v: 1, declaredAt: NOW.toISOString() }, restore: true },
      { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-ing', since: NOW.toISOString(), fallback: true },
    ]);
    const declaredNow = { ...r, declaredAt: NOW.toISOString() };
    const waiting = planL7Release({ originals: declaredNow, annotations: owned(declaredNow, { [PASS]: 'false' }), now: NOW, graceMs: 10_000, observedAt: NOW.getTime() + 5_000, clb: on });
    expect(waiting.steps).toEqual([{ kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-ing', since: NOW.toISOString(), fallback: true }]);
    const late = planL7Release({ originals: declaredNow, annotations: owned(declaredNow, { [PASS]: 'false' }), now: NOW, graceMs: 10_000, observedAt: NOW.getTime() + 10_000, clb: on });
    expect(late.steps[0]).toMatchObject({ kind: 'SetLoadBalancerPassToTarget', to: false, restore: true, why: expect.stringContaining('TKE did not apply') });
    const done = planL7Release({ originals: declaredNow, annotations: owned(declaredNow, { [PASS]: 'false' }), now: NOW, graceMs: 10_000, clb: lb(0, 0, { passToTarget: false }) });
    expect(done.steps).toEqual([{ kind: 'AnnotateTarget', set: { [PASS]: null }, forget: [`annotation/${PASS}`, 'loadBalancer/passToTarget'], drops: true, restore: true }]);
  });

  it('PassToTarget of an Ingress TKE no longer syncs (mode: skip) goes back directly, saying why', () => {
    const r: Originals = { v: 1, loadBalancer: { passToTarget: false }, annotations: { [PASS]: null }, loadBalancerId: 'lb-ing' };
    const { steps } = planL7Release({ originals: r, annotations: owned(r, { [PASS]: 'true', 'ingress.cloud.tencent.com/mode': 'skip' }), now: NOW, graceMs: 10_000, clb: lb(0, 0, { passToTarget: true }) });
    expect(steps[0]).toEqual({ kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-ing', to: false, restore: true, why: 'TKE does not sync this Ingress (mode: skip)' });
  });
});

describe('planL7Target: LoadBalancerPassToTarget through the Ingress annotation (TKE\'s interface)', () => {
  const POLICY = { l7: { keepalive: true, healthCheckSource: 'Unmanaged' as const, allowCLBTrafficByDefault: true } };
  const plan = (annotations: Record<string, string>, clbFacts: ClbFacts, observedAt?: number) => {
    const view = registryView(ingress({}, annotations).annotations);
    const a = assessTarget({ ...ingress({}, annotations), annotations: view.annotations }, context({ clb: clbFacts, policy: POLICY }));
    return planTarget(
      { owner: OWNER, rejected: { keepalive: false, range100_64: false }, now: NOW, graceMs: 10_000 },
      { assessment: a, ...view, clb: clbFacts, ...(observedAt !== undefined ? { observedAt } : {}), config: autoConfig() },
    ).steps;
  };
  const declaredRecord: Originals = { v: 1, loadBalancer: { passToTarget: false }, annotations: { [PASS]: null }, loadBalancerId: 'lb-ing', declaredAt: NOW.toISOString() };

  it('declares "true" with the originals in the same patch, then waits for TKE before keepalive', () => {
    expect(plan({ [AUTO]: 'true' }, lb(0, 0, { passToTarget: false }))).toEqual([
      { kind: 'AnnotateTarget', set: { [PASS]: 'true' }, originals: declaredRecord },
      { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-ing', since: NOW.toISOString(), fallback: true },
    ]);
  });

  it('TKE has not applied it within the grace period: the same value written directly, saying why, and keepalive goes on', () => {
    const steps = plan(owned(declaredRecord, { [AUTO]: 'true', [PASS]: 'true' }), lb(0, 0, { passToTarget: false }), NOW.getTime() + 10_000);
    expect(steps[0]).toEqual({ kind: 'RecordOriginals', originals: expect.objectContaining({ loadBalancer: { passToTarget: false } }) });
    expect(steps[1]).toEqual({ kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-ing', to: true, why: `TKE did not apply ${PASS}: "true" within 10 s` });
    expect(steps.map((s) => s.kind)).toContain('DeclareInTkeServiceConfig');
    expect(describeStep(steps[1]!)).toContain('directly (TKE did not apply');
  });

  it('within the grace period: waits', () => {
    expect(plan(owned(declaredRecord, { [AUTO]: 'true', [PASS]: 'true' }), lb(0, 0, { passToTarget: false }), NOW.getTime() + 5_000)).toEqual([
      { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-ing', since: NOW.toISOString(), fallback: true },
    ]);
  });

  it('"true" the user declared: TKE\'s to apply; loopguard writes nothing, and the wait (no fallback) ends in the executor', () => {
    expect(plan({ [AUTO]: 'true', [PASS]: 'true' }, lb(0, 0, { passToTarget: false }), NOW.getTime() + 60_000)).toEqual([
      { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-ing' },
    ]);
  });

  it('"false" the user declared: never overruled (advice, no step)', () => {
    const steps = plan({ [AUTO]: 'true', [PASS]: 'false' }, lb(0, 0, { passToTarget: false }));
    expect(steps.some((s) => s.kind === 'SetLoadBalancerPassToTarget' || (s.kind === 'AnnotateTarget' && PASS in s.set))).toBe(false);
  });
});
