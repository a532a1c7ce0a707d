// Issue 22 #1/#2, issue 38 #0: one CLB serving several Services. prevent-loopback binds the whole VIP, so it is set only
// if every L4 listener on the CLB health-checks from 100.64.0.0/10, or another Service binds the VIP already (else
// Conflict / SharedClb, the own sources switched only while the other checks' Services are managed: otherwise TKE
// would put them back at its syncs, a write fight); a release never puts a source back on the VIP while another
// Service's prevent-loopback keeps it bound, and keeps its own prevent-loopback then (what holds TKE's view at 100.64).
import { describe, expect, it } from '@jest/globals';
import type { Originals } from '../../../src/api/originals.js';
import type { ServiceFacts } from '../../../src/model/facts.js';
import { planPolicy } from '../../../src/plan/policy-plan.js';
import { describeStep, type Step } from '../../../src/plan/steps.js';
import { clb, ingress, l4Listener, listener, service } from '../model/fixtures.js';
import { gathered, OWNER, snapshot } from './fixtures.js';
import { targetKey } from '../../../src/model/facts.js';

const LB = 'lb-shared';
const PL = 'service.cloud.tencent.com/prevent-loopback';
const SPEC = { mode: 'Enforce' as const };

/** Service `shared` of `namespace` on the user-brought CLB, its one port `port`, ETP Local (at risk under IPVS). */
function svc(namespace: string, port: number, annotations: Record<string, string> = {}, name = 'shared'): ServiceFacts {
  return service({ namespace, name, loadBalancerId: LB, externalTrafficPolicy: 'Local', ports: [{ port, protocol: 'TCP' }] }, { 'service.kubernetes.io/loadbalance-id': LB, ...annotations });
}

/** The shared CLB: H's listener on :8080, the other's on :9090, each from the given source. */
function shared(h: 0 | 1, other: 0 | 1, otherPort = 9090) {
  return clb({ loadBalancerId: LB, listeners: [l4Listener('lbl-8080', 'TCP', 8080, h), l4Listener(`lbl-${otherPort}`, 'TCP', otherPort, other)] });
}

const H = svc('h', 8080);
const annotates = (steps: Step[]) => steps.some((s) => s.kind === 'AnnotateTarget' && s.set[PL] === 'true');
const switchesOwn = (steps: Step[]) => steps.some((s) => s.kind === 'SetListenerHealthCheckSource' && s.listenerId === 'lbl-8080' && s.to === 1);

/** loopguard's converged record on H: the source and prevent-loopback, both applied. */
const converged: Originals = {
  v: 1,
  loadBalancerId: LB,
  listeners: { 'lbl-8080': { sourceIpType: 0 } },
  annotations: { [PL]: null },
  applied: ['listener/lbl-8080/sourceIpType', `annotation/${PL}`],
};

interface Row {
  name: string;
  other: ServiceFacts;
  /** Sources of H's and the other's listener. */
  sources: [0 | 1, 0 | 1];
  record?: Originals;
  hAnnotations?: Record<string, string>;
  rootCause: string;
  annotates: boolean;
  switchesOwn: boolean;
  /** The annotation given back (restore) before anything else. */
  takesBack?: boolean;
  message?: RegExp;
  notInMessage?: RegExp;
  /** The other Service is managed by no policy (else by this one). */
  unmanaged?: boolean;
  /** The steps' kinds, exactly. */
  kinds?: string[];
}

/** loopguard's prevent-loopback is on (converged) and the other listener is on the VIP: the annotation is taken back. */
const takenBack = {
  sources: [1, 0],
  record: converged,
  hAnnotations: { [PL]: 'true' },
  rootCause: 'SharedClb',
  annotates: false,
  switchesOwn: false,
  takesBack: true,
} satisfies Partial<Row>;

const rows: Row[] = [
  {
    name: "the other namespace's listener health-checks from the VIP: no annotation, own source switched, SharedClb counting (never naming) the other namespace",
    other: svc('i', 9090),
    sources: [0, 0],
    rootCause: 'SharedClb',
    annotates: false,
    switchesOwn: true,
    message: /CLB lb-shared also serves 1 health check\(s\) from the VIP .*1 Service\(s\) in other namespaces.*a LoopbackPolicy in their namespace, or a cluster-scoped LoopbackPolicy/,
    notInMessage: /i\/shared/,
  },
  {
    name: 'a Service of the same namespace on the VIP: named as namespace/name',
    other: svc('h', 9090, {}, 'api'),
    sources: [0, 0],
    rootCause: 'SharedClb',
    annotates: false,
    switchesOwn: true,
    message: /of h\/api\).*bring them under this LoopbackPolicy/,
  },
  {
    name: 'a listener no Service loopguard sees on the VIP: counted, advice to switch it; nothing will switch it, so the own source is left as TKE has it',
    other: svc('i', 7070),
    sources: [0, 0],
    rootCause: 'SharedClb',
    annotates: false,
    switchesOwn: false,
    message: /1 serving nothing loopguard sees.*leaves this Service's own listeners as TKE has them/,
    kinds: [],
  },
  {
    name: "the other namespace's Service is managed by no policy: SharedClb, the own source left as TKE has it (a switch without prevent-loopback is one TKE puts back)",
    other: svc('i', 9090),
    unmanaged: true,
    sources: [0, 0],
    rootCause: 'SharedClb',
    annotates: false,
    switchesOwn: false,
    kinds: [],
  },
  {
    name: "loopguard's prevent-loopback is on and an unmanaged Service's listener is on the VIP: taken back, then (after kube-proxy's grace) the own source given back — never held against TKE",
    other: svc('i', 9090),
    unmanaged: true,
    ...takenBack,
    kinds: ['AnnotateTarget', 'AwaitTke'],
  },
  {
    name: 'another Service binds the VIP already and a third listener is on the VIP: prevent-loopback binds nothing more, so it is set (it holds TKE\'s view of the own listener at 100.64)',
    other: svc('i', 9090, { [PL]: 'true' }),
    sources: [0, 0],
    rootCause: 'PodSourceNotMasqueraded',
    annotates: true,
    switchesOwn: true,
  },
  {
    name: "loopguard's prevent-loopback is on and the other's listener is (back) on the VIP: taken back, annotation first",
    other: svc('i', 9090),
    ...takenBack,
    message: /takes back its prevent-loopback/,
  },
  {
    name: "the other's listener already health-checks from 100.64: prevent-loopback is set (control)",
    other: svc('i', 9090),
    sources: [0, 1],
    rootCause: 'PodSourceNotMasqueraded',
    annotates: true,
    switchesOwn: true,
  },
];

describe('prevent-loopback on a CLB shared by several Services', () => {
  it.each(rows)('$name', (row) => {
    const otherPort = row.other.ports[0]?.port ?? 0;
    const facts = row.hAnnotations ? svc('h', 8080, row.hAnnotations) : H;
    const known = otherPort === 7070 ? [] : [row.other];
    const t = gathered(facts, shared(row.sources[0], row.sources[1], otherPort), row.record ? { ownership: { originals: row.record, owner: OWNER } } : {});
    const [p] = planPolicy(snapshot([t], { spec: SPEC, others: known, policies: row.unmanaged ? { shared: undefined } : {} })).targets;
    expect(p?.assessment.rootCause.id).toBe(row.rootCause);
    if (row.message) expect(p?.assessment.rootCause.message).toMatch(row.message);
    if (row.notInMessage) expect(p?.assessment.rootCause.message).not.toMatch(row.notInMessage);
    const steps = p?.plan.steps ?? [];
    if (row.kinds) expect(steps.map((x) => x.kind)).toEqual(row.kinds);
    expect(annotates(steps)).toBe(row.annotates);
    expect(switchesOwn(steps)).toBe(row.switchesOwn);
    // Never a write to the other Service's listener.
    expect(steps.some((s) => s.kind === 'SetListenerHealthCheckSource' && s.listenerId !== 'lbl-8080')).toBe(false);
    if (row.takesBack) expect(steps[0]).toMatchObject({ kind: 'AnnotateTarget', set: { [PL]: null }, restore: true });
  });

  it.each([
    { whose: "loopguard's (its record holds the original)", held: true },
    { whose: "the user's", held: false },
  ])("another Service's prevent-loopback is $whose, and a third listener health-checks from the VIP: held back only when that binding is loopguard's too (two of them would justify each other for good)", ({ held }) => {
    const B = svc('i', 9090, { [PL]: 'true' });
    const three = clb({ loadBalancerId: LB, listeners: [l4Listener('lbl-8080', 'TCP', 8080, 1), l4Listener('lbl-9090', 'TCP', 9090, 1), l4Listener('lbl-7070', 'TCP', 7070, 0)] });
    const t = gathered(svc('h', 8080, { [PL]: 'true' }), three, { ownership: { originals: converged, owner: OWNER } });
    const [p] = planPolicy(snapshot([t], { spec: SPEC, others: [B], loopguardAnnotated: held ? [targetKey(B)] : [] })).targets;
    const steps = p?.plan.steps ?? [];
    expect(p?.assessment.rootCause.id).toBe(held ? 'SharedClb' : 'LoopbackPrevented');
    if (held) expect(steps[0]).toMatchObject({ kind: 'AnnotateTarget', set: { [PL]: null }, restore: true });
    else expect(steps.some((x) => x.kind === 'AnnotateTarget' && x.set[PL] === null)).toBe(false);
  });

  it.each<{ state: string; annotations: Record<string, string>; record?: Originals }>([
    { state: 'holds its prevent-loopback', annotations: { [PL]: 'true' }, record: converged },
    { state: 'is about to set its prevent-loopback', annotations: {} },
  ])("another Service a policy manages binds the VIP by loopguard's prevent-loopback and its own listener is (back) on the VIP, a moment while two policies converge: this one $state (that check is the binder's own, dropped by its binding whatever this one does, and its policy switches it)", ({ annotations, record }) => {
    const I = svc('i', 9090, { [PL]: 'true' });
    const t = gathered(svc('h', 8080, annotations), shared(record ? 1 : 0, 0), record ? { ownership: { originals: record, owner: OWNER } } : {});
    const [p] = planPolicy(snapshot([t], { spec: SPEC, others: [I], loopguardAnnotated: [targetKey(I)] })).targets;
    const steps = p?.plan.steps ?? [];
    expect(p?.assessment.rootCause.id).toBe(record ? 'LoopbackPrevented' : 'PodSourceNotMasqueraded');
    expect(steps.some((x) => x.kind === 'AnnotateTarget' && x.set[PL] === null)).toBe(false);
    expect(annotates(steps)).toBe(!record);
    expect(steps.some((s) => s.kind === 'SetListenerHealthCheckSource' && s.listenerId !== 'lbl-8080')).toBe(false);
  });

  it.each<{ why: string; annotations: Record<string, string>; unmanaged: boolean }>([
    { why: 'no policy selects it (its record held under a deleted one)', annotations: {}, unmanaged: true },
    { why: 'it is opted out (loopguard.dev/skip)', annotations: { 'loopguard.dev/skip': 'true' }, unmanaged: false },
  ])("the binder whose own listener is on the VIP is one nothing manages, as $why: its check still counts, and this one's prevent-loopback is taken back (two bindings loopguard set would hold each other for good while that check is dropped)", ({ annotations, unmanaged }) => {
    const I = svc('i', 9090, { [PL]: 'true', ...annotations }, 'api-i');
    const t = gathered(svc('h', 8080, { [PL]: 'true' }), shared(1, 0), { ownership: { originals: converged, owner: OWNER } });
    const [p] = planPolicy(snapshot([t], { spec: SPEC, others: [I], loopguardAnnotated: [targetKey(I)], ...(unmanaged ? { policies: { 'api-i': undefined } } : {}) })).targets;
    const steps = p?.plan.steps ?? [];
    expect(p?.assessment.rootCause.id).toBe('SharedClb');
    expect(steps[0]).toMatchObject({ kind: 'AnnotateTarget', set: { [PL]: null }, restore: true });
  });

  it('a listener another target of this policy switches in this pass: no Conflict, prevent-loopback in the next pass', () => {
    const i = svc('h', 9090, {}, 'api');
    const lb = shared(0, 0);
    const plan = planPolicy(snapshot([gathered(H, lb), gathered(i, lb)], { spec: SPEC }));
    for (const p of plan.targets) {
      expect(p.assessment.rootCause.id).toBe('PodSourceNotMasqueraded');
      expect(p.assessment.rootCause.message).toMatch(/prevent-loopback follows in the next pass/);
      expect(annotates(p.plan.steps)).toBe(false);
      expect(p.plan.steps.some((s) => s.kind === 'SetListenerHealthCheckSource' && s.to === 1)).toBe(true);
    }
  });
});

describe('L7 rules on a shared CLB count too (a bound VIP drops their checks as well)', () => {
  /** The CLB shared with an Ingress: H's L4 listener on :8080 (VIP), an HTTP listener whose one rule checks from `rule`. */
  function withRule(rule: 0 | 1, healthSwitch = 1) {
    return clb({
      loadBalancerId: LB,
      listeners: [
        l4Listener('lbl-8080', 'TCP', 8080, 0),
        listener('lbl-http', 'HTTP', 80, { rules: [{ locationId: 'loc-1', domain: 'a.example.com', url: '/', healthCheck: { sourceIpType: rule, healthSwitch } }] }),
      ],
    });
  }
  const web = (namespace: string) => ingress({ namespace, name: 'web', loadBalancerId: LB }, { 'kubernetes.io/ingress.qcloud-loadbalance-id': LB });

  it.each([
    { name: "an Ingress of another namespace whose rule checks from the VIP: SharedClb, the Ingress counted, not named", rule: 0 as const, others: [web('i')], rootCause: 'SharedClb', annotates: false, message: /1 health check\(s\) from the VIP \(L7 rules of 1 Ingress\(s\) in other namespaces\).*a LoopbackPolicy in their namespace/, notInMessage: /i\/web/ },
    { name: 'an Ingress of the same namespace: named', rule: 0 as const, others: [web('h')], rootCause: 'SharedClb', annotates: false, message: /L7 rules of h\/web/ },
    { name: 'a rule of no Ingress loopguard sees: counted; nothing will switch it, so the own listener is left as TKE has it', rule: 0 as const, others: [], rootCause: 'SharedClb', annotates: false, switches: false, message: /1 serving nothing loopguard sees.*ModifyRule/ },
    { name: 'the rule already checks from 100.64: prevent-loopback is set (control)', rule: 1 as const, others: [web('i')], rootCause: 'PodSourceNotMasqueraded', annotates: true },
    { name: 'the rule has its health check off: nothing to drop, prevent-loopback is set (control)', rule: 0 as const, healthSwitch: 0, others: [web('i')], rootCause: 'PodSourceNotMasqueraded', annotates: true },
  ])('$name', (row) => {
    const t = gathered(H, withRule(row.rule, row.healthSwitch ?? 1));
    const [p] = planPolicy(snapshot([t], { spec: SPEC, others: row.others, policies: {} })).targets;
    expect(p?.assessment.rootCause.id).toBe(row.rootCause);
    if (row.message) expect(p?.assessment.rootCause.message).toMatch(row.message);
    if (row.notInMessage) expect(p?.assessment.rootCause.message).not.toMatch(row.notInMessage);
    expect(annotates(p?.plan.steps ?? [])).toBe(row.annotates);
    // H's own listener is switched while the CLB converges (a managed Ingress switches its rule); the rule is never written by this Service's plan.
    expect(switchesOwn(p?.plan.steps ?? [])).toBe(row.switches ?? true);
    expect((p?.plan.steps ?? []).some((s) => s.kind === 'DeclareInTkeServiceConfig')).toBe(false);
  });
});

describe('the release of a Service on a shared CLB', () => {
  /** H released (its policy deleted): `other` is the Service left on the CLB. */
  function release(other: ServiceFacts, state: { hAnnotations?: Record<string, string>; record?: Originals; now?: Date } = {}) {
    const h = svc('h', 8080, state.hAnnotations ?? { [PL]: 'true' });
    const s = snapshot([], { spec: SPEC, others: [other], extra: { orphans: [{ facts: h, ownership: { originals: state.record ?? converged, owner: OWNER } }], ...(state.now ? { now: state.now } : {}) } });
    // snapshot() builds the shared view from targets; the orphan's CLB is what the operator adds (sharedWith/deletion).
    return planPolicy({ ...s, shared: { clbs: new Map([[LB, [{ facts: h, optedOut: false }, { facts: other, optedOut: false }]]]), configs: new Map() } }).releases;
  }

  it("another Service still carries prevent-loopback: loopguard's prevent-loopback stays (without it TKE puts the source back on the bound VIP), and so does the record; nothing is written", () => {
    const releases = release(svc('i', 9090, { [PL]: 'true' }));
    expect(releases).toEqual([]);
  });

  it('another Service still carries prevent-loopback and this one lost its annotation already: no source back to the VIP, originals forgotten, and the plan says why', () => {
    const [r] = release(svc('i', 9090, { [PL]: 'true' }), { hAnnotations: {} });
    const steps = [{ kind: 'AnnotateTarget', set: { [PL]: null }, restore: true }, ...(r?.steps ?? [])];
    expect(steps[0]).toMatchObject({ kind: 'AnnotateTarget', set: { [PL]: null }, restore: true });
    expect(steps.filter((s) => s.kind === 'SetListenerHealthCheckSource')).toEqual([]);
    expect(steps.at(-1)).toMatchObject({ kind: 'AnnotateTarget', drops: true, forget: expect.arrayContaining(['listener/lbl-8080/sourceIpType']) });
    const text = describeStep(steps.at(-1) as Step);
    expect(text).toMatch(/1 listener source\(s\) kept on 100\.64\.0\.0\/10, originals forgotten: 1 Service\(s\) in other namespaces on CLB lb-shared still carries prevent-loopback/);
    expect(text).not.toMatch(/i\/shared/);
  });

  it('the last one out restores in the safe order: annotation off, a wait for kube-proxy to release the VIP, then the source back to the VIP, then the record', () => {
    const [r] = release(svc('i', 9090));
    expect(r?.steps.map((s) => s.kind)).toEqual(['AnnotateTarget', 'AwaitTke']);
    expect(r?.steps[0]).toMatchObject({ set: { [PL]: null }, restore: true, originals: { declaredAt: expect.any(String) } });
    expect(r?.steps[1]).toMatchObject({ reason: 'VipReleased', loadBalancerId: LB });
    const taken = { ...converged, declaredAt: (r?.steps[0] as { originals: Originals }).originals.declaredAt as string };
    const [next] = release(svc('i', 9090), { hAnnotations: {}, record: taken, now: new Date(Date.parse(taken.declaredAt ?? '') + 10_000) });
    expect(next?.steps.map((s) => s.kind)).toEqual(['SetListenerHealthCheckSource', 'AnnotateTarget']);
    expect(next?.steps[0]).toMatchObject({ listenerId: 'lbl-8080', to: 0, restore: true });
  });

  it("an Ingress's release on a CLB a Service's prevent-loopback keeps bound: its rule source is not put back on the VIP", () => {
    const web = ingress({ namespace: 'h', name: 'web', loadBalancerId: LB }, { 'kubernetes.io/ingress.qcloud-loadbalance-id': LB });
    const rules: Originals = { v: 1, loadBalancerId: LB, rules: { 'lbl-http/loc-1': { sourceIpType: 0 } }, applied: ['rule/lbl-http/loc-1/sourceIpType'] };
    const lb = clb({ loadBalancerId: LB, listeners: [listener('lbl-http', 'HTTP', 80, { rules: [{ locationId: 'loc-1', domain: 'a.example.com', url: '/', healthCheck: { sourceIpType: 1, healthSwitch: 1 } }] })] });
    const plan = (binder: ServiceFacts) => {
      const s = snapshot([], { spec: SPEC, others: [binder], extra: { orphans: [{ facts: web, ownership: { originals: rules, owner: OWNER }, clb: { state: 'Found', clb: lb } }] } });
      return planPolicy({ ...s, shared: { clbs: new Map([[LB, [{ facts: web, optedOut: false }, { facts: binder, optedOut: false }]]]), configs: new Map() } }).releases;
    };
    const [bound] = plan(svc('i', 9090, { [PL]: 'true' }));
    expect(bound?.steps.map((x) => x.kind)).toEqual(['AnnotateTarget']);
    expect(bound?.steps[0]).toMatchObject({ drops: true, kept: expect.stringMatching(/^1 rule source\(s\) kept on 100\.64\.0\.0\/10.*1 Service\(s\) in other namespaces/) });
    // Control: no Service binds the VIP — nothing is kept (the config being gone, the record simply goes).
    const [free] = plan(svc('i', 9090));
    expect(free?.steps[0]).not.toHaveProperty('kept');
  });

  it('two Services of this policy on one CLB released together (its deletion): neither keeps the VIP bound for the other; both take prevent-loopback off, wait for kube-proxy, then restore', () => {
    const h = svc('h', 8080, { [PL]: 'true' });
    const api = svc('h', 9090, { [PL]: 'true' }, 'api');
    const apiRecord: Originals = { ...converged, listeners: { 'lbl-9090': { sourceIpType: 0 } }, applied: ['listener/lbl-9090/sourceIpType', `annotation/${PL}`] };
    const orphans = [
      { facts: h, ownership: { originals: converged, owner: OWNER } },
      { facts: api, ownership: { originals: apiRecord, owner: OWNER } },
    ];
    const s = snapshot([], { spec: SPEC, extra: { orphans } });
    const users = [h, api].map((facts) => ({ facts, optedOut: false }));
    const releases = planPolicy({ ...s, shared: { clbs: new Map([[LB, users]]), configs: new Map() } }).releases;
    expect(releases.map((r) => r.steps.map((x) => x.kind))).toEqual([
      ['AnnotateTarget', 'AwaitTke'],
      ['AnnotateTarget', 'AwaitTke'],
    ]);
    for (const r of releases) expect(r.steps[1]).toMatchObject({ reason: 'VipReleased' });
  });

  it.each([
    { name: 'a ClusterIP Service that names the CLB', binder: { ...svc('i', 9090, { [PL]: 'true' }), type: 'ClusterIP', loadBalancerIps: [] } },
    { name: "a LoadBalancer Service whose status shows another CLB's address", binder: { ...svc('i', 9090, { [PL]: 'true' }), loadBalancerIps: ['10.9.9.9'] } },
  ])('a Service that only names the CLB binds nothing (its annotations are a namespace user\'s to write): $name — the release restores', ({ binder }) => {
    const [r] = release(binder as ServiceFacts);
    expect(r?.steps.map((x) => x.kind)).toEqual(['AnnotateTarget', 'AwaitTke']);
    expect(r?.steps.some((x) => x.kind === 'AnnotateTarget' && x.kept !== undefined)).toBe(false);
  });

  it('a managed Service opted out while another keeps the VIP bound: the same (the planTarget release path): its prevent-loopback and record stay', () => {
    const h = svc('h', 8080, { [PL]: 'true', 'loopguard.dev/skip': 'true' });
    const t = gathered(h, shared(1, 1), { ownership: { originals: converged, owner: OWNER } });
    const [p] = planPolicy(snapshot([t], { spec: SPEC, others: [svc('i', 9090, { [PL]: 'true' })], policies: {} })).targets;
    expect(p?.assessment.verdict).toBe('Skipped');
    expect(p?.plan.steps).toEqual([]);
    // Control: nobody else binds the VIP — the safe order (annotation off, a wait for kube-proxy).
    const [free] = planPolicy(snapshot([t], { spec: SPEC, others: [svc('i', 9090)], policies: {} })).targets;
    expect(free?.plan.steps.map((s) => s.kind)).toEqual(['AnnotateTarget', 'AwaitTke']);
  });
});
