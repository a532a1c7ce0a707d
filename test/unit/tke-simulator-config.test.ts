// Pure TkeServiceConfig logic of the TKE simulator: health-check mapping, auto-config upkeep, sync plans.
import { describe, expect, it } from '@jest/globals';
import type { HealthCheck, Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { mergeAutoConfigSpec } from '../../sim/tke-simulator/auto-config.js';
import { planConfigSync, sessionExpireTime } from '../../sim/tke-simulator/config-plan.js';
import { declaredHealthCheck, fullHealthCheck, healthCheckDiffers, mirrorHealthCheck } from '../../sim/tke-simulator/health-check.js';
import type { TkeServiceConfigSpec } from '../../sim/tke-simulator/tke-service-config.js';

const VIP = '10.100.0.3';

// As the emulator renders them: nulls for fields that do not apply (HttpCode on a TCP check, tencent-cloud.md §9 #7).
const l4Check = (over: Partial<HealthCheck> = {}): HealthCheck =>
  ({
    HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, HttpCode: null, HttpCheckPath: null,
    HttpCheckDomain: null, HttpCheckMethod: null, CheckPort: null, CheckType: 'TCP', SourceIpType: 0, ...over,
  }) as unknown as HealthCheck;
const ruleCheck = (over: Partial<HealthCheck> = {}): HealthCheck => ({
  HealthSwitch: 1, TimeOut: 5, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, HttpCode: 31, HttpCheckPath: '/',
  HttpCheckMethod: 'HEAD', CheckType: 'HTTP', SourceIpType: 0, ...over,
});

const tcp80: Listener = { ListenerId: 'lbl-tcp80', Protocol: 'TCP', Port: 80, HealthCheck: l4Check(), Scheduler: 'WRR', SessionExpireTime: 0 };
const http80: Listener = {
  ListenerId: 'lbl-http80',
  Protocol: 'HTTP',
  Port: 80,
  KeepaliveEnable: 0,
  Rules: [
    { LocationId: 'loc-a', Domain: 'a.example.com', Url: '/', HealthCheck: ruleCheck({ HttpCheckDomain: 'a.example.com' }), Scheduler: 'WRR', SessionExpireTime: 0, ForwardType: 'HTTP' },
    { LocationId: 'loc-vip', Domain: VIP, Url: '/health', HealthCheck: ruleCheck(), Scheduler: 'WRR', SessionExpireTime: 0, ForwardType: 'HTTP' },
  ],
};

describe('health-check mapping', () => {
  it('declares only the fields a config sets', () => {
    expect(declaredHealthCheck({ enable: false, sourceIpType: 1, httpCheckMethod: 'get' })).toEqual({
      HealthSwitch: 0,
      SourceIpType: 1,
      HttpCheckMethod: 'GET',
    });
    expect(declaredHealthCheck(undefined)).toEqual({});
  });

  it('sends the full struct: current values without nulls, declared ones laid over', () => {
    const full = fullHealthCheck(l4Check({ IntervalTime: 10 }), { SourceIpType: 1 });
    expect(full).toEqual({ HealthSwitch: 1, TimeOut: 2, IntervalTime: 10, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 1 });
  });

  it('compares declared fields only (method case-insensitively)', () => {
    expect(healthCheckDiffers(ruleCheck({ CheckPort: 8080 }), { SourceIpType: 0, HttpCheckMethod: 'head' })).toBe(false);
    expect(healthCheckDiffers(ruleCheck(), { SourceIpType: 1 })).toBe(true);
  });

  it('mirrors like the TKE-generated config (L7 with httpCode and HTTP fields, L4 without)', () => {
    expect(mirrorHealthCheck(ruleCheck({ HttpCheckDomain: 'a.example.com' }), true)).toEqual({
      enable: true, intervalTime: 5, healthNum: 3, unHealthNum: 3, timeout: 5, sourceIpType: 0, httpCode: 31,
      httpCheckPath: '/', httpCheckDomain: 'a.example.com', httpCheckMethod: 'HEAD',
    });
    expect(mirrorHealthCheck(l4Check(), false)).toEqual({ enable: true, intervalTime: 5, healthNum: 3, unHealthNum: 3, timeout: 2, sourceIpType: 0 });
  });

  it('maps session to SessionExpireTime', () => {
    expect(sessionExpireTime(undefined)).toBeUndefined();
    expect(sessionExpireTime({ enable: false, sessionExpireTime: 100 })).toBe(0);
    expect(sessionExpireTime({ enable: true })).toBe(30);
    expect(sessionExpireTime({ enable: true, sessionExpireTime: 300 })).toBe(300);
    // The `enabled` spelling of Tencent's Ingress samples (tencent-cloud.md §9 #10); `enable` wins when both are set.
    expect(sessionExpireTime({ enabled: true, sessionExpireTime: 120 })).toBe(120);
    expect(sessionExpireTime({ enabled: false })).toBe(0);
    expect(sessionExpireTime({ enable: false, enabled: true })).toBe(0);
  });
});

describe('auto config upkeep', () => {
  it('mirrors listeners and rules on creation; the VIP domain becomes ""', () => {
    const spec = mergeAutoConfigSpec(undefined, { listeners: [http80, { ListenerId: 'lbl-443', Protocol: 'HTTPS', Port: 443, KeepaliveEnable: 0, Rules: [] }], vip: VIP });
    expect(spec.loadBalancer?.l7Listeners).toEqual([
      {
        protocol: 'HTTP',
        port: 80,
        keepaliveEnable: 0,
        domains: [
          { domain: 'a.example.com', rules: [expect.objectContaining({ url: '/', forwardType: 'HTTP', scheduler: 'WRR', session: { enable: false } })] },
          { domain: '', rules: [expect.objectContaining({ url: '/health' })] },
        ],
      },
      { protocol: 'HTTPS', port: 443, keepaliveEnable: 0 },
    ]);
    expect(spec.loadBalancer?.l7Listeners?.[0]?.domains?.[0]?.rules?.[0]?.healthCheck).toMatchObject({ sourceIpType: 0, httpCode: 31 });
  });

  it('keeps user edits and unknown fields, adds new rules, drops gone ones', () => {
    const edited: TkeServiceConfigSpec = {
      custom: 'kept',
      loadBalancer: {
        l7Listeners: [
          {
            protocol: 'HTTP',
            port: 80,
            keepaliveEnable: 1,
            extra: true,
            domains: [
              { domain: 'a.example.com', rules: [{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }] },
              { domain: 'gone.example.com', rules: [{ url: '/' }] },
            ],
          },
        ],
      },
    };
    const spec = mergeAutoConfigSpec(edited, { listeners: [http80], vip: VIP });
    expect(spec.custom).toBe('kept');
    const l = spec.loadBalancer?.l7Listeners?.[0];
    expect(l).toMatchObject({ keepaliveEnable: 1, extra: true });
    expect(l?.domains?.map((d) => d.domain)).toEqual(['a.example.com', '']);
    expect(l?.domains?.[0]?.rules).toEqual([{ url: '/', healthCheck: { enable: true, sourceIpType: 1 } }]);
  });

  it('mirrors L4 listeners and forces the source when asked', () => {
    const spec = mergeAutoConfigSpec(undefined, { listeners: [tcp80], vip: VIP, forceL4SourceIpType: 1 });
    expect(spec.loadBalancer?.l4Listeners).toEqual([
      { protocol: 'TCP', port: 80, scheduler: 'WRR', session: { enable: false }, healthCheck: expect.objectContaining({ sourceIpType: 1, timeout: 2 }) },
    ]);
    expect(spec.loadBalancer?.l7Listeners).toBeUndefined();
  });
});

describe('config sync plan', () => {
  it('does nothing when the CLB matches or nothing is declared', () => {
    const spec = mergeAutoConfigSpec(undefined, { listeners: [tcp80, http80], vip: VIP });
    expect(planConfigSync({ loadBalancerId: 'lb-1', vip: VIP, listeners: [tcp80, http80], spec })).toEqual([]);
    expect(planConfigSync({ loadBalancerId: 'lb-1', vip: VIP, listeners: [tcp80, http80], spec: undefined })).toEqual([]);
  });

  it('sets keepalive per listener and the rule health check with the full struct', () => {
    const spec: TkeServiceConfigSpec = {
      loadBalancer: {
        l7Listeners: [
          { protocol: 'HTTP', port: 80, keepaliveEnable: 1, domains: [{ domain: '', rules: [{ url: '/health', healthCheck: { sourceIpType: 1 } }] }] },
        ],
      },
    };
    const plan = planConfigSync({ loadBalancerId: 'lb-1', vip: VIP, listeners: [http80], spec });
    expect(plan).toEqual([
      { action: 'ModifyListener', target: 'HTTP:80', request: { LoadBalancerId: 'lb-1', ListenerId: 'lbl-http80', KeepaliveEnable: 1 } },
      {
        action: 'ModifyRule',
        target: `HTTP:80 ${VIP}/health`,
        request: { LoadBalancerId: 'lb-1', ListenerId: 'lbl-http80', LocationId: 'loc-vip', HealthCheck: { ...ruleCheck(), SourceIpType: 1 } },
      },
    ]);
  });

  it('reverts declared drift, ignores undeclared drift', () => {
    const spec = mergeAutoConfigSpec(undefined, { listeners: [http80], vip: VIP });
    const drifted: Listener = {
      ...http80,
      Rules: [{ ...http80.Rules![0]!, HealthCheck: ruleCheck({ HttpCheckDomain: 'a.example.com', SourceIpType: 1, CheckPort: 8080 }) }, http80.Rules![1]!],
    };
    const plan = planConfigSync({ loadBalancerId: 'lb-1', vip: VIP, listeners: [drifted], spec });
    expect(plan).toHaveLength(1);
    expect(plan[0]?.request.HealthCheck).toMatchObject({ SourceIpType: 0, CheckPort: 8080 });
  });

  it('L4: health check, scheduler and session; prevent-loopback forces the source', () => {
    const spec: TkeServiceConfigSpec = {
      loadBalancer: { l4Listeners: [{ protocol: 'tcp', port: 80, scheduler: 'LEAST_CONN', session: { enable: true }, healthCheck: { intervalTime: 10 } }] },
    };
    expect(planConfigSync({ loadBalancerId: 'lb-1', vip: VIP, listeners: [tcp80], spec, forceL4SourceIpType: 1 })).toEqual([
      {
        action: 'ModifyListener',
        target: 'TCP:80',
        request: {
          LoadBalancerId: 'lb-1',
          ListenerId: 'lbl-tcp80',
          HealthCheck: { HealthSwitch: 1, TimeOut: 2, IntervalTime: 10, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 1 },
          Scheduler: 'LEAST_CONN',
          SessionExpireTime: 30,
        },
      },
    ]);
  });

  it('never touches listeners without a fragment', () => {
    const spec: TkeServiceConfigSpec = { loadBalancer: { l4Listeners: [{ protocol: 'UDP', port: 80, healthCheck: { sourceIpType: 1 } }] } };
    expect(planConfigSync({ loadBalancerId: 'lb-1', vip: VIP, listeners: [tcp80], spec })).toEqual([]);
  });
});
