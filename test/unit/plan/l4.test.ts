// The L4 plan as a table (external-dns plan_test style): the Service's facts, its CLB and its record in, the
// ordered steps out. Order is the contract: originals → sources → prevent-loopback with the applied record;
// release: annotation → sources → record.
import { describe, expect, it } from '@jest/globals';
import type { Originals } from '../../../src/api/originals.js';
import type { LoopbackPolicySpec } from '../../../src/api/loopbackpolicy.js';
import type { ListenerInfo } from '../../../src/cloud/index.js';
import { assessTarget } from '../../../src/model/assessment.js';
import type { ClbFacts, ServiceFacts } from '../../../src/model/facts.js';
import { isPermanent } from '../../../src/mitigation/errors.js';
import { LARGE_CLB_LISTENERS, PREVENT_LOOPBACK, healthCheckFor, keptBy, planL4Release, planL4Target } from '../../../src/plan/l4.js';
import { planOrphan, planTarget, type OrphanTarget } from '../../../src/plan/policy-plan.js';

/** The releases a policy plans for these orphans (planPolicy keeps those with steps). */
function releases(orphans: readonly OrphanTarget[]): { releases: ReturnType<typeof planOrphan>[] } {
  return { releases: orphans.map((o) => planOrphan({ owner: OWNER, now: new Date(0), graceMs: 0 }, o)).filter((p) => p.steps.length > 0) };
}
import { describeStep, type Step } from '../../../src/plan/steps.js';
import { clb, context, l4Listener, registryView, service } from '../model/fixtures.js';
import type { AccountCapabilities } from '../../../src/model/facts.js';

const OWNER = 'ns/p';
const two = (a: 0 | 1, b: 0 | 1) => clb({ listeners: [l4Listener('lbl-tcp', 'TCP', 80, a), l4Listener('lbl-udp', 'UDP', 53, b), l4Listener('lbl-other', 'TCP', 9000, 0)] });
const ports = [
  { port: 80, protocol: 'TCP' as const },
  { port: 53, protocol: 'UDP' as const },
];
const record = (r: Omit<Originals, 'v'>): Originals => ({ v: 1, ...r });
const owned = (r: Originals, extra: Record<string, string> = {}) => ({ 'loopguard.dev/originals': JSON.stringify(r), 'loopguard.dev/policy': OWNER, ...extra });

interface Row {
  name: string;
  svc: ServiceFacts;
  clb: ClbFacts | { state: 'NotObserved' };
  profile?: 'ipvsNew' | 'ipvsOld';
  policy?: LoopbackPolicySpec;
  capabilities?: AccountCapabilities;
  /** Now and when the CLB was read, in ms since the epoch (default 0 and unknown); TKE's grace period is 10 s. */
  now?: number;
  observedAt?: number;
  steps: Step[];
}

const recorded = record({ listeners: { 'lbl-tcp': { sourceIpType: 0 }, 'lbl-udp': { sourceIpType: 0 } }, loadBalancerId: 'lb-abc' });
const converged = record({ ...recorded, annotations: { [PREVENT_LOOPBACK]: null }, applied: ['annotation/' + PREVENT_LOOPBACK, 'listener/lbl-tcp/sourceIpType', 'listener/lbl-udp/sourceIpType'] });

// TKE asked to switch (prevent-loopback) at t = 0: the originals and the time it was asked, in one record.
const T0 = new Date(0).toISOString();
const asked = record({ ...recorded, annotations: { [PREVENT_LOOPBACK]: null }, declaredAt: T0 });
const askedByUser = record({ ...recorded, declaredAt: T0 });
const TKE_FIRST: LoopbackPolicySpec = { l4: { sourceSwitch: 'TKEFirst' } };
const awaitTke: Step = { kind: 'AwaitTke', reason: 'SourceSwitched', loadBalancerId: 'lb-abc', since: T0, fallback: true };
const late = 'TKE did not switch it within 10 s of prevent-loopback';

const rows: Row[] = [
  {
    name: 'first mitigation: record, switch each serving listener, then annotate with the applied record',
    svc: service({ externalTrafficPolicy: 'Local', ports }),
    clb: two(0, 0),
    steps: [
      { kind: 'RecordOriginals', originals: recorded },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1 },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1 },
      { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: converged },
    ],
  },
  {
    name: 'listeners already on 100.64 before loopguard: only the annotation, its original recorded in the same patch',
    svc: service({ externalTrafficPolicy: 'Local', ports }),
    clb: two(1, 1),
    steps: [{ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: record({ annotations: { [PREVENT_LOOPBACK]: null }, applied: ['annotation/' + PREVENT_LOOPBACK] }) }],
  },
  {
    name: 'ipvs-old (Auto): kube-proxy does not bind the VIP, so VIP-sourced checks work: nothing to write',
    svc: service({ externalTrafficPolicy: 'Local', ports }),
    clb: two(0, 0),
    profile: 'ipvsOld',
    steps: [],
  },
  {
    name: 'converged: nothing',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(converged, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(1, 1),
    steps: [],
  },
  {
    name: 'drift: a source loopguard had applied is back on the VIP; corrected, no new record',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(converged, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 1),
    steps: [{ kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1, drift: true }],
  },
  {
    name: 'a crash after the switches: the next round only marks them applied and annotates (no drift)',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(recorded)),
    clb: two(1, 1),
    steps: [{ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: converged }],
  },
  {
    name: 'public CLB after loopguard changed it: prevent-loopback given back, the sources left as they are (public CLBs are left alone)',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(converged, { [PREVENT_LOOPBACK]: 'true' })),
    clb: { ...two(1, 1), loadBalancerType: 'OPEN' },
    steps: [
      { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, restore: true },
      { kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`] },
    ],
  },
  {
    name: "the CLB id now names another Service's CLB (owner tag): a foreign CLB, nothing written, the record kept",
    svc: service({ externalTrafficPolicy: 'Local', ports, uid: 'uid-web' }, owned(converged, { [PREVENT_LOOPBACK]: 'true' })),
    clb: { ...two(0, 0), tags: { 'tke-lb-serviceuuid': 'uid-of-another-service' } },
    steps: [],
  },
  {
    name: "the CLB id now names a CLB whose VIP is not in the Service's status: a foreign CLB, nothing written",
    svc: service({ externalTrafficPolicy: 'Local', ports, loadBalancerIps: ['10.9.9.9'] }, owned(converged, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 0),
    steps: [],
  },
  {
    name: 'opted out with the CLB id changed to another CLB: the sources are restored on the CLB they were recorded from',
    svc: service(
      { externalTrafficPolicy: 'Local', ports },
      // prevent-loopback already taken off (an earlier round, 11 s ago): kube-proxy has had its grace period.
      owned({ ...converged, declaredAt: T0 }, { 'loopguard.dev/skip': 'true', 'service.kubernetes.io/loadbalance-id': 'lb-victim' }),
    ),
    clb: two(1, 1),
    now: 11_000,
    steps: [
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`, 'listener/lbl-tcp/sourceIpType', 'listener/lbl-udp/sourceIpType'], drops: true },
    ],
  },
  {
    name: 'opted out (loopguard.dev/skip) after loopguard changed it: annotation first, its time recorded, then a wait for kube-proxy to release the VIP',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(converged, { [PREVENT_LOOPBACK]: 'true', 'loopguard.dev/skip': 'true' })),
    clb: two(1, 1),
    steps: [
      { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, restore: true, originals: { v: 1, declaredAt: T0 } },
      { kind: 'AwaitTke', reason: 'VipReleased', loadBalancerId: 'lb-abc', since: T0, fallback: true },
    ],
  },
  {
    name: 'opted out, prevent-loopback taken off 5 s ago: still waiting, nothing back on the VIP yet',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned({ ...converged, declaredAt: T0 }, { 'loopguard.dev/skip': 'true' })),
    clb: two(1, 1),
    now: 5_000,
    steps: [{ kind: 'AwaitTke', reason: 'VipReleased', loadBalancerId: 'lb-abc', since: T0, fallback: true }],
  },
  {
    name: 'opted out, the grace period over: the sources go back, then the record',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned({ ...converged, declaredAt: T0 }, { 'loopguard.dev/skip': 'true' })),
    clb: two(1, 1),
    now: 10_000,
    steps: [
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`, 'listener/lbl-tcp/sourceIpType', 'listener/lbl-udp/sourceIpType'], drops: true },
    ],
  },
  {
    name: 'Pending (CLB not read): nothing is planned, whatever the record says',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(converged, { [PREVENT_LOOPBACK]: 'true' })),
    clb: { state: 'NotObserved' },
    steps: [],
  },
  {
    name: 'another policy\'s record: taken over, its originals kept (never loopguard\'s own value as "original")',
    svc: service({ externalTrafficPolicy: 'Local', ports }, { 'loopguard.dev/originals': JSON.stringify(record({ listeners: { 'lbl-tcp': { sourceIpType: 0 } } })), 'loopguard.dev/policy': 'ns/old' }),
    clb: two(1, 0),
    steps: [
      { kind: 'RecordOriginals', originals: recorded },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1 },
      { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: converged },
    ],
  },
  {
    name: 'TKE moved the Service to a new CLB: the old CLB\'s listeners are given back there and forgotten, then the new CLB is recorded and switched',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned({ ...converged, loadBalancerId: 'lb-old' }, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 0),
    steps: [
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-old', listenerId: 'lbl-tcp', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-old', listenerId: 'lbl-udp', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'AnnotateTarget', set: {}, forget: ['listener/lbl-tcp/sourceIpType', 'listener/lbl-udp/sourceIpType'] },
      { kind: 'RecordOriginals', originals: record({ annotations: { [PREVENT_LOOPBACK]: null }, applied: ['annotation/' + PREVENT_LOOPBACK], ...recorded }) },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1 },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1 },
      { kind: 'AnnotateTarget', set: {}, originals: converged },
    ],
  },
];

const tkeRows: Row[] = [
  {
    name: 'TKEFirst: prevent-loopback first, with the originals and the time TKE was asked, then wait for TKE',
    svc: service({ externalTrafficPolicy: 'Local', ports }),
    clb: two(0, 0),
    policy: TKE_FIRST,
    steps: [{ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: asked }, awaitTke],
  },
  {
    name: 'TKEFirst, within the grace period: still waiting, nothing written',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(asked, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 0),
    policy: TKE_FIRST,
    now: 9_000,
    observedAt: 9_000,
    steps: [awaitTke],
  },
  {
    name: 'TKEFirst, a CLB read from before the grace period ended: still waiting (it may predate TKE\'s work)',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(asked, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 0),
    policy: TKE_FIRST,
    now: 60_000,
    observedAt: 9_999,
    steps: [awaitTke],
  },
  {
    name: 'TKEFirst, TKE switched them: loopguard writes no listener, only records what took effect',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(asked, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(1, 1),
    policy: TKE_FIRST,
    now: 3_000,
    observedAt: 3_000,
    steps: [{ kind: 'AnnotateTarget', set: {}, originals: { ...converged, declaredAt: T0 } }],
  },
  {
    name: 'TKEFirst, grace period over with one listener still on the VIP: loopguard writes that one, saying why',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(asked, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(1, 0),
    policy: TKE_FIRST,
    now: 10_000,
    observedAt: 10_000,
    steps: [
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1, why: late },
      { kind: 'AnnotateTarget', set: {}, originals: { ...converged, declaredAt: T0 } },
    ],
  },
  {
    name: 'TKEFirst, drift (a source TKE or loopguard had switched is back on the VIP): corrected at once',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned({ ...converged, declaredAt: T0 }, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 1),
    policy: TKE_FIRST,
    now: 1_000,
    observedAt: 1_000,
    steps: [{ kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1, drift: true }],
  },
  {
    name: 'Direct, but the user set prevent-loopback (TKE is asked already): the originals recorded, TKE gets its grace period',
    svc: service({ externalTrafficPolicy: 'Local', ports }, { [PREVENT_LOOPBACK]: 'true' }),
    clb: two(0, 0),
    steps: [{ kind: 'AnnotateTarget', set: {}, originals: askedByUser }, awaitTke],
  },
  {
    name: "the user's prevent-loopback, TKE switched them while loopguard waited: TKE's change, the originals forgotten (a revert must not put the VIP back)",
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(askedByUser, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(1, 1),
    now: 4_000,
    observedAt: 4_000,
    steps: [{ kind: 'AnnotateTarget', set: {}, forget: ['listener/lbl-tcp/sourceIpType', 'listener/lbl-udp/sourceIpType'], drops: true }],
  },
  {
    name: "the user's prevent-loopback, TKE switched one, the grace period ended for the other: loopguard keeps only the original of the one it writes",
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(askedByUser, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(1, 0),
    now: 10_000,
    observedAt: 10_000,
    steps: [
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1, why: late },
      {
        kind: 'AnnotateTarget',
        set: {},
        originals: record({ listeners: { 'lbl-udp': { sourceIpType: 0 } }, loadBalancerId: 'lb-abc', declaredAt: T0, applied: ['listener/lbl-udp/sourceIpType'] }),
        forget: ['listener/lbl-tcp/sourceIpType'],
      },
    ],
  },
  {
    name: 'TKEFirst after a crash of Direct between its switches and the annotation: the switches are loopguard\'s, kept, and the annotation follows',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(recorded)),
    clb: two(1, 1),
    policy: TKE_FIRST,
    steps: [{ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: converged }],
  },
  {
    name: 'TKEFirst, and the account turns out to reject 100.64: loopguard gives its prevent-loopback back (a bound VIP with VIP-sourced checks drops them all)',
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(asked, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 0),
    policy: TKE_FIRST,
    capabilities: { range100_64Rejected: 'InvalidParameter: SourceIpType 1 is not supported' },
    now: 20_000,
    observedAt: 20_000,
    steps: [
      { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, restore: true },
      { kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`] },
    ],
  },
  {
    name: 'Direct taking over a record that shows loopguard added prevent-loopback: no grace period, written at once',
    svc: service({ externalTrafficPolicy: 'Local', ports }, { 'loopguard.dev/originals': JSON.stringify(record({ ...recorded, annotations: { [PREVENT_LOOPBACK]: null } })), 'loopguard.dev/policy': 'ns/old', [PREVENT_LOOPBACK]: 'true' }),
    clb: two(0, 0),
    steps: [
      { kind: 'RecordOriginals', originals: record({ ...recorded, annotations: { [PREVENT_LOOPBACK]: null } }) },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1 },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1 },
      { kind: 'AnnotateTarget', set: {}, originals: converged },
    ],
  },
  {
    name: "Direct, the user's prevent-loopback, grace period over: loopguard writes both, saying why",
    svc: service({ externalTrafficPolicy: 'Local', ports }, owned(askedByUser, { [PREVENT_LOOPBACK]: 'true' })),
    clb: two(0, 0),
    now: 12_000,
    observedAt: 11_000,
    steps: [
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1, why: late },
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-abc', listenerId: 'lbl-udp', protocol: 'UDP', port: 53, to: 1, why: late },
      { kind: 'AnnotateTarget', set: {}, originals: record({ ...askedByUser, applied: ['listener/lbl-tcp/sourceIpType', 'listener/lbl-udp/sourceIpType'] }) },
    ],
  },
];

describe('planL4Target', () => {
  it.each([...rows, ...tkeRows])('$name', (row) => {
    const view = registryView(row.svc.annotations);
    const ctx = context({ profile: row.profile ?? 'ipvsNew', clb: row.clb, ...(row.policy ? { policy: row.policy } : {}), ...(row.capabilities ? { capabilities: row.capabilities } : {}) });
    const a = assessTarget({ ...row.svc, annotations: view.annotations }, ctx);
    const managed = { assessment: a, ...view, ...(row.observedAt !== undefined ? { observedAt: row.observedAt } : {}) };
    const plan = planTarget({ owner: OWNER, rejected: { keepalive: false, range100_64: false }, now: new Date(row.now ?? 0), graceMs: 10_000 }, managed);
    expect(plan?.steps).toEqual(row.steps);
    // Every step has a line a user can read in Audit.
    for (const s of plan?.steps ?? []) expect(describeStep(s)).toMatch(/\S/);
  });

  it('the annotation comes only after every listener it depends on (never before a switch)', () => {
    const a = assessTarget(service({ externalTrafficPolicy: 'Local', ports }), context({ clb: two(0, 0) }));
    const steps = planL4Target({ assessment: a, annotations: {}, owned: false, now: new Date(0), graceMs: 0 });
    const annotate = steps.findIndex((s) => s.kind === 'AnnotateTarget' && s.set[PREVENT_LOOPBACK] === 'true');
    const lastSwitch = steps.map((s) => s.kind).lastIndexOf('SetListenerHealthCheckSource');
    expect(annotate).toBeGreaterThan(lastSwitch);
    expect(steps[0]?.kind).toBe('RecordOriginals');
  });
});

describe('planL4Release', () => {
  const NOW = new Date(100_000);
  const GRACE = 10_000;
  const at = (ms: number) => ({ now: new Date(ms), graceMs: GRACE });
  const opts = at(NOW.getTime());
  const r = record({ listeners: { 'lbl-a': { sourceIpType: 0 }, 'lbl-b': { sourceIpType: 0 } }, annotations: { [PREVENT_LOOPBACK]: null } });

  it('restores a pre-existing annotation value, skips one already back', () => {
    expect(planL4Release(record({ annotations: { [PREVENT_LOOPBACK]: 'false' } }), { [PREVENT_LOOPBACK]: 'true' }, 'lb-1', opts)[0]).toEqual({ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'false' }, restore: true });
    expect(planL4Release(record({ annotations: { [PREVENT_LOOPBACK]: null } }), {}, 'lb-1', opts)).toEqual([{ kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`], drops: true }]);
  });

  it("a partial release keeps what is still wanted and another layer's fields", () => {
    const withKeepalive = { ...r, listeners: { ...r.listeners, 'lbl-c': { keepaliveEnable: 0 as const } } };
    const keep = { listeners: new Set(['lbl-a']), annotation: false };
    // prevent-loopback off first, its time recorded, then a wait for kube-proxy to release the VIP.
    expect(planL4Release(withKeepalive, { [PREVENT_LOOPBACK]: 'true' }, 'lb-1', { ...opts, keep })).toEqual([
      { kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, restore: true, originals: { v: 1, declaredAt: NOW.toISOString() } },
      { kind: 'AwaitTke', reason: 'VipReleased', loadBalancerId: 'lb-1', since: NOW.toISOString(), fallback: true },
    ]);
    // The next round, after the grace period: the source goes back, the record keeps what is still wanted.
    const after = { ...withKeepalive, declaredAt: NOW.toISOString() };
    expect(planL4Release(after, {}, 'lb-1', { ...at(NOW.getTime() + GRACE), keep })).toEqual([
      { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-b', protocol: '', port: 0, to: 0, restore: true },
      { kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`, 'listener/lbl-b/sourceIpType'] },
    ]);
    expect(planL4Release(r, {}, 'lb-1', { ...opts, keep: { listeners: new Set(['lbl-a', 'lbl-b']), annotation: true } })).toEqual([]);
  });

  it.each([
    { name: 'just taken off: wait', ms: 100_000 + 1, waits: true },
    { name: 'a moment before the grace period ends: wait', ms: 100_000 + GRACE - 1, waits: true },
    { name: 'the grace period over: restore', ms: 100_000 + GRACE, waits: false },
    { name: "a clock behind the record's time: wait the whole period from now", ms: 50_000, waits: true },
  ])('kube-proxy gets the grace period to release the VIP before any source goes back to it: $name', ({ ms, waits }) => {
    const taken = { ...r, declaredAt: new Date(100_000).toISOString() };
    const steps = planL4Release(taken, {}, 'lb-1', at(ms));
    expect(steps.some((s) => s.kind === 'AwaitTke' && s.reason === 'VipReleased')).toBe(waits);
    expect(steps.some((s) => s.kind === 'SetListenerHealthCheckSource')).toBe(!waits);
  });

  it("no wait when nothing goes back to the VIP (sources recorded on 100.64) or no prevent-loopback of loopguard's is involved", () => {
    const on100 = record({ listeners: { 'lbl-a': { sourceIpType: 1 } }, annotations: { [PREVENT_LOOPBACK]: null } });
    expect(planL4Release(on100, { [PREVENT_LOOPBACK]: 'true' }, 'lb-1', opts).map((s) => s.kind)).toEqual(['AnnotateTarget', 'SetListenerHealthCheckSource', 'AnnotateTarget']);
    const noAnnotation = record({ listeners: { 'lbl-a': { sourceIpType: 0 } }, declaredAt: NOW.toISOString() });
    expect(planL4Release(noAnnotation, {}, 'lb-1', opts).map((s) => s.kind)).toEqual(['SetListenerHealthCheckSource', 'AnnotateTarget']);
  });

  it("under the user's own prevent-loopback (the VIP stays bound) no source goes back to the VIP: not TKE's switch, not one loopguard wrote after TKE's grace period", () => {
    const waited = record({ listeners: { 'lbl-a': { sourceIpType: 0 }, 'lbl-b': { sourceIpType: 0 } }, declaredAt: new Date(0).toISOString(), applied: ['listener/lbl-b/sourceIpType'] });
    expect(planL4Release(waited, { [PREVENT_LOOPBACK]: 'true' }, 'lb-1', opts)).toEqual([
      {
        kind: 'AnnotateTarget',
        set: {},
        forget: ['listener/lbl-a/sourceIpType', 'listener/lbl-b/sourceIpType'],
        drops: true,
        kept: "2 listener source(s) kept on 100.64.0.0/10, originals forgotten: this Service's own prevent-loopback (not loopguard's) keeps the VIP bound on every node",
      },
    ]);
    // Without the user's annotation (or with loopguard's own) both were loopguard's to restore.
    expect(planL4Release(waited, {}, 'lb-1', opts).filter((s) => s.kind === 'SetListenerHealthCheckSource')).toHaveLength(2);
  });

  it('without a CLB id the listeners cannot be reached: the record still goes', () => {
    expect(planL4Release(r, {}, undefined, opts)).toEqual([{ kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`, 'listener/lbl-a/sourceIpType', 'listener/lbl-b/sourceIpType'], drops: true }]);
  });

  it('keptBy follows the desired state', () => {
    const a = assessTarget(service({ externalTrafficPolicy: 'Local', ports }), context({ clb: two(0, 0) }));
    const kept = keptBy(a.desired?.layer === 'L4' ? a.desired : undefined);
    expect([...kept.listeners]).toEqual(['lbl-tcp', 'lbl-udp']);
    expect(kept.annotation).toBe(true);
    expect(keptBy(undefined)).toEqual({ listeners: new Set(), annotation: false });
  });

  it('orphans of this policy are released; another policy\'s record is never touched', () => {
    const target = { kind: 'Service' as const, namespace: 'ns', name: 'web' };
    const plan = releases([
      { target, ...registryView(owned(r, { [PREVENT_LOOPBACK]: 'true' })), loadBalancerId: 'lb-1' },
      { target: { ...target, name: 'other' }, ...registryView({ 'loopguard.dev/originals': JSON.stringify(r), 'loopguard.dev/policy': 'ns/q' }), loadBalancerId: 'lb-2' },
    ]);
    expect(plan.releases.map((p) => p.target.name)).toEqual(['web']);
    expect(plan.releases[0]?.steps.map((s) => s.kind)).toEqual(['AnnotateTarget', 'AwaitTke']);
  });
});

describe('stale records', () => {
  it('a record whose object is gone or was replaced is only forgotten: nothing is restored onto the new object', () => {
    const r = record({ listeners: { 'lbl-a': { sourceIpType: 0 } }, annotations: { [PREVENT_LOOPBACK]: null } });
    const target = { kind: 'Service' as const, namespace: 'ns', name: 'web' };
    // The new 'web' carries the user's own prevent-loopback: a release from the old record would remove it.
    const plan = releases([{ target, annotations: { [PREVENT_LOOPBACK]: 'true' }, ownership: { originals: r, owner: OWNER }, loadBalancerId: 'lb-new', stale: true }]);
    expect(plan.releases[0]?.steps).toEqual([{ kind: 'AnnotateTarget', set: {}, forget: [`annotation/${PREVENT_LOOPBACK}`, 'listener/lbl-a/sourceIpType'], drops: true, restore: true }]);
  });
});

describe('healthCheckFor', () => {
  it('keeps every field as read and changes only SourceIpType', () => {
    const hc = { HealthSwitch: 1, TimeOut: 7, IntervalTime: 11, HealthNum: 4, UnHealthNum: 5, CheckType: 'CUSTOM', ContextType: 'HEX', SourceIpType: 0 };
    const l: ListenerInfo = { listenerId: 'lbl-1', name: 'x', protocol: 'UDP', port: 53, healthCheck: hc, rules: [] };
    expect(healthCheckFor(l, 1)).toEqual({ ...hc, SourceIpType: 1 });
    expect(l.healthCheck).toEqual(hc); // not mutated
  });

  it('invents nothing: nulls and HTTP-only fields of a TCP check are dropped, not sent (tencent-cloud.md §9 #7)', () => {
    // What the emulator used to render for a TCP listener (HttpCode 31 on a TCP check), plus the API's nulls.
    const read = { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, HttpCode: 31, HttpCheckPath: null, HttpCheckMethod: null, CheckPort: null, CheckType: 'TCP', HttpVersion: null, SourceIpType: 0, ExtendedCode: null };
    const l: ListenerInfo = { listenerId: 'lbl-1', name: 'x', protocol: 'TCP', port: 80, healthCheck: read as never, rules: [] };
    expect(healthCheckFor(l, 1)).toEqual({ HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 1 });
  });

  it('keeps the HTTP fields of a TCP listener\'s HTTP check', () => {
    const hc = { HealthSwitch: 1, CheckType: 'HTTP', HttpCode: 2, HttpCheckPath: '/hz', HttpCheckDomain: 'a', HttpCheckMethod: 'GET', HttpVersion: 'HTTP/1.1', SourceIpType: 0 };
    const l: ListenerInfo = { listenerId: 'lbl-1', name: 'x', protocol: 'TCP', port: 80, healthCheck: hc, rules: [] };
    expect(healthCheckFor(l, 1)).toEqual({ ...hc, SourceIpType: 1 });
  });
});

describe('isPermanent', () => {
  it('stalls on permissions, invalid requests and missing capability; retries the rest', () => {
    expect(isPermanent({ reason: 'PermissionDenied', retryable: false })).toBe(true);
    expect(isPermanent({ reason: 'InvalidRequest', retryable: false })).toBe(true);
    expect(isPermanent({ reason: 'HealthCheckSourceCapabilityMissing', retryable: false })).toBe(true);
    expect(isPermanent({ reason: 'Throttled', retryable: true })).toBe(false);
    expect(isPermanent({ reason: 'ClbTaskTimeout', retryable: false })).toBe(false);
    expect(isPermanent({ reason: 'ListenerNotFound', retryable: false })).toBe(false);
  });
});

// Issue 22 #5: a CLB with more listeners than one TKE resync lets loopguard switch (LARGE_CLB_LISTENERS) is asked
// first under Direct, so a TKE that puts back its view of every health-check field never undoes a switch; a TKE that
// does not answer prevent-loopback gets it back after the grace period, and loopguard switches directly.
describe('planL4Target: a large CLB under Direct', () => {
  const N = LARGE_CLB_LISTENERS + 1;
  const bigPorts = Array.from({ length: N }, (_, i) => ({ port: 8000 + i, protocol: 'TCP' as const }));
  const id = (i: number) => `lbl-${i}`;
  const bigClb = (on: (i: number) => 0 | 1) => clb({ listeners: bigPorts.map((p, i) => l4Listener(id(i), 'TCP', p.port, on(i))) });
  const originals = record({ listeners: Object.fromEntries(bigPorts.map((_, i) => [id(i), { sourceIpType: 0 as const }])), loadBalancerId: 'lb-abc' });
  const askedBig = record({ ...originals, annotations: { [PREVENT_LOOPBACK]: null }, declaredAt: T0 });
  const plan = (annotations: Record<string, string>, clbFacts: ClbFacts, now = 0, observedAt?: number, ports = bigPorts) => {
    const svc = service({ externalTrafficPolicy: 'Local', ports }, annotations);
    const view = registryView(svc.annotations);
    const a = assessTarget({ ...svc, annotations: view.annotations }, context({ clb: clbFacts }));
    const managed = { assessment: a, ...view, ...(observedAt !== undefined ? { observedAt } : {}) };
    return planTarget({ owner: OWNER, rejected: { keepalive: false, range100_64: false }, now: new Date(now), graceMs: 10_000 }, managed).steps;
  };

  it(`${N} listeners: prevent-loopback first, with the originals and the time TKE was asked, then TKE's grace period`, () => {
    expect(plan({}, bigClb(() => 0))).toEqual([{ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' }, originals: askedBig }, awaitTke]);
  });

  it(`${LARGE_CLB_LISTENERS} listeners: the direct order, as before`, () => {
    const steps = plan({}, clb({ listeners: bigPorts.slice(0, LARGE_CLB_LISTENERS).map((p, i) => l4Listener(id(i), 'TCP', p.port, 0)) }), 0, undefined, bigPorts.slice(0, LARGE_CLB_LISTENERS));
    expect(steps.map((s) => s.kind)).toEqual(['RecordOriginals', ...bigPorts.slice(0, LARGE_CLB_LISTENERS).map(() => 'SetListenerHealthCheckSource'), 'AnnotateTarget']);
  });

  it('within the grace period: waits, nothing written', () => {
    expect(plan(owned(askedBig, { [PREVENT_LOOPBACK]: 'true' }), bigClb(() => 0), 5_000, 5_000)).toEqual([awaitTke]);
  });

  it('TKE switched them all: recorded as applied (loopguard asked: restored on revert), no CLB write', () => {
    const steps = plan(owned(askedBig, { [PREVENT_LOOPBACK]: 'true' }), bigClb(() => 1), 5_000, 5_000);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ kind: 'AnnotateTarget', set: {} });
    expect(steps.some((s) => s.kind === 'SetListenerHealthCheckSource')).toBe(false);
  });

  it('grace period over, TKE switched some: loopguard writes the rest, saying why', () => {
    const steps = plan(owned(askedBig, { [PREVENT_LOOPBACK]: 'true' }), bigClb((i) => (i < 5 ? 1 : 0)), 11_000, 11_000);
    const writes = steps.filter((s) => s.kind === 'SetListenerHealthCheckSource');
    expect(writes).toHaveLength(N - 5);
    expect(writes.every((s) => s.kind === 'SetListenerHealthCheckSource' && s.why === late)).toBe(true);
  });

  it('grace period over, TKE switched none (it does not answer prevent-loopback): the annotation goes back, the record stays', () => {
    expect(plan(owned(askedBig, { [PREVENT_LOOPBACK]: 'true' }), bigClb(() => 0), 11_000, 11_000)).toEqual([{ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: null }, restore: true }]);
  });

  it('after that: the direct order (every source, then prevent-loopback), not a second ask', () => {
    const steps = plan(owned(askedBig), bigClb(() => 0), 12_000, 12_000);
    expect(steps.map((s) => s.kind)).toEqual([...bigPorts.map(() => 'SetListenerHealthCheckSource'), 'AnnotateTarget']);
    expect(steps.every((s) => s.kind !== 'SetListenerHealthCheckSource' || s.why === undefined)).toBe(true);
    expect(steps.at(-1)).toMatchObject({ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: 'true' } });
  });
});
