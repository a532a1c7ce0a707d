import { describe, expect, it } from '@jest/globals';
import type { TargetRef } from '../../../src/model/facts.js';
import type { EventView } from '../../../src/mitigation/tke-events.js';
import { judgeWait, WaitClock, type AwaitStep, type WaitInput } from '../../../src/mitigation/tke-wait.js';

const T0 = Date.parse('2026-11-25T12:00:00Z');
const GRACE = 10_000;
const ING: TargetRef = { kind: 'Ingress', namespace: 'shop', name: 'web' };
const SVC: TargetRef = { kind: 'Service', namespace: 'shop', name: 'api' };

const created: AwaitStep = { kind: 'AwaitTke', reason: 'ConfigCreated', loadBalancerId: 'lb-1', config: 'web-auto-ingress-config' };
const applied: AwaitStep = { kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-1', config: 'web-auto-ingress-config', since: new Date(T0).toISOString() };
const originals: AwaitStep = { kind: 'AwaitTke', reason: 'OriginalsApplied', loadBalancerId: 'lb-1', config: 'web-auto-ingress-config' };
const userPass: AwaitStep = { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-1' };
const switched: AwaitStep = { kind: 'AwaitTke', reason: 'SourceSwitched', loadBalancerId: 'lb-2', since: new Date(T0).toISOString(), fallback: true };

function warning(component: string, at: number, message = 'EnsureLoadBalancer failed: Code=InternalError'): EventView {
  return { type: 'Warning', reason: 'SyncLoadBalancerFailed', message, source: { component }, lastTimestamp: new Date(at).toISOString() };
}
const ingressWarning = warning('l7-lb-controller', T0 + 3_000);
const serviceWarning = warning('tke-service-controller', T0 + 3_000);

function judge(step: AwaitStep, over: Partial<WaitInput> = {}) {
  return judgeWait({ step, target: ING, events: [], sinceMs: T0, observedAtMs: T0 + 1_000, nowMs: T0 + 1_000, graceMs: GRACE, ...over });
}

describe('judgeWait: every wait for TKE ends', () => {
  const cases: { name: string; step: AwaitStep; over?: Partial<WaitInput>; status: 'waiting' | 'failed'; reason?: string; message?: RegExp }[] = [
    { name: 'auto config, within the grace period, no Warning: waits', step: created, status: 'waiting', message: /waiting up to 10 s for TKE to create TkeServiceConfig web-auto-ingress-config/ },
    {
      name: 'auto config, grace over, no Warning: Stalled with the way out',
      step: created,
      over: { observedAtMs: T0 + GRACE, nowMs: T0 + GRACE },
      status: 'failed',
      reason: 'TkeSyncFailed',
      message: /TKE did not create TkeServiceConfig web-auto-ingress-config within its grace period \(10 s\).*kubectl describe ingress web -n shop.*tke-service-config/,
    },
    {
      name: "auto config, TKE's Warning within the grace period: Stalled at once with TKE's message",
      step: created,
      over: { events: [ingressWarning] },
      status: 'failed',
      reason: 'TkeSyncFailed',
      message: /TKE's latest Warning Event \(SyncLoadBalancerFailed\): "EnsureLoadBalancer failed: Code=InternalError"/,
    },
    { name: 'a Warning from before the wait began does not count', step: created, over: { events: [warning('l7-lb-controller', T0 - 60_000)] }, status: 'waiting' },
    { name: "a Warning from another component (not TKE's) does not count", step: created, over: { events: [warning('someone-else', T0 + 3_000)] }, status: 'waiting' },
    { name: "an Ingress wait ignores TKE's Service controller", step: created, over: { events: [serviceWarning] }, status: 'waiting' },
    {
      name: 'config applied, keepalive refused by TKE: the capability verdict',
      step: { ...applied, wantsKeepalive: true },
      over: { events: [warning('l7-lb-controller', T0 + 3_000, 'ModifyListener failed: Code=FailedOperation, Message=KeepaliveEnable requires the capability')] },
      status: 'failed',
      reason: 'KeepaliveCapabilityMissing',
      message: /lacks the CLB layer-7 SNAT \+ keepalive, by ticket capability/,
    },
    { name: 'config applied, grace over (planner) and keepalive wanted: capability most likely missing', step: { ...applied, graceOver: true, wantsKeepalive: true }, status: 'failed', reason: 'KeepaliveCapabilityMissing', message: /no TKE Warning Event explains it/ },
    { name: 'config applied, a CLB read before the grace period ended: still waiting', step: applied, over: { observedAtMs: T0 + GRACE - 1, nowMs: T0 + 60_000 }, status: 'waiting' },
    {
      name: 'originals of a release, grace over: Stalled, the record kept',
      step: originals,
      over: { observedAtMs: T0 + GRACE },
      status: 'failed',
      reason: 'TkeSyncFailed',
      message: /TKE did not restore the originals declared in TkeServiceConfig web-auto-ingress-config on CLB lb-1 .*keeps the record/,
    },
    { name: "pass-to-target the user declared, grace over: Stalled", step: userPass, over: { observedAtMs: T0 + GRACE }, status: 'failed', reason: 'TkeSyncFailed', message: /apply ingress.cloud.tencent.com\/pass-to-target to CLB lb-1/ },
    { name: 'a wait loopguard ends itself (fallback) never fails, past the grace period', step: switched, over: { target: SVC, observedAtMs: T0 + 60_000 }, status: 'waiting', message: /loopguard writes it itself if TKE has not within 10 s/ },
    {
      name: "a fallback wait quotes TKE's Warning on the Service",
      step: switched,
      over: { target: SVC, events: [serviceWarning] },
      status: 'waiting',
      message: /TKE's latest Warning Event \(SyncLoadBalancerFailed\)/,
    },
  ];
  it.each(cases)('$name', ({ step, over, status, reason, message }) => {
    const v = judge(step, over);
    expect(v.status).toBe(status);
    if (v.status === 'failed') {
      expect(v.error.permanent).toBe(true);
      expect(v.error.reason).toBe(reason);
      if (message) expect(v.error.message).toMatch(message);
    } else if (message) expect(v.note).toMatch(message);
  });

  it('learns the keepalive refusal only from TKE\'s own message', () => {
    const refused = judge({ ...applied, wantsKeepalive: true }, { events: [warning('l7-lb-controller', T0 + 3_000, 'Code=FailedOperation, Message=KeepaliveEnable requires ticket')] });
    expect(refused.status === 'failed' && refused.keepaliveRejected).toMatch(/KeepaliveEnable/);
    const timedOut = judge({ ...applied, graceOver: true, wantsKeepalive: true });
    expect(timedOut.status === 'failed' && timedOut.keepaliveRejected).toBeFalsy();
  });
});

describe('WaitClock: the start of a wait the plan gives none', () => {
  it('is the first sighting, kept across rounds, and the plan\'s own start wins', () => {
    const clock = new WaitClock();
    expect(clock.since(ING, created, T0)).toBe(T0);
    expect(clock.since(ING, created, T0 + 5_000)).toBe(T0);
    expect(clock.since(ING, { ...created, since: new Date(T0 + 1_000).toISOString() }, T0 + 6_000)).toBe(T0 + 1_000);
    // Another reason, CLB or target is another wait.
    expect(clock.since(ING, originals, T0 + 7_000)).toBe(T0 + 7_000);
    expect(clock.since(SVC, created, T0 + 7_000)).toBe(T0 + 7_000);
  });

  it('starts anew once the target ran without waiting, or after a long silence', () => {
    const clock = new WaitClock();
    clock.since(ING, created, T0);
    clock.since(SVC, userPass, T0);
    clock.ended(ING);
    expect(clock.size).toBe(1);
    expect(clock.since(ING, created, T0 + 20_000)).toBe(T0 + 20_000);
    expect(clock.since(SVC, userPass, T0 + 30 * 60_000)).toBe(T0);
    expect(clock.since(SVC, userPass, T0 + 91 * 60_000)).toBe(T0 + 91 * 60_000);
  });

  it('drops the waits of a target no longer run (deleted), so they do not pile up', () => {
    const clock = new WaitClock();
    clock.since(ING, created, T0);
    clock.since(SVC, userPass, T0);
    clock.since(SVC, userPass, T0 + 30 * 60_000);
    expect(clock.size).toBe(2);
    // An hour after ING was last seen, the next sighting of anything sweeps it; SVC, seen 31 min ago, stays.
    clock.since(SVC, userPass, T0 + 61 * 60_000);
    expect(clock.size).toBe(1);
    expect(clock.since(SVC, userPass, T0 + 62 * 60_000)).toBe(T0);
  });
});
