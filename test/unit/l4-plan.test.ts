// L4 mitigation planning: which listeners to write, the HealthCheck sent (as read, only SourceIpType changed),
// the originals record (first value wins), and the release order (annotation → listeners → record).
import { describe, expect, it } from '@jest/globals';
import { assessService } from '../../src/model/assess-service.js';
import type { ListenerInfo } from '../../src/cloud/index.js';
import {
  PREVENT_LOOPBACK,
  convergedBefore,
  healthCheckFor,
  keptBy,
  mergeOriginals,
  originalsOf,
  ownedBy,
  planEnforce,
  planRelease,
} from '../../src/mitigation/l4/plan.js';
import { isPermanent } from '../../src/mitigation/context.js';
import { clb, context, l4Listener, service } from './model/fixtures.js';

const multiPort = clb({
  listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0), l4Listener('lbl-udp', 'UDP', 53, 0), l4Listener('lbl-other', 'TCP', 9000, 0)],
});
const svcLocal = service({
  externalTrafficPolicy: 'Local',
  ports: [
    { port: 80, protocol: 'TCP' },
    { port: 53, protocol: 'UDP' },
  ],
});

describe('planEnforce', () => {
  it('writes exactly the VIP-sourced listeners that serve the Service, then the annotation', () => {
    const a = assessService(svcLocal, context({ profile: 'ipvsNew', clb: multiPort }));
    const plan = planEnforce(a);
    expect(plan).toEqual({
      loadBalancerId: 'lb-abc',
      switches: [
        { listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, from: 0, to: 1 },
        { listenerId: 'lbl-udp', protocol: 'UDP', port: 53, from: 0, to: 1 },
      ],
      addAnnotation: true,
      requiredOnRange: ['lbl-tcp', 'lbl-udp'],
    });
  });

  it('skips listeners already on 100.64 and only annotates', () => {
    const c = clb({ listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1), l4Listener('lbl-udp', 'UDP', 53, 1)] });
    const plan = planEnforce(assessService(svcLocal, context({ clb: c })));
    expect(plan?.switches).toEqual([]);
    expect(plan?.addAnnotation).toBe(true);
  });

  it('does nothing for public, IPv6, converged or Pending targets', () => {
    expect(planEnforce(assessService(svcLocal, context({ clb: { ...multiPort, loadBalancerType: 'OPEN' } })))).toBeUndefined();
    expect(planEnforce(assessService(svcLocal, context({ clb: { ...multiPort, addressIpVersion: 'IPV6', vips: [] } })))).toBeUndefined();
    const done = clb({ listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1), l4Listener('lbl-udp', 'UDP', 53, 1)] });
    expect(planEnforce(assessService(service({ ...svcLocal }, { [PREVENT_LOOPBACK]: 'true' }), context({ clb: done })))).toBeUndefined();
    expect(planEnforce(assessService(svcLocal, context({ clb: { state: 'NotObserved' } })))).toBeUndefined();
  });

  it('never annotates when kube-proxy cannot bind the VIP (ipvs-old, Auto) and does not switch without need', () => {
    const plan = planEnforce(assessService(svcLocal, context({ profile: 'ipvsOld', clb: multiPort })));
    expect(plan?.addAnnotation ?? false).toBe(false);
  });
});

describe('healthCheckFor', () => {
  it('keeps every field as read and changes only SourceIpType', () => {
    const hc = { HealthSwitch: 1, TimeOut: 7, IntervalTime: 11, HealthNum: 4, UnHealthNum: 5, CheckType: 'CUSTOM', ContextType: 'HEX', SourceIpType: 0 };
    const l: ListenerInfo = { listenerId: 'lbl-1', name: 'x', protocol: 'UDP', port: 53, healthCheck: hc, rules: [] };
    expect(healthCheckFor(l, 1)).toEqual({ ...hc, SourceIpType: 1 });
    expect(l.healthCheck).toEqual(hc); // not mutated
    expect(healthCheckFor({ ...l, healthCheck: { ...hc, SourceIpType: 1 } }, 0)).toEqual(hc);
  });
});

describe('originals record', () => {
  const plan = {
    switches: [
      { listenerId: 'lbl-a', protocol: 'TCP', port: 80, from: 0 as const, to: 1 as const },
      { listenerId: 'lbl-b', protocol: 'UDP', port: 53, from: 0 as const, to: 1 as const },
    ],
    addAnnotation: true,
  };

  it('records each listener source and whether the annotation existed', () => {
    expect(mergeOriginals(undefined, plan, {})).toEqual({
      v: 1,
      listeners: { 'lbl-a': { sourceIpType: 0 }, 'lbl-b': { sourceIpType: 0 } },
      annotations: { [PREVENT_LOOPBACK]: null },
    });
    expect(mergeOriginals(undefined, plan, { [PREVENT_LOOPBACK]: 'false' })?.annotations).toEqual({ [PREVENT_LOOPBACK]: 'false' });
  });

  it('keeps the first recorded value and reports no change when all is recorded', () => {
    const first = { v: 1 as const, listeners: { 'lbl-a': { sourceIpType: 0 as const }, 'lbl-b': { sourceIpType: 0 as const } }, annotations: { [PREVENT_LOOPBACK]: null } };
    // loopguard's own value now on the target must never become the "original"
    expect(mergeOriginals(first, plan, { [PREVENT_LOOPBACK]: 'true' })).toBeUndefined();
    const partial = { v: 1 as const, listeners: { 'lbl-a': { sourceIpType: 0 as const, keepaliveEnable: 0 as const } } };
    expect(mergeOriginals(partial, { switches: plan.switches, addAnnotation: false }, {})).toEqual({
      v: 1,
      listeners: { 'lbl-a': { sourceIpType: 0, keepaliveEnable: 0 }, 'lbl-b': { sourceIpType: 0 } },
    });
  });

  it('reads ownership and the record from annotations', () => {
    const ann = { 'loopguard.dev/originals': '{"v":1,"listeners":{"lbl-a":{"sourceIpType":0}}}', 'loopguard.dev/policy': 'ns/p' };
    expect(ownedBy(ann, 'ns/p')).toBe(true);
    expect(ownedBy(ann, 'ns/q')).toBe(false);
    expect(originalsOf(ann)?.listeners).toEqual({ 'lbl-a': { sourceIpType: 0 } });
    expect(originalsOf({ 'loopguard.dev/originals': '{bad' })).toBeUndefined();
  });
});

describe('convergedBefore', () => {
  const record = (original: string | null | undefined) => ({
    v: 1 as const,
    listeners: { 'lbl-a': { sourceIpType: 0 as const } },
    ...(original !== undefined ? { annotations: { [PREVENT_LOOPBACK]: original } } : {}),
  });

  it('is true only while the prevent-loopback loopguard set is still there', () => {
    // loopguard added it (absent or "false" before): it did so after every listener read back on 100.64.
    expect(convergedBefore(record(null), { [PREVENT_LOOPBACK]: 'true' })).toBe(true);
    expect(convergedBefore(record('false'), { [PREVENT_LOOPBACK]: 'true' })).toBe(true);
    // not added yet: a crash between the switch and the annotation is not drift.
    expect(convergedBefore(record(null), {})).toBe(false);
    // the user's own annotation (recorded "true", or never recorded) proves nothing about loopguard's switch.
    expect(convergedBefore(record('true'), { [PREVENT_LOOPBACK]: 'true' })).toBe(false);
    expect(convergedBefore(record(undefined), { [PREVENT_LOOPBACK]: 'true' })).toBe(false);
    expect(convergedBefore(undefined, { [PREVENT_LOOPBACK]: 'true' })).toBe(false);
  });
});

describe('planRelease', () => {
  const record = {
    v: 1 as const,
    listeners: { 'lbl-a': { sourceIpType: 0 as const }, 'lbl-b': { sourceIpType: 0 as const } },
    annotations: { [PREVENT_LOOPBACK]: null },
  };

  it('annotation off first, then each listener, then the record dropped', () => {
    expect(planRelease(record, { [PREVENT_LOOPBACK]: 'true' })).toEqual([
      { step: 'RestoreAnnotation', key: PREVENT_LOOPBACK, value: null },
      { step: 'RestoreListener', listenerId: 'lbl-a', sourceIpType: 0 },
      { step: 'RestoreListener', listenerId: 'lbl-b', sourceIpType: 0 },
      { step: 'WriteRecord', record: null },
    ]);
  });

  it('restores a pre-existing annotation value and skips one already back', () => {
    expect(planRelease({ v: 1, annotations: { [PREVENT_LOOPBACK]: 'false' } }, { [PREVENT_LOOPBACK]: 'true' })[0]).toEqual({
      step: 'RestoreAnnotation',
      key: PREVENT_LOOPBACK,
      value: 'false',
    });
    expect(planRelease({ v: 1, annotations: { [PREVENT_LOOPBACK]: null } }, {})).toEqual([{ step: 'WriteRecord', record: null }]);
  });

  it('partial release keeps what is still wanted and another layer\'s fields', () => {
    const r = { ...record, listeners: { ...record.listeners, 'lbl-c': { keepaliveEnable: 0 as const } } };
    expect(planRelease(r, { [PREVENT_LOOPBACK]: 'true' }, { keepListeners: new Set(['lbl-a']), keepAnnotation: false })).toEqual([
      { step: 'RestoreAnnotation', key: PREVENT_LOOPBACK, value: null },
      { step: 'RestoreListener', listenerId: 'lbl-b', sourceIpType: 0 },
      { step: 'WriteRecord', record: { v: 1, listeners: { 'lbl-a': { sourceIpType: 0 }, 'lbl-c': { keepaliveEnable: 0 } } } },
    ]);
    expect(planRelease(record, {}, { keepListeners: new Set(['lbl-a', 'lbl-b']), keepAnnotation: true })).toEqual([]);
  });

  it('keptBy follows the desired state', () => {
    const a = assessService(svcLocal, context({ clb: multiPort }));
    const kept = keptBy(a.desired?.layer === 'L4' ? a.desired : undefined);
    expect([...kept.keepListeners]).toEqual(['lbl-tcp', 'lbl-udp']);
    expect(kept.keepAnnotation).toBe(true);
    expect(keptBy(undefined)).toEqual({ keepListeners: new Set(), keepAnnotation: false });
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
