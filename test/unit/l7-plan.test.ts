// L7 mitigation, pure parts: JSON patches on TkeServiceConfigs (single fields, identity tests, resourceVersion
// guard, right indices), originals merge, revert plan, TKE event reading.
import { describe, expect, it } from '@jest/globals';
import { applyJsonPatch, buildConfigPatch, guardedPatch, pendingEdits, type FieldEdit } from '../../src/mitigation/l7/config-patch.js';
import { autoAnnotationAddedByLoopguard, clbRestored, mergeOriginals, revertPlan, type ClbListenerView } from '../../src/mitigation/l7/originals.js';
import { desiredEdits, originalsFor } from '../../src/mitigation/l7/plan.js';
import { isKeepaliveCapabilityError, latestTkeWarning } from '../../src/mitigation/l7/tke-events.js';
import type { L7DesiredState } from '../../src/model/desired-state.js';

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
const src = (port: number, domain: string, url: string, value: 0 | 1 = 1): FieldEdit => ({ kind: 'ruleSource', protocol: port === 443 ? 'HTTPS' : 'HTTP', port, domain, url, value });

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
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/1/domains/2/rules/0/healthCheck', value: { sourceIpType: 1 } },
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
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/0/domains/0/rules/-', value: { url: '/b', healthCheck: { sourceIpType: 1 } } },
      { op: 'add', path: '/spec/loadBalancer/l7Listeners/0/domains/-', value: { domain: 'c.example.com', rules: [{ url: '/', healthCheck: { sourceIpType: 1 } }] } },
      {
        op: 'add',
        path: '/spec/loadBalancer/l7Listeners/-',
        value: { protocol: 'HTTPS', port: 443, keepaliveEnable: 1, domains: [{ domain: 'd.example.com', rules: [{ url: '/', healthCheck: { sourceIpType: 1 } }] }] },
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

describe('desired edits and originals', () => {
  it('asks for the desired fields; skips new keepalive when the capability is known missing', () => {
    expect(desiredEdits(desired, undefined, false)).toEqual([keep('HTTP', 80), keep('HTTPS', 443), src(443, 'a.example.com', '/')]);
    expect(desiredEdits(desired, undefined, true)).toEqual([src(443, 'a.example.com', '/')]);
  });

  it('restores recorded originals of fields the policy no longer manages', () => {
    const unmanaged: L7DesiredState = { ...desired, listeners: desired.listeners.map(({ desiredKeepalive: _k, ...l }) => ({ ...l, rules: l.rules.map(({ desiredSourceIpType: _s, ...r }) => r) })) };
    expect(desiredEdits(unmanaged, { v: 1, listeners: { 'lbl-80': { keepaliveEnable: 0 } }, rules: { 'lbl-443/loc-a': { sourceIpType: 0 } } }, false)).toEqual([
      keep('HTTP', 80, 0),
      src(443, 'a.example.com', '/', 0),
    ]);
  });

  it('records CLB values only for fields that change', () => {
    expect(originalsFor(desired, desiredEdits(desired, undefined, false))).toEqual({ keepalive: { 'lbl-80': 0 }, ruleSource: { 'lbl-443/loc-a': 0 } });
  });

  it('merges: recorded values win, new ones are added', () => {
    const existing = { v: 1 as const, annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': null }, listeners: { 'lbl-80': { keepaliveEnable: 0 as const } } };
    const merged = mergeOriginals(existing, { keepalive: { 'lbl-80': 1, 'lbl-443': 0 }, ruleSource: { 'lbl-443/loc-a': 0 }, passToTarget: false, annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'false' } });
    expect(merged).toEqual({
      v: 1,
      annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': null },
      listeners: { 'lbl-80': { keepaliveEnable: 0 }, 'lbl-443': { keepaliveEnable: 0 } },
      rules: { 'lbl-443/loc-a': { sourceIpType: 0 } },
      loadBalancer: { passToTarget: false },
    });
    expect(mergeOriginals(merged, { passToTarget: true }).loadBalancer).toEqual({ passToTarget: false });
    expect(autoAnnotationAddedByLoopguard(merged)).toBe(true);
    expect(autoAnnotationAddedByLoopguard({ v: 1 })).toBe(false);
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

  it('maps record keys onto config fields through the CLB, and reports what is gone', () => {
    const plan = revertPlan(record, clb);
    expect(plan.edits).toEqual([keep('HTTP', 80, 0), src(443, VIP, '/', 0)]);
    expect(plan.passToTarget).toBe(false);
    expect(plan.annotations).toEqual({ 'ingress.cloud.tencent.com/tke-service-config-auto': null });
    expect(plan.gone).toEqual(['lbl-gone']);
    // Applied to a config loopguard edited, it gives back TKE's values.
    const edited = applyJsonPatch({ spec: autoSpec() }, buildConfigPatch(autoSpec(), [keep('HTTP', 80), src(443, VIP, '/')], VIP)).spec;
    const restored = applyJsonPatch({ spec: edited }, buildConfigPatch(edited, plan.edits, VIP)).spec;
    expect(restored.loadBalancer.l7Listeners[0]).toEqual(autoSpec().loadBalancer.l7Listeners[0]);
  });

  it('knows when the CLB shows the originals again', () => {
    expect(clbRestored(record, clb)).toBe(false);
    const back: ClbListenerView[] = [
      { ...clb[0]!, keepaliveEnable: 0 },
      { ...clb[1]!, rules: [{ locationId: 'loc-a', domain: VIP, url: '/', healthCheck: { sourceIpType: 0 } }] },
    ];
    expect(clbRestored(record, back)).toBe(true);
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
