/** Parameter validation, IPv6 rules and account capabilities (tencent-cloud.md §3 HealthCheck, ModifyListener; §2). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { HealthCheck } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import {
  KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE, SOURCE_100_64_DISABLED_CODE, SOURCE_100_64_DISABLED_MESSAGE,
  startClbEmulator,
} from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient, expectSdkError, writeAndWait } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;
let v4: AdminLoadBalancer;
let v6: AdminLoadBalancer;

const ids = (lb: AdminLoadBalancer, i: number) => ({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lb.Listeners[i]?.ListenerId ?? '' });
const rule = (lb: AdminLoadBalancer) => ({ ...ids(lb, 1), LocationId: lb.Listeners[1]?.Rules[0]?.LocationId ?? '' });

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 30 });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(async () => {
  await emu.admin.reset();
  const listeners = [
    { Protocol: 'TCP' as const, Port: 80 },
    { Protocol: 'HTTP' as const, Port: 8080, Rules: [{ Domain: 'a.example.com', Url: '/' }] },
  ];
  v4 = await emu.admin.seedLoadBalancer({ Listeners: listeners });
  v6 = await emu.admin.seedLoadBalancer({ AddressIPVersion: 'IPV6', Listeners: listeners });
});

describe('IPv6 CLBs', () => {
  it('reject SourceIpType=1 on listeners and rules with InvalidParameterValue naming it', async () => {
    const e1 = await expectSdkError(client.ModifyListener({ ...ids(v6, 0), HealthCheck: { SourceIpType: 1 } }), 'InvalidParameterValue');
    expect(e1.message).toContain('SourceIpType=1');
    expect(e1.message).toContain('IPv6');
    await expectSdkError(client.ModifyRule({ ...rule(v6), HealthCheck: { SourceIpType: 1 } }), 'InvalidParameterValue');
    await expectSdkError(client.CreateListener({ LoadBalancerId: v6.LoadBalancerId, Ports: [90], Protocol: 'TCP', HealthCheck: { SourceIpType: 1 } }), 'InvalidParameterValue');
  });

  it('still accept SourceIpType=0 and require IntervalTime ≥ 5 (IPv4 allows 2)', async () => {
    await writeAndWait(client, client.ModifyListener({ ...ids(v6, 0), HealthCheck: { SourceIpType: 0, IntervalTime: 5 } }));
    await expectSdkError(client.ModifyListener({ ...ids(v6, 0), HealthCheck: { IntervalTime: 3, TimeOut: 2 } }), 'InvalidParameterValue.Range');
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: { IntervalTime: 3, TimeOut: 2 } }));
  });
});

describe('IPv6 CLBs are public-only (tencent-cloud.md §9 #4), also for the admin', () => {
  it('the admin refuses an INTERNAL IPv6 seed, defaults an IPv6 seed to OPEN, and refuses 100.64 and PassToTarget on it', async () => {
    expect(v6.LoadBalancerType).toBe('OPEN');
    await expect(emu.admin.seedLoadBalancer({ LoadBalancerType: 'INTERNAL', AddressIPVersion: 'IPv6FullChain' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('InvalidParameterCombination'),
    });
    await expect(emu.admin.seedLoadBalancer({ AddressIPVersion: 'IPV6', LoadBalancerPassToTarget: true })).rejects.toMatchObject({ status: 400 });
    await expect(
      emu.admin.seedLoadBalancer({ AddressIPVersion: 'IPV6', Listeners: [{ Protocol: 'TCP', Port: 80, HealthCheck: { SourceIpType: 1 } }] }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('SourceIpType=1') });
    await expect(emu.admin.patchListener(v6.LoadBalancerId, v6.Listeners[0]?.ListenerId ?? '', { HealthCheck: { SourceIpType: 1 } })).rejects.toMatchObject({ status: 400 });
    const loc = v6.Listeners[1]?.Rules[0]?.LocationId ?? '';
    await expect(emu.admin.patchRule(v6.LoadBalancerId, v6.Listeners[1]?.ListenerId ?? '', loc, { HealthCheck: { SourceIpType: 1 } })).rejects.toMatchObject({ status: 400 });
  });
});

describe('HTTP-only health-check fields (tencent-cloud.md §9 #7)', () => {
  it('are refused on TCP, PING and CUSTOM checks with InvalidParameterValue naming them', async () => {
    const err = await expectSdkError(client.ModifyListener({ ...ids(v4, 0), HealthCheck: { HealthSwitch: 1, CheckType: 'TCP', HttpCode: 31 } }), 'InvalidParameterValue');
    expect(err.message).toContain('HealthCheck.HttpCode');
    expect(err.message).toContain('TCP');
    await expectSdkError(client.ModifyListener({ ...ids(v4, 0), HealthCheck: { HttpCheckPath: '/' } }), 'InvalidParameterValue');
    await expectSdkError(client.CreateListener({ LoadBalancerId: v4.LoadBalancerId, Ports: [53], Protocol: 'UDP', HealthCheck: { HttpCheckMethod: 'GET' } }), 'InvalidParameterValue');
    await expectSdkError(
      client.ModifyListener({ ...ids(v4, 0), HealthCheck: { CheckType: 'CUSTOM', ContextType: 'TEXT', SendContext: 'a', RecvContext: 'b', HttpCode: 2 } }),
      'InvalidParameterValue',
    );
    // HttpVersion belongs to a TCP listener's HTTP check only.
    await expectSdkError(client.ModifyRule({ ...rule(v4), HealthCheck: { HttpVersion: 'HTTP/1.1' } }), 'InvalidParameterValue');
  });

  it('are accepted on HTTP checks (TCP listener CheckType HTTP, L7 rules), defaulting HttpCode to 31 there only', async () => {
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: { CheckType: 'HTTP', HttpCheckDomain: 'a', HttpVersion: 'HTTP/1.1', HttpCode: 2 } }));
    await writeAndWait(client, client.ModifyRule({ ...rule(v4), HealthCheck: { HttpCode: 4, HttpCheckPath: '/hz' } }));
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: { CheckType: 'HTTP', HttpCheckDomain: 'a', HttpVersion: 'HTTP/1.0' } }));
    const state = await emu.admin.getLoadBalancer(v4.LoadBalancerId);
    expect(state.Listeners[0]?.HealthCheck).toMatchObject({ CheckType: 'HTTP', HttpCode: 31, HttpCheckPath: '/', HttpCheckMethod: 'HEAD' });
    expect(state.Listeners[1]?.Rules[0]?.HealthCheck).toMatchObject({ HttpCode: 4, HttpCheckPath: '/hz' });
  });

  it('disappear when a drift patch turns an HTTP check into a TCP one', async () => {
    await emu.admin.patchListener(v4.LoadBalancerId, v4.Listeners[0]?.ListenerId ?? '', { HealthCheck: { CheckType: 'HTTP', HttpCheckDomain: 'a', HttpVersion: 'HTTP/1.1' } });
    const lb = await emu.admin.patchListener(v4.LoadBalancerId, v4.Listeners[0]?.ListenerId ?? '', { HealthCheck: { CheckType: 'TCP' } });
    expect(lb.Listeners[0]?.HealthCheck).toMatchObject({ CheckType: 'TCP', HttpCode: null, HttpCheckPath: null, HttpCheckMethod: null, HttpCheckDomain: null, HttpVersion: null });
  });
});

describe('layer-7 listeners', () => {
  it('reject HealthCheck on ModifyListener and point to ModifyRule', async () => {
    const err = await expectSdkError(client.ModifyListener({ ...ids(v4, 1), HealthCheck: { SourceIpType: 1 } }), 'InvalidParameter');
    expect(err.message).toContain('ModifyRule');
  });

  it('reject HealthCheck on CreateListener for HTTP', async () => {
    await expectSdkError(client.CreateListener({ LoadBalancerId: v4.LoadBalancerId, Ports: [81], Protocol: 'HTTP', HealthCheck: { HealthSwitch: 1 } }), 'InvalidParameter');
  });

  it('KeepaliveEnable is only for HTTP/HTTPS listeners, refused in the wording seen from the real API (§9 #9)', async () => {
    await emu.admin.setCapabilities({ l7KeepaliveSnat: true });
    const err = await expectSdkError(client.ModifyListener({ ...ids(v4, 0), KeepaliveEnable: 1 }), 'InvalidParameterValue');
    expect(err.message).toBe('This interface only support HTTP/HTTPS listener');
    await expectSdkError(client.ModifyListener({ ...ids(v4, 1), KeepaliveEnable: 2 }), 'InvalidParameterValue');
  });
});

describe('HealthCheck ranges', () => {
  const cases: [string, HealthCheck, string][] = [
    ['TimeOut 1', { TimeOut: 1 }, 'InvalidParameterValue.Range'],
    ['TimeOut 61', { TimeOut: 61, IntervalTime: 100 }, 'InvalidParameterValue.Range'],
    ['IntervalTime 1', { IntervalTime: 1 }, 'InvalidParameterValue.Range'],
    ['IntervalTime 301', { IntervalTime: 301 }, 'InvalidParameterValue.Range'],
    ['HealthNum 1', { HealthNum: 1 }, 'InvalidParameterValue.Range'],
    ['HealthNum 11', { HealthNum: 11 }, 'InvalidParameterValue.Range'],
    ['UnHealthNum 11', { UnHealthNum: 11 }, 'InvalidParameterValue.Range'],
    ['HttpCode 0', { HttpCode: 0 }, 'InvalidParameterValue.Range'],
    ['HttpCode 32', { HttpCode: 32 }, 'InvalidParameterValue.Range'],
    ['SourceIpType 2', { SourceIpType: 2 }, 'InvalidParameterValue'],
    ['HealthSwitch 2', { HealthSwitch: 2 }, 'InvalidParameterValue'],
    ['TimeOut > IntervalTime', { TimeOut: 10, IntervalTime: 5 }, 'InvalidParameterValue'],
    ['CheckType PING on TCP', { CheckType: 'PING' }, 'InvalidParameterValue'],
    ['HTTP check without domain/version on TCP', { CheckType: 'HTTP' }, 'MissingParameter'],
    ['unknown field', { Bogus: 1 } as HealthCheck, 'UnknownParameter'],
  ];
  it.each(cases)('%s → %s', async (_name, hc, code) => {
    await expectSdkError(client.ModifyListener({ ...ids(v4, 0), HealthCheck: hc }), code);
  });

  it('the same ranges apply to ModifyRule', async () => {
    await expectSdkError(client.ModifyRule({ ...rule(v4), HealthCheck: { HttpCode: 99 } }), 'InvalidParameterValue.Range');
    await expectSdkError(client.ModifyRule({ ...rule(v4), HealthCheck: { HttpCheckMethod: 'POST' } }), 'InvalidParameterValue');
  });

  it('accepts the boundaries', async () => {
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: { TimeOut: 60, IntervalTime: 300, HealthNum: 10, UnHealthNum: 2 } }));
  });
});

describe('account capabilities', () => {
  it('refuses KeepaliveEnable=1 and SnatEnable=true by default, accepts them after enabling l7KeepaliveSnat', async () => {
    expect(await emu.admin.getCapabilities()).toEqual({ healthCheckSource100_64: true, l7KeepaliveSnat: false, account: 'legacy' });
    const e1 = await expectSdkError(client.ModifyListener({ ...ids(v4, 1), KeepaliveEnable: 1 }), KEEPALIVE_SNAT_DISABLED_CODE);
    expect(e1.message).toBe(KEEPALIVE_SNAT_DISABLED_MESSAGE);
    expect(KEEPALIVE_SNAT_DISABLED_CODE).toBe('FailedOperation');
    await expectSdkError(client.ModifyListener({ ...ids(v4, 1), SnatEnable: true }), 'FailedOperation');
    // Turning it off is always allowed.
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 1), KeepaliveEnable: 0 }));

    await emu.admin.setCapabilities({ l7KeepaliveSnat: true });
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 1), KeepaliveEnable: 1, SnatEnable: true }));
    const state = await emu.admin.getLoadBalancer(v4.LoadBalancerId);
    expect(state.Listeners[1]).toMatchObject({ KeepaliveEnable: 1, SnatEnable: true });
  });

  it('refuses SourceIpType=1 when the 100.64 source is not enabled for the account', async () => {
    await emu.admin.setCapabilities({ healthCheckSource100_64: false });
    const err = await expectSdkError(client.ModifyListener({ ...ids(v4, 0), HealthCheck: { SourceIpType: 1 } }), SOURCE_100_64_DISABLED_CODE);
    expect(SOURCE_100_64_DISABLED_CODE).toBe('UnauthorizedOperation');
    expect(err.message).toBe(SOURCE_100_64_DISABLED_MESSAGE);
    await expectSdkError(client.ModifyRule({ ...rule(v4), HealthCheck: { SourceIpType: 1 } }), 'UnauthorizedOperation');
    await expectSdkError(client.CreateRule({ ...ids(v4, 1), Rules: [{ Domain: 'b', Url: '/', HealthCheck: { SourceIpType: 1 } }] }), 'UnauthorizedOperation');

    await emu.admin.setCapabilities({ healthCheckSource100_64: true });
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: { SourceIpType: 1 } }));
  });
});

/**
 * Conformance to public evidence (sim/clb-emulator/CONFORMANCE.md). Each row fails without the rule it names.
 */
describe('what Tencent-written clients send is accepted (terraform-provider-tencentcloud, service_tencentcloud_clb.go checkHealthCheckPara)', () => {
  it('a TCP check with HttpCheckPath "" and CheckPort -1: the empty HTTP field is ignored, -1 restores the backend port', async () => {
    await emu.admin.patchListener(v4.LoadBalancerId, v4.Listeners[0]?.ListenerId ?? '', { HealthCheck: { CheckPort: 8081 } });
    await writeAndWait(
      client,
      client.ModifyListener({ ...ids(v4, 0), HealthCheck: { HealthSwitch: 1, TimeOut: 4, IntervalTime: 10, CheckType: 'TCP', CheckPort: -1, HttpCheckPath: '' } }),
    );
    const state = await emu.admin.getLoadBalancer(v4.LoadBalancerId);
    expect(state.Listeners[0]?.HealthCheck).toMatchObject({ CheckType: 'TCP', TimeOut: 4, IntervalTime: 10, CheckPort: null, HttpCheckPath: null, HttpCode: null });
    // The other empty HTTP-only fields are "not set" too; a non-empty one is still refused (assumption, CONFORMANCE.md).
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: { CheckType: 'TCP', HttpCheckDomain: '', HttpCheckMethod: '', HttpVersion: '' } }));
    await expectSdkError(client.ModifyListener({ ...ids(v4, 0), HealthCheck: { CheckType: 'TCP', HttpCheckPath: '/' } }), 'InvalidParameterValue');
  });

  it('a TCP listener\'s HTTP check with HttpCheckDomain "" and HttpCheckPath "" is accepted and reads back empty (TestAccTencentCloudClbListenerTCPWithHTTP)', async () => {
    await writeAndWait(
      client,
      client.ModifyListener({
        ...ids(v4, 0),
        HealthCheck: { CheckType: 'HTTP', HttpCode: 2, HttpCheckMethod: 'GET', HttpVersion: 'HTTP/1.0', HttpCheckDomain: '', HttpCheckPath: '', CheckPort: 200 },
      }),
    );
    const [listener] = (await client.DescribeListeners({ LoadBalancerId: v4.LoadBalancerId, ListenerIds: [ids(v4, 0).ListenerId] })).Listeners ?? [];
    expect(listener?.HealthCheck).toMatchObject({ CheckType: 'HTTP', HttpCode: 2, HttpCheckMethod: 'GET', HttpVersion: 'HTTP/1.0', HttpCheckDomain: '', HttpCheckPath: '', CheckPort: 200 });
    // Absent (not empty) is still missing: the SDK marks the domain 必填 for a TCP listener's HTTP check.
    await expectSdkError(client.ModifyListener({ ...ids(v4, 0), HealthCheck: { CheckType: 'HTTP', HttpVersion: 'HTTP/1.0' } }), 'MissingParameter');
  });

  it('TargetType NODE on CreateListener (TCP, TCP_SSL) and on CreateRule; target groups are not modelled; layer 7 sets it per rule', async () => {
    const lb = v4.LoadBalancerId;
    await writeAndWait(client, client.CreateListener({ LoadBalancerId: lb, Ports: [81], Protocol: 'TCP', TargetType: 'NODE' }));
    await writeAndWait(client, client.CreateListener({ LoadBalancerId: lb, Ports: [82], Protocol: 'TCP_SSL', TargetType: 'NODE' }));
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), TargetType: 'NODE' }));
    await writeAndWait(client, client.CreateRule({ ...ids(v4, 1), Rules: [{ Domain: 'n.example.com', Url: '/', TargetType: 'NODE' }] }));
    await expectSdkError(client.CreateListener({ LoadBalancerId: lb, Ports: [83], Protocol: 'TCP', TargetType: 'TARGETGROUP' }), 'UnknownParameter');
    await expectSdkError(client.CreateListener({ LoadBalancerId: lb, Ports: [84], Protocol: 'HTTP', TargetType: 'NODE' }), 'InvalidParameter');
  });
});

describe('what the real API refuses per public docs is refused', () => {
  it('IPv6 TCP listeners support neither HTTP nor CUSTOM checks (CLB doc 214/50011); TCP checks stay fine, IPv4 keeps both', async () => {
    const http = { CheckType: 'HTTP', HttpCheckDomain: 'a', HttpVersion: 'HTTP/1.1' };
    const custom = { CheckType: 'CUSTOM', ContextType: 'TEXT', SendContext: 'ping', RecvContext: 'pong' };
    const e1 = await expectSdkError(client.ModifyListener({ ...ids(v6, 0), HealthCheck: http }), 'InvalidParameterValue');
    expect(e1.message).toContain('IPv6');
    await expectSdkError(client.ModifyListener({ ...ids(v6, 0), HealthCheck: custom }), 'InvalidParameterValue');
    await expectSdkError(client.CreateListener({ LoadBalancerId: v6.LoadBalancerId, Ports: [90], Protocol: 'TCP', HealthCheck: custom }), 'InvalidParameterValue');
    await expect(emu.admin.patchListener(v6.LoadBalancerId, ids(v6, 0).ListenerId, { HealthCheck: http })).rejects.toMatchObject({ status: 400 });
    await writeAndWait(client, client.ModifyListener({ ...ids(v6, 0), HealthCheck: { CheckType: 'TCP', IntervalTime: 5 } }));
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: custom }));
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), HealthCheck: http }));
  });

  it('IPv6 UDP listeners do not support CUSTOM checks (same doc); PING is fine', async () => {
    const custom = { CheckType: 'CUSTOM', ContextType: 'HEX', SendContext: '0A', RecvContext: '0B' };
    await expectSdkError(client.CreateListener({ LoadBalancerId: v6.LoadBalancerId, Ports: [53], Protocol: 'UDP', HealthCheck: custom }), 'InvalidParameterValue');
    await writeAndWait(client, client.CreateListener({ LoadBalancerId: v6.LoadBalancerId, Ports: [53], Protocol: 'UDP', HealthCheck: { CheckType: 'PING', IntervalTime: 5 } }));
    await writeAndWait(client, client.CreateListener({ LoadBalancerId: v4.LoadBalancerId, Ports: [53], Protocol: 'UDP', HealthCheck: custom }));
  });

  it('listener SessionExpireTime is TCP/UDP-only (SDK CreateListenerRequest/ModifyListenerRequest "此参数仅适用于TCP/UDP监听器")', async () => {
    const lb = v4.LoadBalancerId;
    for (const [port, protocol] of [[443, 'TCP_SSL'], [444, 'QUIC'], [445, 'HTTP']] as const) {
      const err = await expectSdkError(client.CreateListener({ LoadBalancerId: lb, Ports: [port], Protocol: protocol, SessionExpireTime: 30 }), 'InvalidParameter.ProtocolCheckFailed');
      expect(err.message).toContain('TCP/UDP');
    }
    await writeAndWait(client, client.CreateListener({ LoadBalancerId: lb, Ports: [443], Protocol: 'TCP_SSL' }));
    const ssl = (await client.DescribeListeners({ LoadBalancerId: lb, Port: 443 })).Listeners?.[0]?.ListenerId ?? '';
    await expectSdkError(client.ModifyListener({ LoadBalancerId: lb, ListenerId: ssl, SessionExpireTime: 60 }), 'InvalidParameter.ProtocolCheckFailed');
    await expectSdkError(client.ModifyListener({ ...ids(v4, 1), SessionExpireTime: 60 }), 'InvalidParameter.ProtocolCheckFailed');
    await expectSdkError(client.CreateListener({ LoadBalancerId: lb, Ports: [91], Protocol: 'TCP', SessionExpireTime: 10 }), 'InvalidParameterValue.Range');
    await writeAndWait(client, client.CreateListener({ LoadBalancerId: lb, Ports: [91], Protocol: 'UDP', SessionExpireTime: 30 }));
    await writeAndWait(client, client.ModifyListener({ ...ids(v4, 0), SessionExpireTime: 60 }));
  });

  it('a rule\'s SessionExpireTime is 0 or 30–86400 on CreateRule as on ModifyRule (SDK RuleInput)', async () => {
    await expectSdkError(client.CreateRule({ ...ids(v4, 1), Rules: [{ Domain: 's.example.com', Url: '/', SessionExpireTime: 10 }] }), 'InvalidParameterValue.Range');
    await writeAndWait(client, client.CreateRule({ ...ids(v4, 1), Rules: [{ Domain: 's.example.com', Url: '/', SessionExpireTime: 30 }] }));
  });

  it('an unmodelled DescribeLoadBalancers filter is refused with CLB\'s documented Filter code (InvalidParameterValue.InvalidFilter)', async () => {
    await expectSdkError(client.DescribeLoadBalancers({ Filters: [{ Name: 'no-such-filter', Values: ['x'] }] }), 'InvalidParameterValue.InvalidFilter');
  });
});
