// L7 mitigation, pure parts: JSON patches on TkeServiceConfigs (single fields, identity tests, resourceVersion
// guard, right indices), originals merge, revert plan, TKE event reading.
import { describe, expect, it } from '@jest/globals';
import { validateOriginals, type Originals } from '../../../src/api/originals.js';
import { addedLevel, applyJsonPatch, buildConfigPatch, buildRemovalPatch, pendingEdits, type FieldEdit } from '../../../src/plan/config-patch.js';
import { guardedPatch } from '../../../src/api/json-patch.js';
import { revertPlan, type ClbListenerView } from '../../../src/plan/l7-revert.js';
import { annotatedByLoopguard } from '../../../src/plan/originals.js';
import { mergeOriginals } from '../../../src/api/originals.js';
import { desiredEdits, originalsFor } from '../../../src/plan/l7-edits.js';
import { isKeepaliveCapabilityError, latestTkeWarning } from '../../../src/mitigation/tke-events.js';
import type { L7DesiredState } from '../../../src/model/desired-state.js';

const VIP = '10.100.0.7';

/** An auto config as TKE writes it: HTTP:80 without domains, HTTPS:443 with two hosts and the VIP domain. */
interface Frag {
  url: string;
  healthCheck?: Record<string, unknown>;
  [k: string]: unknown;
}
function autoSpec() {
  const rules = (r: Frag[]): Frag[] => r;
  return {
    loadBalancer: {
      internetMaxBandwidthOut: 10,
      l7Listeners: [
        { protocol: 'HTTP', port: 80, keepaliveEnable: 0, defaultServer: 'x' },
        {
          protocol: 'HTTPS',
          port: 443,
          keepaliveEnable: 0,
          domains: [
            { domain: 'a.example.com', rules: rules([{ url: '/', healthCheck: { enable: true, sourceIpType: 0, httpCode: 31 }, scheduler: 'WRR' }]) },
            {
              domain: 'b.example.com',
              rules: rules([
                { url: '/x', healthCheck: { enable: true, sourceIpType: 0 } },
                { url: '/y', healthCheck: { enable: true, sourceIpType: 0 } },
              ]),
            },
            { domain: '', rules: rules([{ url: '/', forwardType: 'HTTPS' }]) },
          ],
        },
      ],
    },
    custom: { kept: true },
  };
}

const keep = (protocol: string, port: number, value: 0 | 1 = 1): FieldEdit => ({ kind: 'keepalive', protocol, port, value });
const src = (port: number, domain: string, url: string, value: 0 | 1 = 1, enable = true): FieldEdit => ({ kind: 'ruleSource', protocol: port === 443 ? 'HTTPS' : 'HTTP', port, domain, url, value, enable });

describe('buildConfigPatch', () => {
  it('sets single fields at the right indices, pinned by identity tests, never replacing a list', () => {
    const spec = autoSpec();
    const ops = buildConfigPatch(spec, [keep('HTTP', 80), keep('HTTPS', 443), src(443, 'b.example.com', '/y')], VIP);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/protocol', value: 'HTTP' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/port', value: 80 },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/0/keepaliveEnable', value: 1 },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/protocol', value: 'HTTPS' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/port', value: 443 },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/1/keepaliveEnable', value: 1 },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/domains/1/domain', value: 'b.example.com' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/domains/1/rules/1/url', value: '/y' },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/1/domains/1/rules/1/healthCheck/sourceIpType', value: 1 },
    ]);
    for (const o of ops) expect(o.path).not.toMatch(/l7Listeners$|domains$|rules$/);
    const after = applyJsonPatch({ metadata: { resourceVersion: '7' }, spec }, guardedPatch('7', ops));
    const l = after.spec.loadBalancer.l7Listeners;
    expect(l[0]).toEqual({ protocol: 'HTTP', port: 80, keepaliveEnable: 1, defaultServer: 'x' });
    expect(l[1]?.domains?.[1]?.rules?.[1]?.healthCheck).toEqual({ enable: true, sourceIpType: 1 });
    expect(l[1]?.domains?.[1]?.rules?.[0]?.healthCheck).toEqual({ enable: true, sourceIpType: 0 });
    expect(after.spec.custom).toEqual({ kept: true });
    expect(after.spec.loadBalancer.internetMaxBandwidthOut).toBe(10);
  });

  it('guards with the resourceVersion first; a stale version fails the whole patch', () => {
    const ops = guardedPatch('42', buildConfigPatch(autoSpec(), [keep('HTTP', 80)], VIP));
    expect(ops[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '42' });
    expect(() => applyJsonPatch({ metadata: { resourceVersion: '43' }, spec: autoSpec() }, ops)).toThrow(/test failed/);
  });

  it('is empty when the config already declares every value (idempotent)', () => {
    const spec = autoSpec();
    const edits = [keep('HTTP', 80), src(443, 'a.example.com', '/')];
    const once = applyJsonPatch({ spec }, buildConfigPatch(spec, edits, VIP)).spec;
    expect(buildConfigPatch(once, edits, VIP)).toEqual([]);
    expect(pendingEdits(once, edits, VIP)).toEqual([]);
  });

  it('maps the VIP rule domain onto the config domain "" and adds a health check object where there is none', () => {
    const ops = buildConfigPatch(autoSpec(), [src(443, VIP, '/')], VIP);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/protocol', value: 'HTTPS' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/port', value: 443 },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/domains/2/domain', value: '' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/1/domains/2/rules/0/url', value: '/' },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/1/domains/2/rules/0/healthCheck', value: { enable: true, sourceIpType: 1 } },
    ]);
  });

  it('appends missing fragments of a hand-made config with only loopguard fields', () => {
    const spec = { loadBalancer: { l7Listeners: [{ protocol: 'http', port: 80, domains: [{ domain: 'a.example.com', rules: [{ url: '/' }] }] }] } };
    const ops = buildConfigPatch(spec, [keep('HTTP', 80), src(80, 'a.example.com', '/b'), src(80, 'c.example.com', '/'), keep('HTTPS', 443), src(443, 'd.example.com', '/')], VIP);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/protocol', value: 'http' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/port', value: 80 },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/0/keepaliveEnable', value: 1 },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/domains/0/domain', value: 'a.example.com' },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/0/domains/0/rules/-', value: { url: '/b', healthCheck: { enable: true, sourceIpType: 1 } } },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/0/domains/-', value: { domain: 'c.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] } },
      {
        op: 'add',
        path: '/spec/loadBalancer/l7Listeners/-',
        value: { protocol: 'HTTPS', port: 443, keepaliveEnable: 1, domains: [{ domain: 'd.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] }] },
      },
    ]);
    const after = applyJsonPatch({ spec }, ops).spec;
    expect(pendingEdits(after, [keep('HTTP', 80), src(80, 'a.example.com', '/b'), src(80, 'c.example.com', '/'), keep('HTTPS', 443), src(443, 'd.example.com', '/')], VIP)).toEqual([]);
  });

  it('creates the list only when the config has none', () => {
    expect(buildConfigPatch({ loadBalancer: { l4Listeners: [] } }, [keep('HTTP', 80)], VIP)).toEqual([
      { op: 'add', path: '/spec/loadBalancer/l7Listeners', value: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1 }] },
    ]);
    expect(buildConfigPatch(undefined, [keep('HTTP', 80)], VIP)).toEqual([
      { op: 'add', path: '/spec', value: {} },
      { op: 'add', path: '/spec/loadBalancer', value: {} },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners', value: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1 }] },
    ]);
  });
});

const desired: L7DesiredState = {
  layer: 'L7',
  loadBalancerId: 'lb-1',
  tkeServiceConfig: { name: 'web-auto-ingress-config', source: 'Auto' },
  passToTarget: { current: false },
  listeners: [
    { listenerId: 'lbl-80', protocol: 'HTTP', port: 80, currentKeepalive: 0, desiredKeepalive: 1, rules: [] },
    {
      listenerId: 'lbl-443',
      protocol: 'HTTPS',
      port: 443,
      currentKeepalive: 1,
      desiredKeepalive: 1,
      rules: [{ locationId: 'loc-a', domain: 'a.example.com', url: '/', currentSourceIpType: 0, desiredSourceIpType: 1 }],
    },
  ],
};

const NONE_REFUSED = { keepalive: false, range100_64: false };

describe('desired edits and originals', () => {
  it('asks for the desired fields; skips what the account is known to refuse', () => {
    expect(desiredEdits(desired, undefined, NONE_REFUSED)).toEqual([keep('HTTP', 80), keep('HTTPS', 443), src(443, 'a.example.com', '/')]);
    expect(desiredEdits(desired, undefined, { keepalive: true, range100_64: false })).toEqual([src(443, 'a.example.com', '/')]);
    // The 100.64 source refused: rule sources are held back, as the model's blocker says; keepalive still goes.
    expect(desiredEdits(desired, undefined, { keepalive: false, range100_64: true })).toEqual([keep('HTTP', 80), keep('HTTPS', 443)]);
  });

  it('restores recorded originals of fields the policy no longer manages', () => {
    const unmanaged: L7DesiredState = { ...desired, listeners: desired.listeners.map(({ desiredKeepalive: _k, ...l }) => ({ ...l, rules: l.rules.map(({ desiredSourceIpType: _s, ...r }) => r) })) };
    expect(desiredEdits(unmanaged, { v: 1, listeners: { 'lbl-80': { keepaliveEnable: 0 } }, rules: { 'lbl-443/loc-a': { sourceIpType: 0 } } }, { keepalive: true, range100_64: true })).toEqual([
      keep('HTTP', 80, 0),
      src(443, 'a.example.com', '/', 0),
    ]);
  });

  it('records CLB values only for fields that change', () => {
    expect(originalsFor(desired, desiredEdits(desired, undefined, NONE_REFUSED))).toEqual({ v: 1, listeners: { 'lbl-80': { keepaliveEnable: 0 } }, rules: { 'lbl-443/loc-a': { sourceIpType: 0 } } });
  });

  it('merges: recorded values win, new ones are added', () => {
    const existing = { v: 1 as const, annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': null }, listeners: { 'lbl-80': { keepaliveEnable: 0 as const } } };
    const merged = mergeOriginals(existing, {
      v: 1,
      listeners: { 'lbl-80': { keepaliveEnable: 1 }, 'lbl-443': { keepaliveEnable: 0 } },
      rules: { 'lbl-443/loc-a': { sourceIpType: 0 } },
      loadBalancer: { passToTarget: false },
      annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'false' },
    });
    expect(merged).toEqual({
      v: 1,
      annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': null },
      listeners: { 'lbl-80': { keepaliveEnable: 0 }, 'lbl-443': { keepaliveEnable: 0 } },
      rules: { 'lbl-443/loc-a': { sourceIpType: 0 } },
      loadBalancer: { passToTarget: false },
    });
    expect(mergeOriginals(merged, { v: 1, loadBalancer: { passToTarget: true } }).loadBalancer).toEqual({ passToTarget: false });
    expect(annotatedByLoopguard(merged, 'ingress.cloud.tencent.com/tke-service-config-auto')).toBe(true);
    expect(annotatedByLoopguard({ v: 1 }, 'ingress.cloud.tencent.com/tke-service-config-auto')).toBe(false);
  });
});

describe('revert plan', () => {
  const clb: ClbListenerView[] = [
    { listenerId: 'lbl-80', protocol: 'HTTP', port: 80, keepaliveEnable: 1, rules: [] },
    { listenerId: 'lbl-443', protocol: 'HTTPS', port: 443, keepaliveEnable: 1, rules: [{ locationId: 'loc-a', domain: VIP, url: '/', healthCheck: { sourceIpType: 1 } }] },
  ];
  const record = {
    v: 1 as const,
    annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': null },
    listeners: { 'lbl-80': { keepaliveEnable: 0 as const }, 'lbl-gone': { keepaliveEnable: 0 as const } },
    rules: { 'lbl-443/loc-a': { sourceIpType: 0 as const } },
    loadBalancer: { passToTarget: false },
  };

  it('maps record keys onto config fields through the CLB, and plans nothing for what is gone (lbl-gone)', () => {
    const plan = revertPlan(record, clb);
    expect(plan.edits).toEqual([keep('HTTP', 80, 0), src(443, VIP, '/', 0)]);
    // Applied to a config loopguard edited, it gives back TKE's values.
    const edited = applyJsonPatch({ spec: autoSpec() }, buildConfigPatch(autoSpec(), [keep('HTTP', 80), src(443, VIP, '/')], VIP)).spec;
    const restored = applyJsonPatch({ spec: edited }, buildConfigPatch(edited, plan.edits, VIP)).spec;
    expect(restored.loadBalancer.l7Listeners[0]).toEqual(autoSpec().loadBalancer.l7Listeners[0]);
  });

  it('knows when the CLB shows the originals again', () => {
    expect(revertPlan(record, clb).restored).toBe(false);
    const back: ClbListenerView[] = [
      { ...clb[0]!, keepaliveEnable: 0 },
      { ...clb[1]!, rules: [{ locationId: 'loc-a', domain: VIP, url: '/', healthCheck: { sourceIpType: 0 } }] },
    ];
    expect(revertPlan(record, back).restored).toBe(true);
  });
});

describe('declarations loopguard added (hand-made configs)', () => {
  /** A hand-made config: HTTP:80 without keepaliveEnable, a rule without a health check, one with one. */
  function handSpec() {
    return {
      loadBalancer: {
        internetMaxBandwidthOut: 20,
        l7Listeners: [
          {
            protocol: 'HTTP',
            port: 80,
            defaultServer: 'a.example.com',
            domains: [
              {
                domain: 'a.example.com',
                rules: [
                  { url: '/', scheduler: 'WRR', healthCheck: { enable: true, intervalTime: 7 } },
                  { url: '/nohc', scheduler: 'WRR' },
                ],
              },
              { domain: 'norules.example.com' },
            ],
          },
          { protocol: 'HTTP', port: 8080, keepaliveEnable: 0 },
        ],
      },
    };
  }
  const clb: ClbListenerView[] = [
    {
      listenerId: 'lbl-80',
      protocol: 'HTTP',
      port: 80,
      keepaliveEnable: 0,
      rules: [
        { locationId: 'loc-a', domain: 'a.example.com', url: '/', healthCheck: { sourceIpType: 0 } },
        { locationId: 'loc-nohc', domain: 'a.example.com', url: '/nohc', healthCheck: { sourceIpType: 0 } },
        { locationId: 'loc-new', domain: 'a.example.com', url: '/new', healthCheck: { sourceIpType: 0 } },
        { locationId: 'loc-vip', domain: VIP, url: '/x', healthCheck: { sourceIpType: 0 } },
        { locationId: 'loc-vip2', domain: VIP, url: '/y', healthCheck: { sourceIpType: 0 } },
        { locationId: 'loc-nr', domain: 'norules.example.com', url: '/', healthCheck: { sourceIpType: 0 } },
      ],
    },
    { listenerId: 'lbl-8080', protocol: 'HTTP', port: 8080, keepaliveEnable: 0, rules: [] },
    { listenerId: 'lbl-443', protocol: 'HTTPS', port: 443, keepaliveEnable: 0, rules: [{ locationId: 'loc-s', domain: 's.example.com', url: '/', healthCheck: { sourceIpType: 0 } }] },
  ];
  const handDesired: L7DesiredState = {
    layer: 'L7',
    loadBalancerId: 'lb-1',
    tkeServiceConfig: { name: 'hand', source: 'Annotation' },
    passToTarget: { current: false },
    listeners: clb.map((l) => ({
      listenerId: l.listenerId,
      protocol: l.protocol,
      port: l.port,
      currentKeepalive: 0 as const,
      desiredKeepalive: 1 as const,
      rules: (l.rules ?? []).map((r) => ({ locationId: r.locationId, domain: r.domain, url: r.url, currentSourceIpType: 0 as const, desiredSourceIpType: 1 as const })),
    })),
  };
  const edits = desiredEdits(handDesired, undefined, NONE_REFUSED);

  it('tells, per field, what declaring it adds', () => {
    const spec = handSpec();
    const levels = edits.map((e) => [e.kind === 'keepalive' ? `${e.port}` : `${e.port}${e.domain}${e.url}`, addedLevel(spec, e, VIP) ?? 'declared']);
    expect(levels).toEqual([
      ['80', 'field'],
      ['80a.example.com/', 'field'],
      ['80a.example.com/nohc', 'healthCheck'],
      ['80a.example.com/new', 'rule'],
      [`80${VIP}/x`, 'domain'],
      [`80${VIP}/y`, 'domain'],
      ['80norules.example.com/', 'rules'],
      ['8080', 'declared'],
      ['443', 'listener'],
      ['443s.example.com/', 'listener'],
    ]);
    expect(addedLevel({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80 }] } }, src(80, 'a', '/'), VIP)).toBe('domains');
    expect(addedLevel({ loadBalancer: {} }, keep('HTTP', 80), VIP)).toBe('listeners');
    expect(addedLevel({ other: 1 }, keep('HTTP', 80), VIP)).toBe('loadBalancer');
    expect(addedLevel(undefined, keep('HTTP', 80), VIP)).toBe('spec');
  });

  it('records undeclared fields (even when the CLB value does not change) with their level; absent flag = declared', () => {
    const add = originalsFor(handDesired, edits, { spec: handSpec(), vip: VIP });
    expect(Object.fromEntries(Object.entries(add.listeners ?? {}).map(([k, l]) => [k, l.keepaliveEnable]))).toEqual({ 'lbl-80': 0, 'lbl-8080': 0, 'lbl-443': 0 });
    expect(Object.fromEntries(Object.entries(add.listeners ?? {}).flatMap(([k, l]) => (l.keepaliveAdded ? [[k, l.keepaliveAdded]] : [])))).toEqual({ 'lbl-80': 'field', 'lbl-443': 'listener' });
    expect(Object.fromEntries(Object.entries(add.rules ?? {}).flatMap(([k, r]) => (r.added ? [[k, r.added]] : [])))).toEqual({
      'lbl-80/loc-a': 'field',
      'lbl-80/loc-nohc': 'healthCheck',
      'lbl-80/loc-new': 'rule',
      'lbl-80/loc-vip': 'domain',
      'lbl-80/loc-vip2': 'domain',
      'lbl-80/loc-nr': 'rules',
      'lbl-443/loc-s': 'listener',
    });
    const record = mergeOriginals(undefined, add);
    expect(record.listeners?.['lbl-80']).toEqual({ keepaliveEnable: 0, keepaliveAdded: 'field' });
    expect(record.listeners?.['lbl-8080']).toEqual({ keepaliveEnable: 0 });
    expect(record.rules?.['lbl-80/loc-nohc']).toEqual({ sourceIpType: 0, added: 'healthCheck' });
    expect(validateOriginals(record)).toBeUndefined();
    // A field already declared with the wanted value, CLB unchanged: nothing recorded (as before).
    const declared = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 8080, keepaliveEnable: 1 }] } };
    const on: L7DesiredState = { ...handDesired, listeners: [{ listenerId: 'lbl-8080', protocol: 'HTTP', port: 8080, currentKeepalive: 1, desiredKeepalive: 1, rules: [] }] };
    expect(originalsFor(on, [keep('HTTP', 8080)], { spec: declared, vip: VIP })).toEqual({ v: 1 });
    // Without the config everything counts as declared.
    expect(Object.values(originalsFor(handDesired, edits).listeners ?? {}).some((l) => l.keepaliveAdded !== undefined)).toBe(false);
  });

  it('merge: a recorded value keeps its own flag (absent = declared), new entries bring theirs', () => {
    const existing: Originals = { v: 1, listeners: { 'lbl-80': { keepaliveEnable: 0 } }, rules: { 'lbl-80/loc-a': { sourceIpType: 0, added: 'field' } } };
    const merged = mergeOriginals(existing, {
      v: 1,
      listeners: { 'lbl-80': { keepaliveEnable: 0, keepaliveAdded: 'field' }, 'lbl-443': { keepaliveEnable: 0, keepaliveAdded: 'listener' } },
      rules: { 'lbl-80/loc-a': { sourceIpType: 0 } },
    });
    expect(merged.listeners).toEqual({ 'lbl-80': { keepaliveEnable: 0 }, 'lbl-443': { keepaliveEnable: 0, keepaliveAdded: 'listener' } });
    expect(merged.rules).toEqual({ 'lbl-80/loc-a': { sourceIpType: 0, added: 'field' } });
  });

  it('validates the flags', () => {
    expect(validateOriginals({ v: 1, listeners: { l: { keepaliveEnable: 0, keepaliveAdded: 'rule' } }, rules: { 'l/r': { sourceIpType: 0, added: 'domains' } } })).toBeUndefined();
    expect(validateOriginals({ v: 1, listeners: { l: { keepaliveEnable: 0, keepaliveAdded: 'everything' } } })).toMatch(/keepaliveAdded must be one of/);
    expect(validateOriginals({ v: 1, rules: { 'l/r': { sourceIpType: 0, added: true } } })).toMatch(/added must be one of/);
  });

  it('revert: restores values first, then removing what loopguard added gives back the hand-made spec exactly', () => {
    const original = handSpec();
    const record = mergeOriginals(undefined, originalsFor(handDesired, edits, { spec: original, vip: VIP }));
    const edited = applyJsonPatch({ spec: original }, buildConfigPatch(original, edits, VIP)).spec;
    expect(pendingEdits(edited, edits, VIP)).toEqual([]);
    const plan = revertPlan(record, clb);
    expect(plan.removals.map((r) => r.level)).toEqual(['field', 'listener', 'field', 'healthCheck', 'rule', 'domain', 'domain', 'rules', 'listener']);
    // Step 1: the recorded values are declared (what TKE needs to put the CLB back).
    const restored = applyJsonPatch({ spec: edited }, buildConfigPatch(edited, plan.edits, VIP)).spec;
    expect(restored.loadBalancer.l7Listeners[0]).toMatchObject({ keepaliveEnable: 0 });
    // Step 2 (once the CLB shows them): loopguard's declarations go.
    const ops = buildRemovalPatch(restored, plan.removals, VIP);
    for (const o of ops) expect(['test', 'remove']).toContain(o.op);
    const after = applyJsonPatch({ metadata: { resourceVersion: '9' }, spec: restored }, guardedPatch('9', ops));
    expect(after.spec).toEqual(original);
    // Idempotent: nothing left to remove.
    expect(buildRemovalPatch(after.spec, plan.removals, VIP)).toEqual([]);
    // A concurrent writer (stale resourceVersion) fails the whole patch.
    expect(() => applyJsonPatch({ metadata: { resourceVersion: '10' }, spec: restored }, guardedPatch('9', ops))).toThrow(/test failed/);
  });

  it('removes by identity, in order, re-planning indices after each removal', () => {
    const spec = {
      loadBalancer: {
        l7Listeners: [
          { protocol: 'HTTP', port: 80, keepaliveEnable: 0 },
          { protocol: 'HTTP', port: 81, keepaliveEnable: 0 },
          { protocol: 'HTTP', port: 82, keepaliveEnable: 0, x: 1 },
        ],
      },
    };
    const ops = buildRemovalPatch(spec, [{ edit: keep('HTTP', 80, 0), level: 'listener' }, { edit: keep('HTTP', 81, 0), level: 'listener' }, { edit: keep('HTTP', 82, 0), level: 'field' }], VIP);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/protocol', value: 'HTTP' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/port', value: 80 },
      { op: 'remove', path: '/spec/loadBalancer/l7Listeners/0' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/protocol', value: 'HTTP' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/port', value: 81 },
      { op: 'remove', path: '/spec/loadBalancer/l7Listeners/0' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/protocol', value: 'HTTP' },
      { op: 'test', path: '/spec/loadBalancer/l7Listeners/0/port', value: 82 },
      { op: 'remove', path: '/spec/loadBalancer/l7Listeners/0/keepaliveEnable' },
    ]);
    expect(applyJsonPatch({ spec }, ops).spec).toEqual({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 82, x: 1 }] } });
  });

  it('takes out lists and objects it created only when they are left empty', () => {
    for (const original of [undefined, { other: 1 }, { loadBalancer: {} }, { loadBalancer: { l4Listeners: [] } }]) {
      const e = [keep('HTTP', 80), src(80, 'a.example.com', '/')];
      const levels = e.map((x) => addedLevel(original, x, VIP));
      const edited = applyJsonPatch({ spec: original } as { spec: unknown }, buildConfigPatch(original, e, VIP)).spec;
      const removals = e.map((edit, i) => ({ edit, level: levels[i]! }));
      expect(applyJsonPatch({ spec: edited }, buildRemovalPatch(edited, removals, VIP)).spec).toEqual(original);
    }
    // Something else was added to the list meanwhile: the list stays.
    const withOther = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1 }, { protocol: 'HTTP', port: 90 }] } };
    expect(applyJsonPatch({ spec: withOther }, buildRemovalPatch(withOther, [{ edit: keep('HTTP', 80), level: 'listeners' }], VIP)).spec).toEqual({
      loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 90 }] },
    });
  });

  it('declared fields keep the old behaviour: value restored, nothing removed', () => {
    const plan = revertPlan({ v: 1, listeners: { 'lbl-8080': { keepaliveEnable: 0 } } }, clb);
    expect(plan.edits).toEqual([keep('HTTP', 8080, 0)]);
    expect(plan.removals).toEqual([]);
  });
});

describe('TKE events', () => {
  const msg = 'ModifyListener lb-1 HTTP:80 failed: Code=FailedOperation, Message=KeepaliveEnable/SnatEnable requires the CLB layer-7 SNAT and keepalive capability; apply for it by ticket.';
  it('picks the newest Warning from l7-lb-controller since the write', () => {
    const events = [
      { type: 'Warning', reason: 'SyncLoadBalancerFailed', message: 'old', source: { component: 'l7-lb-controller' }, lastTimestamp: '2026-01-01T00:00:00Z' },
      { type: 'Warning', reason: 'SyncLoadBalancerFailed', message: msg, source: { component: 'l7-lb-controller' }, lastTimestamp: '2026-01-01T00:01:00Z' },
      { type: 'Warning', reason: 'TargetAtRisk', message: 'ours', source: { component: 'loopguard' }, lastTimestamp: '2026-01-01T00:02:00Z' },
      { type: 'Normal', reason: 'Sync', message: 'fine', source: { component: 'l7-lb-controller' }, lastTimestamp: '2026-01-01T00:03:00Z' },
    ];
    expect(latestTkeWarning(events, Date.parse('2026-01-01T00:00:30Z'))?.message).toBe(msg);
    expect(latestTkeWarning(events, Date.parse('2026-01-01T00:05:00Z'))).toBeUndefined();
  });
  it('recognises the missing keepalive capability', () => {
    expect(isKeepaliveCapabilityError(msg)).toBe(true);
    expect(isKeepaliveCapabilityError('ModifyRule lb-1 failed: Code=InvalidParameterValue, Message=TimeOut')).toBe(false);
  });
});
