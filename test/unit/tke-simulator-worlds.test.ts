// Pure planning of the TKE simulator's documented worlds (tencent-cloud.md §9): sync scope `all` puts TKE's view of its
// own L4 health checks back (#2), the account's default source (#3), and the pass-to-target annotation (#5).
import { describe, expect, it } from '@jest/globals';
import type { HealthCheck, Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { planConfigSync } from '../../sim/tke-simulator/config-plan.js';
import { mergeAutoConfigSpec } from '../../sim/tke-simulator/auto-config.js';
import { healthChecksWithoutEnable, refusalMessage } from '../../sim/tke-simulator/health-check-enable.js';
import type { TkeServiceConfigSpec } from '../../sim/tke-simulator/tke-service-config.js';
import { healthCheckIsNot, tkeL4HealthCheck } from '../../sim/tke-simulator/health-check.js';
import { passToTargetWish } from '../../sim/tke-simulator/pass-to-target.js';

// A TCP check as the emulator renders a listener TKE created on a legacy account (nulls for unset fields).
const created = (over: Partial<HealthCheck> = {}): HealthCheck =>
  ({
    HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, HttpCode: null, HttpCheckPath: null,
    HttpCheckDomain: null, HttpCheckMethod: null, CheckPort: null, CheckType: 'TCP', SourceIpType: 0, ...over,
  }) as unknown as HealthCheck;
const tcp = (id: string, port: number, hc: HealthCheck): Listener => ({ ListenerId: id, Protocol: 'TCP', Port: port, HealthCheck: hc, Scheduler: 'WRR', SessionExpireTime: 0 });
const own = (ids: string[], accountSourceIpType = 0) => ({ listenerIds: new Set(ids), accountSourceIpType });
const plan = (listeners: Listener[], extra: Partial<Parameters<typeof planConfigSync>[0]> = {}) =>
  planConfigSync({ loadBalancerId: 'lb-1', vip: '10.100.0.3', listeners, spec: undefined, ...extra });

describe("TKE's view of its L4 health checks", () => {
  it('is the check TKE creates: on, CLB defaults, CheckType by protocol, the given source, declared fields over it', () => {
    expect(tkeL4HealthCheck('TCP', {}, 0)).toEqual({ HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 0 });
    expect(tkeL4HealthCheck('UDP', { IntervalTime: 10, SourceIpType: 1 }, 0)).toMatchObject({ CheckType: 'PING', IntervalTime: 10, SourceIpType: 1 });
  });

  it('matches a freshly created listener exactly, and differs on any edited or added field', () => {
    const view = tkeL4HealthCheck('TCP', {}, 0);
    expect(healthCheckIsNot(created(), view)).toBe(false);
    expect(healthCheckIsNot(created({ SourceIpType: 1 }), view)).toBe(true);
    expect(healthCheckIsNot(created({ CheckPort: 8080 }), view)).toBe(true);
    expect(healthCheckIsNot(created({ HealthSwitch: 0 }), view)).toBe(true);
  });
});

describe('sync scope all', () => {
  it("puts a console edit of TKE's own listener back, whole, and leaves other listeners to the declared rules", () => {
    const edited = created({ SourceIpType: 1, IntervalTime: 30, CheckPort: 8080 });
    const out = plan([tcp('lbl-own', 80, edited), tcp('lbl-user', 81, edited)], { ownL4: own(['lbl-own']) });
    expect(out).toEqual([
      {
        action: 'ModifyListener',
        target: 'TCP:80',
        request: {
          LoadBalancerId: 'lb-1',
          ListenerId: 'lbl-own',
          HealthCheck: { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 0 },
        },
      },
    ]);
    // Scope declared (no ownL4): nothing is declared, nothing is written.
    expect(plan([tcp('lbl-own', 80, edited)])).toEqual([]);
  });

  it('writes nothing when the CLB already matches the view (resyncs are free)', () => {
    expect(plan([tcp('lbl-own', 80, created())], { ownL4: own(['lbl-own']) })).toEqual([]);
    // since2023 account: the default source is 100.64, so a listener on it matches.
    expect(plan([tcp('lbl-own', 80, created({ SourceIpType: 1 }))], { ownL4: own(['lbl-own'], 1) })).toEqual([]);
  });

  it('keeps the source TKE wants: 100.64 on prevent-loopback, else the account default (undoing a switch made without it)', () => {
    const switched = [tcp('lbl-own', 80, created({ SourceIpType: 1 }))];
    expect(plan(switched, { ownL4: own(['lbl-own']), forceL4SourceIpType: 1 })).toEqual([]);
    const [undo] = plan(switched, { ownL4: own(['lbl-own']) });
    expect(undo?.request).toMatchObject({ HealthCheck: { SourceIpType: 0 } });
  });

  it("lays a config's declared fields over the view", () => {
    const spec = { loadBalancer: { l4Listeners: [{ protocol: 'TCP', port: 80, healthCheck: { enable: true, intervalTime: 10 } }] } };
    expect(plan([tcp('lbl-own', 80, created({ IntervalTime: 10 }))], { ownL4: own(['lbl-own']), spec })).toEqual([]);
    const [put] = plan([tcp('lbl-own', 80, created())], { ownL4: own(['lbl-own']), spec });
    expect(put?.request).toMatchObject({ HealthCheck: { IntervalTime: 10, TimeOut: 2, SourceIpType: 0 } });
  });
});

describe('pass-to-target annotation', () => {
  const key = 'service.cloud.tencent.com/pass-to-target';
  it('asks for true/false, nothing when absent, and reports anything else', () => {
    expect(passToTargetWish(key, undefined)).toEqual({ kind: 'none' });
    expect(passToTargetWish(key, 'true')).toEqual({ kind: 'set', value: true });
    expect(passToTargetWish(key, ' False ')).toEqual({ kind: 'set', value: false });
    expect(passToTargetWish(key, 'yes')).toMatchObject({ kind: 'invalid', problem: expect.stringContaining(key) });
  });
});

// docs/tencent-cloud.md §1: `healthCheck.enable` is required; the two readings of a fragment without it (sim/README.md).
describe('a healthCheck fragment without enable', () => {
  const ruleCheck = (over: Partial<HealthCheck> = {}): HealthCheck => ({ HealthSwitch: 1, TimeOut: 5, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, HttpCode: 31, HttpCheckPath: '/', HttpCheckMethod: 'HEAD', SourceIpType: 0, ...over });
  const http = (hc: HealthCheck): Listener => ({
    ListenerId: 'lbl-80', Protocol: 'HTTP', Port: 80, KeepaliveEnable: 0,
    Rules: [{ LocationId: 'loc-a', Domain: 'a.example.com', Url: '/', HealthCheck: hc, Scheduler: 'WRR', SessionExpireTime: 0 }],
  });
  const spec = (healthCheck: Record<string, unknown>): TkeServiceConfigSpec => ({
    loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'a.example.com', rules: [{ url: '/', healthCheck }] }] }] },
  });

  it('is found wherever it is, listener or rule, L4 or L7; a boolean enable (true or false) is fine', () => {
    const s: TkeServiceConfigSpec = {
      loadBalancer: {
        l4Listeners: [{ protocol: 'TCP', port: 80, healthCheck: { intervalTime: 10 } }, { protocol: 'UDP', port: 53, healthCheck: { enable: false } }],
        l7Listeners: [
          { protocol: 'HTTP', port: 80, healthCheck: { timeout: 2 }, domains: [{ domain: '', rules: [{ url: '/', healthCheck: { sourceIpType: 1 } }, { url: '/ok', healthCheck: { enable: true } }, { url: '/none' }] }] },
        ],
      },
    };
    expect(healthChecksWithoutEnable(s)).toEqual([
      'spec.loadBalancer.l4Listeners[0].healthCheck',
      'spec.loadBalancer.l7Listeners[0].healthCheck',
      'spec.loadBalancer.l7Listeners[0].domains[0].rules[0].healthCheck',
    ]);
    expect(healthChecksWithoutEnable(spec({ enable: true, sourceIpType: 1 }))).toEqual([]);
    expect(healthChecksWithoutEnable(undefined)).toEqual([]);
    expect(refusalMessage('blog', healthChecksWithoutEnable(s))).toBe(
      'TkeServiceConfig blog invalid, not applied: spec.loadBalancer.l4Listeners[0].healthCheck, spec.loadBalancer.l7Listeners[0].healthCheck, spec.loadBalancer.l7Listeners[0].domains[0].rules[0].healthCheck: field "enable" is required (bool)',
    );
    // Not mistaken for the keepalive capability refusal loopguard reads from TKE's Events.
    expect(refusalMessage('blog', ['x'])).not.toMatch(/keepalive/i);
  });

  it('switchOff: the rule check is switched off, its other declared fields applied; with enable the switch is as declared', () => {
    const [off] = plan([http(ruleCheck())], { spec: spec({ sourceIpType: 1 }), missingEnable: 'switchOff' });
    expect(off?.request).toMatchObject({ LocationId: 'loc-a', HealthCheck: { HealthSwitch: 0, SourceIpType: 1, IntervalTime: 5 } });
    const [on] = plan([http(ruleCheck())], { spec: spec({ enable: true, sourceIpType: 1 }), missingEnable: 'switchOff' });
    expect(on?.request).toMatchObject({ HealthCheck: { HealthSwitch: 1, SourceIpType: 1 } });
    expect(plan([http(ruleCheck({ SourceIpType: 1 }))], { spec: spec({ enable: true, sourceIpType: 1 }), missingEnable: 'switchOff' })).toEqual([]);
    // Already off on the CLB: nothing more to write.
    expect(plan([http(ruleCheck({ HealthSwitch: 0, SourceIpType: 1 }))], { spec: spec({ sourceIpType: 1 }), missingEnable: 'switchOff' })).toEqual([]);
  });

  it("TKE's own auto config keeps enable when it forces the L4 source into a fragment whose healthCheck was removed", () => {
    const merged = mergeAutoConfigSpec({ loadBalancer: { l4Listeners: [{ protocol: 'TCP', port: 80, scheduler: 'WRR' }] } }, { listeners: [tcp('lbl-1', 80, created())], vip: '10.0.0.1', forceL4SourceIpType: 1 });
    expect(merged.loadBalancer?.l4Listeners?.[0]?.healthCheck).toMatchObject({ enable: true, sourceIpType: 1 });
    expect(healthChecksWithoutEnable(merged)).toEqual([]);
  });
});
