/**
 * loopguard's CLB client against the emulator where the emulator now follows TKE's documentation more closely
 * (tencent-cloud.md §9): what loopguard sends back invents nothing the CLB did not return (#7), and a capability refused
 * under a generic code is still reported as that capability (#9). Real SDK, no mocks.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import { caught, listenerId } from './clb-client-support.js';
import type { ListenerInfo } from '../../src/cloud/index.js';
import { TencentClbClient } from '../../src/cloud/index.js';
import { healthCheckFor } from '../../src/plan/l4.js';

let emu: ClbEmulator;
const clients: TencentClbClient[] = [];

function makeClient(): TencentClbClient {
  const client = new TencentClbClient({
    region: emu.region,
    credentials: emu.credentials,
    endpoint: emu.url,
    requestTimeoutMs: 5_000,
    throttle: { defaultBudget: { rps: 500, concurrency: 32 } },
    retry: { baseDelayMs: 10, maxDelayMs: 100, minDelayMs: 5, maxAttempts: 10 },
    taskPoll: { initialDelayMs: 10, factor: 1.5, maxDelayMs: 50, timeoutMs: 10_000 },
  });
  clients.push(client);
  return client;
}


beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 20 });
});
beforeEach(() => emu.admin.reset());
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await emu.close();
});

describe('loopguard invents no health-check field', () => {
  it('sends back a TCP check without HttpCode, which the CLB would refuse (tencent-cloud.md §9 #7)', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80, HealthCheck: { IntervalTime: 9 } }, { Protocol: 'UDP', Port: 53 }] });
    const client = makeClient();
    const listeners = await client.describeListeners(lb.LoadBalancerId);
    for (const l of listeners) expect(l.healthCheck && 'HttpCode' in l.healthCheck).toBe(false);
    for (const l of listeners) await client.modifyListenerHealthCheck(lb.LoadBalancerId, l.listenerId, healthCheckFor(l, 1));
    // A read that did carry HttpCode on a TCP check (as this emulator once rendered it) is not echoed either.
    const tcp = listeners.find((l) => l.protocol === 'TCP');
    const stale = { ...tcp, healthCheck: { ...tcp?.healthCheck, HttpCode: 31 } } as ListenerInfo;
    await client.modifyListenerHealthCheck(lb.LoadBalancerId, stale.listenerId, healthCheckFor(stale, 0));
    const after = await emu.admin.getLoadBalancer(lb.LoadBalancerId);
    expect(after.Listeners.map((l) => [l.Protocol, l.HealthCheck?.SourceIpType, l.HealthCheck?.IntervalTime, l.HealthCheck?.HttpCode])).toEqual([
      ['TCP', 0, 9, null],
      ['UDP', 1, 5, null],
    ]);
    expect((await emu.admin.stats()).errors).toEqual({});
  });
});

describe('capability refusals are named by the refused parameter', () => {
  it('a capability refused under InvalidParameterValue is named by its parameter (tencent-cloud.md §9 #9)', async () => {
    await emu.admin.setCapabilities({ l7KeepaliveSnat: true });
    const v6 = await emu.admin.seedLoadBalancer({ AddressIPVersion: 'IPV6', Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const client = makeClient();
    const pass = await caught(client.modifyLoadBalancerPassToTarget(v6.LoadBalancerId, true));
    expect(pass).toMatchObject({ reason: 'PassToTargetCapabilityMissing', code: 'InvalidParameterValue', retryable: false, attempts: 1 });
    expect(pass.message).toContain('LoadBalancerPassToTarget=true');
    const source = await caught(client.modifyListenerHealthCheck(v6.LoadBalancerId, listenerId(v6), { HealthSwitch: 1, CheckType: 'TCP', SourceIpType: 1 }));
    expect(source).toMatchObject({ reason: 'HealthCheckSourceCapabilityMissing', code: 'InvalidParameterValue' });
    // The wording the real API used for a listener that cannot take keepalive.
    const keepalive = await caught(client.modifyListenerKeepalive(v6.LoadBalancerId, listenerId(v6), true));
    expect(keepalive).toMatchObject({ reason: 'KeepaliveCapabilityMissing', code: 'InvalidParameterValue', apiMessage: 'This interface only support HTTP/HTTPS listener' });
    expect(keepalive.message).toContain('KeepaliveEnable=1');
  });
});
