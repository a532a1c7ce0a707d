// `healthCheck.enable` in the TkeServiceConfig fragments loopguard writes (docs/tencent-cloud.md §1: TKE's reference
// marks it required). Tables over the pure patch, record and revert code: every rule healthCheck loopguard adds or
// edits carries `enable` = the CLB rule's switch, a missing one is added behind the same identity tests, the record
// says what loopguard added, and the revert gives back the hand-made spec exactly.
import { describe, expect, it } from '@jest/globals';
import { validateOriginals, type Originals } from '../../../src/api/originals.js';
import { guardedPatch, type JsonPatchOp } from '../../../src/api/json-patch.js';
import { clbFacts } from '../../../src/cloud/clb-observer.js';
import { assessTarget } from '../../../src/model/assessment.js';
import type { L7DesiredState } from '../../../src/model/desired-state.js';
import { addedLevel, applyJsonPatch, buildConfigPatch, buildRemovalPatch, enableMissing, pendingEdits, type FieldEdit } from '../../../src/plan/config-patch.js';
import { desiredEdits, originalsFor } from '../../../src/plan/l7-edits.js';
import { revertPlan, type ClbListenerView } from '../../../src/plan/l7-revert.js';
import { mergeOriginals } from '../../../src/api/originals.js';
import { describeStep } from '../../../src/plan/steps.js';
import { clb, context, ingress, listener } from '../model/fixtures.js';

const VIP = '10.100.0.7';
const NONE_REFUSED = { keepalive: false, range100_64: false };
const P = '/spec/loadBalancer/l7Listeners/0';
const ID_TESTS: JsonPatchOp[] = [
  { op: 'test', path: `${P}/protocol`, value: 'HTTP' },
  { op: 'test', path: `${P}/port`, value: 80 },
  { op: 'test', path: `${P}/domains/0/domain`, value: 'a.example.com' },
  { op: 'test', path: `${P}/domains/0/rules/0/url`, value: '/' },
];

/** A hand-made config whose one rule (a.example.com/) has `rule` besides its url. */
const handSpec = (rule: Record<string, unknown>) => ({
  loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'a.example.com', rules: [{ url: '/', scheduler: 'WRR', ...rule }] }] }] },
});
const rule = (spec: unknown): Record<string, unknown> => (spec as ReturnType<typeof handSpec>).loadBalancer.l7Listeners[0]!.domains[0]!.rules[0]!;

/** The CLB: one HTTP listener, the rule with the given switch (undefined: the CLB did not report one). */
function view(healthSwitch: number | undefined, sourceIpType = 0): ClbListenerView[] {
  const healthCheck = { sourceIpType, ...(healthSwitch !== undefined ? { healthSwitch } : {}) };
  return [{ listenerId: 'lbl-80', protocol: 'HTTP', port: 80, keepaliveEnable: 0, rules: [{ locationId: 'loc-a', domain: 'a.example.com', url: '/', healthCheck }] }];
}
function desired(healthSwitch: 0 | 1 | undefined): L7DesiredState {
  return {
    layer: 'L7',
    loadBalancerId: 'lb-1',
    tkeServiceConfig: { name: 'hand', source: 'Annotation' },
    passToTarget: { current: false },
    listeners: [
      {
        listenerId: 'lbl-80',
        protocol: 'HTTP',
        port: 80,
        currentKeepalive: 0,
        rules: [{ locationId: 'loc-a', domain: 'a.example.com', url: '/', currentSourceIpType: 0, desiredSourceIpType: 1, ...(healthSwitch !== undefined ? { currentHealthSwitch: healthSwitch } : {}) }],
      },
    ],
  };
}

interface Row {
  name: string;
  /** The rule fragment's fields besides url/scheduler, before loopguard. */
  before: Record<string, unknown>;
  /** The CLB rule's HealthSwitch. */
  healthSwitch: 0 | 1 | undefined;
  /** The ops after the identity tests. */
  ops: JsonPatchOp[];
  /** The rule's healthCheck after the patch. */
  after: Record<string, unknown>;
  /** What the record says loopguard added. */
  record: { added?: string; enableAdded?: boolean };
}

const RULE = `${P}/domains/0/rules/0`;
/** The source the user's fragment declares already, if the wanted one (1). */
const declared = (before: Record<string, unknown>): number | undefined => ((before.healthCheck as { sourceIpType?: number } | undefined)?.sourceIpType === 1 ? 1 : undefined);
const rows: Row[] = [
  {
    name: 'no healthCheck, CLB check on: a healthCheck with enable: true is added whole',
    before: {},
    healthSwitch: 1,
    ops: [{ op: 'add', path: `${RULE}/healthCheck`, value: { enable: true, sourceIpType: 1 } }],
    after: { enable: true, sourceIpType: 1 },
    record: { added: 'healthCheck' },
  },
  {
    name: 'no healthCheck, CLB check off: enable: false (loopguard never turns a check on or off)',
    before: {},
    healthSwitch: 0,
    ops: [{ op: 'add', path: `${RULE}/healthCheck`, value: { enable: false, sourceIpType: 1 } }],
    after: { enable: false, sourceIpType: 1 },
    record: { added: 'healthCheck' },
  },
  {
    name: 'no healthCheck, the CLB reports no switch: on (how CLB and TKE create rule checks)',
    before: {},
    healthSwitch: undefined,
    ops: [{ op: 'add', path: `${RULE}/healthCheck`, value: { enable: true, sourceIpType: 1 } }],
    after: { enable: true, sourceIpType: 1 },
    record: { added: 'healthCheck' },
  },
  {
    name: "the user's healthCheck without enable: sourceIpType and enable added beside it, behind the same tests",
    before: { healthCheck: { intervalTime: 7 } },
    healthSwitch: 1,
    ops: [
      { op: 'add', path: `${RULE}/healthCheck/sourceIpType`, value: 1 },
      { op: 'add', path: `${RULE}/healthCheck/enable`, value: true },
    ],
    after: { intervalTime: 7, sourceIpType: 1, enable: true },
    record: { added: 'field', enableAdded: true },
  },
  {
    name: "the user's healthCheck without enable, which TKE read as off: enable: false, as the CLB has it",
    before: { healthCheck: { intervalTime: 7 } },
    healthSwitch: 0,
    ops: [
      { op: 'add', path: `${RULE}/healthCheck/sourceIpType`, value: 1 },
      { op: 'add', path: `${RULE}/healthCheck/enable`, value: false },
    ],
    after: { intervalTime: 7, sourceIpType: 1, enable: false },
    record: { added: 'field', enableAdded: true },
  },
  {
    // The source is the user's declaration (loopguard only completed the fragment): recorded as the original, so the
    // revert leaves it and takes out enable alone.
    name: 'the user already declares sourceIpType: 1 but no enable: only enable is added',
    before: { healthCheck: { sourceIpType: 1 } },
    healthSwitch: 1,
    ops: [{ op: 'add', path: `${RULE}/healthCheck/enable`, value: true }],
    after: { sourceIpType: 1, enable: true },
    record: { enableAdded: true },
  },
  {
    name: 'the user declares sourceIpType: 0 without enable: the value set, enable added',
    before: { healthCheck: { sourceIpType: 0 } },
    healthSwitch: 1,
    ops: [
      { op: 'add', path: `${RULE}/healthCheck/sourceIpType`, value: 1 },
      { op: 'add', path: `${RULE}/healthCheck/enable`, value: true },
    ],
    after: { sourceIpType: 1, enable: true },
    record: { enableAdded: true },
  },
  {
    name: "the user's enable is kept, whatever the CLB says: only sourceIpType is added",
    before: { healthCheck: { enable: false, timeout: 3 } },
    healthSwitch: 1,
    ops: [{ op: 'add', path: `${RULE}/healthCheck/sourceIpType`, value: 1 }],
    after: { enable: false, timeout: 3, sourceIpType: 1 },
    record: { added: 'field' },
  },
];

describe.each(rows)('rule healthCheck: $name', (row) => {
  const original = handSpec(row.before);
  const [edit] = desiredEdits(desired(row.healthSwitch), undefined, NONE_REFUSED);
  const edits = [edit as FieldEdit];

  it('the patch: identity tests, then the fields; the result carries enable and needs nothing more', () => {
    expect(buildConfigPatch(original, edits, VIP)).toEqual([...ID_TESTS, ...row.ops]);
    const after = applyJsonPatch({ metadata: { resourceVersion: '3' }, spec: original }, guardedPatch('3', buildConfigPatch(original, edits, VIP))).spec;
    expect(rule(after).healthCheck).toEqual(row.after);
    expect(rule(after).scheduler).toBe('WRR');
    expect(pendingEdits(after, edits, VIP)).toEqual([]);
    expect(buildConfigPatch(after, edits, VIP)).toEqual([]);
  });

  it('the record says what was added; the revert restores the value, then removes exactly that', () => {
    const record = mergeOriginals(undefined, originalsFor(desired(row.healthSwitch), edits, { spec: original, vip: VIP }));
    expect(validateOriginals(record)).toBeUndefined();
    const { sourceIpType: _s, ...flags } = record.rules?.['lbl-80/loc-a'] ?? { sourceIpType: 0 };
    expect(flags).toEqual(row.record);
    const edited = applyJsonPatch({ spec: original }, buildConfigPatch(original, edits, VIP)).spec;
    // TKE applied it: the CLB has the 100.64 source and its switch as before.
    const plan = revertPlan(record, view(row.healthSwitch, 1));
    const restored = applyJsonPatch({ spec: edited }, buildConfigPatch(edited, plan.edits, VIP)).spec;
    expect(rule(restored).healthCheck).toMatchObject({ sourceIpType: declared(row.before) ?? 0, enable: row.after.enable });
    const back = applyJsonPatch({ metadata: { resourceVersion: '4' }, spec: restored }, guardedPatch('4', buildRemovalPatch(restored, plan.removals, VIP))).spec;
    expect(back).toEqual(original);
    expect(buildRemovalPatch(back, plan.removals, VIP)).toEqual([]);
  });
});

describe('fragments loopguard creates carry enable at every level', () => {
  it('new rule, new domain, new listener, new list: each healthCheck has enable = the CLB switch', () => {
    const on = (domain: string, url: string, port = 80): FieldEdit => ({ kind: 'ruleSource', protocol: port === 443 ? 'HTTPS' : 'HTTP', port, domain, url, value: 1, enable: true });
    const off = (domain: string, url: string): FieldEdit => ({ ...(on(domain, url) as Extract<FieldEdit, { kind: 'ruleSource' }>), enable: false });
    const spec = handSpec({ healthCheck: { enable: true } });
    const edits = [on('a.example.com', '/new'), off(VIP, '/x'), on('s.example.com', '/', 443)];
    const after = applyJsonPatch({ spec }, buildConfigPatch(spec, edits, VIP)).spec as { loadBalancer: { l7Listeners: { domains?: { rules?: { healthCheck?: Record<string, unknown> }[] }[] }[] } };
    const checks = after.loadBalancer.l7Listeners.flatMap((l) => (l.domains ?? []).flatMap((d) => (d.rules ?? []).map((r) => r.healthCheck)));
    // The user's rule (not edited) first, then the fragments loopguard created.
    expect(checks).toEqual([{ enable: true }, { enable: true, sourceIpType: 1 }, { enable: false, sourceIpType: 1 }, { enable: true, sourceIpType: 1 }]);
    for (const empty of [undefined, { loadBalancer: {} }]) {
      const made = applyJsonPatch({ spec: empty } as { spec: unknown }, buildConfigPatch(empty, [on('a.example.com', '/')], VIP)).spec;
      expect(made).toEqual({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'a.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] }] }] } });
    }
  });

  it('keepalive edits never add enable (loopguard writes no listener-level healthCheck)', () => {
    const spec = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, healthCheck: { intervalTime: 5 } }] } };
    const keep: FieldEdit = { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 };
    expect(enableMissing(spec, keep, VIP)).toBe(false);
    expect(buildConfigPatch(spec, [keep], VIP).filter((o) => o.op !== 'test')).toEqual([{ op: 'add', path: `${P}/keepaliveEnable`, value: 1 }]);
  });

  it('a healthCheck loopguard created goes whole on revert, unless someone declared more in it since', () => {
    const edit: FieldEdit = { kind: 'ruleSource', protocol: 'HTTP', port: 80, domain: 'a.example.com', url: '/', value: 0, enable: true };
    const grown = handSpec({ healthCheck: { enable: true, sourceIpType: 0, intervalTime: 9 } });
    expect(applyJsonPatch({ spec: grown }, buildRemovalPatch(grown, [{ edit, level: 'healthCheck' }], VIP)).spec).toEqual(handSpec({ healthCheck: { intervalTime: 9 } }));
    const own = handSpec({ healthCheck: { enable: true, sourceIpType: 0 } });
    expect(applyJsonPatch({ spec: own }, buildRemovalPatch(own, [{ edit, level: 'healthCheck' }], VIP)).spec).toEqual(handSpec({}));
    // Only enable added: the user's sourceIpType stays.
    const ops = buildRemovalPatch(own, [{ edit, enableAdded: true }], VIP);
    expect(ops).toEqual([...ID_TESTS, { op: 'remove', path: `${RULE}/healthCheck/enable` }]);
    expect(addedLevel(own, edit, VIP)).toBeUndefined();
  });
});

describe('the switch comes from the CLB observation', () => {
  it('clbFacts carries HealthSwitch; the Ingress assessment reads it into the rule state; desiredEdits declares it', () => {
    const lb = { loadBalancerId: 'lb-ing', name: '', type: 'INTERNAL', addressIpVersion: 'IPV4', vips: [VIP], tags: {}, status: 1, forward: 1, passToTarget: false } as unknown as Parameters<typeof clbFacts>[0];
    const raw = [
      {
        listenerId: 'lbl-80', name: '', protocol: 'HTTP', port: 80, keepaliveEnable: 1,
        rules: [
          { locationId: 'loc-on', domain: 'a.example.com', url: '/', healthCheck: { HealthSwitch: 1, SourceIpType: 0 } },
          { locationId: 'loc-off', domain: 'a.example.com', url: '/off', healthCheck: { HealthSwitch: 0, SourceIpType: 0 } },
        ],
      },
    ] as unknown as Parameters<typeof clbFacts>[1];
    const facts = clbFacts(lb, raw);
    expect(facts.listeners[0]?.rules?.map((r) => r.healthCheck)).toEqual([{ sourceIpType: 0, healthSwitch: 1 }, { sourceIpType: 0, healthSwitch: 0 }]);
    const ing = ingress({ loadBalancerIps: [VIP] }, { 'ingress.cloud.tencent.com/tke-service-config': 'hand' });
    const mixed = clb({ loadBalancerId: 'lb-ing', vips: [VIP], listeners: [listener('lbl-80', 'HTTP', 80, { keepaliveEnable: 1, rules: facts.listeners[0]?.rules ?? [] })] });
    const a = assessTarget(ing, context({ clb: mixed, policy: { l7: { keepalive: true, healthCheckSource: 'Range100_64' } } }));
    const d = a.desired?.layer === 'L7' ? a.desired : undefined;
    expect(d?.listeners[0]?.rules.map((r) => [r.locationId, r.currentHealthSwitch])).toEqual([['loc-on', 1], ['loc-off', 0]]);
    expect(desiredEdits(d!, undefined, NONE_REFUSED).flatMap((e) => (e.kind === 'ruleSource' ? [[e.url, e.enable]] : []))).toEqual([['/', true], ['/off', false]]);
  });
});

describe('record flag', () => {
  it('validates enableAdded as a boolean', () => {
    expect(validateOriginals({ v: 1, rules: { 'l/r': { sourceIpType: 0, enableAdded: true } } })).toBeUndefined();
    expect(validateOriginals({ v: 1, rules: { 'l/r': { sourceIpType: 0, enableAdded: 'yes' } } })).toMatch(/enableAdded must be a boolean/);
  });

  it('merge: a recorded entry keeps its value and level, and learns that loopguard added enable later', () => {
    const existing: Originals = { v: 1, rules: { 'l/r': { sourceIpType: 0, added: 'field' } } };
    expect(mergeOriginals(existing, { v: 1, rules: { 'l/r': { sourceIpType: 1, enableAdded: true } } }).rules).toEqual({ 'l/r': { sourceIpType: 0, added: 'field', enableAdded: true } });
    expect(mergeOriginals({ v: 1, rules: { 'l/r': { sourceIpType: 0, enableAdded: true } } }, { v: 1, rules: { 'l/r': { sourceIpType: 1 } } }).rules).toEqual({ 'l/r': { sourceIpType: 0, enableAdded: true } });
  });
});

describe('plan text', () => {
  it('says enable is declared with the source, and what the revert takes out', () => {
    const edit: FieldEdit = { kind: 'ruleSource', protocol: 'HTTP', port: 80, domain: 'a.example.com', url: '/', value: 1, enable: true };
    expect(describeStep({ kind: 'DeclareInTkeServiceConfig', config: 'hand', loadBalancerId: 'lb-1', edits: [edit] })).toMatch(/healthCheck\.sourceIpType: 1 \(enable: true as on the CLB/);
    expect(describeStep({ kind: 'RemoveFromTkeServiceConfig', config: 'hand', loadBalancerId: 'lb-1', removals: [{ edit, level: 'field', enableAdded: true }, { edit, enableAdded: true }] })).toMatch(
      /\(field \+ healthCheck\.enable\); .*\(healthCheck\.enable\)$/,
    );
  });
});
