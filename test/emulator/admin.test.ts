/** The admin API through the typed ClbAdminClient: seeding, drift, config, capabilities, reset, errors. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { ClbAdminClient, ClbAdminError, startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 5000, capabilities: { l7KeepaliveSnat: true }, rpsPerAction: { ModifyRule: 7 } });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.admin.reset());

describe('seeding and reading', () => {
  it('seeds a CLB with listeners and rules synchronously, with given or generated ids', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      LoadBalancerId: 'lb-seeded01',
      LoadBalancerType: 'INTERNAL',
      Vip: '10.0.0.50',
      Listeners: [
        { ListenerId: 'lbl-tcp00001', Protocol: 'TCP', Port: 80, HealthCheck: { SourceIpType: 1, IntervalTime: 8 } },
        { Protocol: 'HTTPS', Port: 443, KeepaliveEnable: 1, Rules: [{ Url: '/', HealthCheck: { HttpCheckPath: '/hz' } }] },
      ],
    });
    expect(lb).toMatchObject({ LoadBalancerId: 'lb-seeded01', Status: 1, LoadBalancerVips: ['10.0.0.50'], lockedByTask: null });
    expect(lb.Listeners[1]?.ListenerId).toMatch(/^lbl-[a-z0-9]{8}$/);
    // Rule domain defaults to the VIP (TKE's `domain: ""`).
    expect(lb.Listeners[1]?.Rules[0]).toMatchObject({ Domain: '10.0.0.50', Url: '/' });
    expect(lb.nodes.map((n) => n.ip)).toEqual(['10.0.1.1', '10.0.1.2', '10.0.1.3']);

    const listeners = (await client.DescribeListeners({ LoadBalancerId: 'lb-seeded01' })).Listeners ?? [];
    expect(listeners[0]?.HealthCheck).toMatchObject({ SourceIpType: 1, IntervalTime: 8 });
    expect(listeners[1]).toMatchObject({ KeepaliveEnable: 1 });
    expect(listeners[1]?.Rules?.[0]?.HealthCheck?.HttpCheckPath).toBe('/hz');

    expect((await emu.admin.getLoadBalancer('lb-seeded01')).LoadBalancerId).toBe('lb-seeded01');
    const state = await emu.admin.state();
    expect(state.region).toBe('ap-guangzhou');
    expect(state.loadBalancers.map((l) => l.LoadBalancerId)).toEqual(['lb-seeded01']);
  });

  it('validates seeds and reports unknown ids with 404', async () => {
    await expect(emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80, HealthCheck: { TimeOut: 99 } }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('InvalidParameterValue.Range'),
    });
    await emu.admin.seedLoadBalancer({ LoadBalancerId: 'lb-dup00001' });
    await expect(emu.admin.seedLoadBalancer({ LoadBalancerId: 'lb-dup00001' })).rejects.toMatchObject({ status: 409 });
    await expect(emu.admin.getLoadBalancer('lb-nothere1')).rejects.toBeInstanceOf(ClbAdminError);
    await expect(emu.admin.setVipBound('lb-nothere1', true)).rejects.toMatchObject({ status: 404 });
    const res = await fetch(`${emu.url}/_admin/nothing`);
    expect(res.status).toBe(404);
  });

  it('deletes a CLB directly', async () => {
    const lb = await emu.admin.seedLoadBalancer({});
    await emu.admin.deleteLoadBalancer(lb.LoadBalancerId);
    expect((await client.DescribeLoadBalancers({})).TotalCount).toBe(0);
  });
});

describe('drift (console edits)', () => {
  it('changes listener and rule fields at once, merging (not resetting) the health check, without a task', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [
        { Protocol: 'TCP', Port: 80, HealthCheck: { SourceIpType: 1, IntervalTime: 9 } },
        { Protocol: 'HTTP', Port: 8080, KeepaliveEnable: 1, Rules: [{ Url: '/', HealthCheck: { SourceIpType: 1 } }] },
      ],
    });
    const [tcp, http] = lb.Listeners;
    await emu.admin.patchListener(lb.LoadBalancerId, tcp?.ListenerId ?? '', { HealthCheck: { SourceIpType: 0 } });
    await emu.admin.patchListener(lb.LoadBalancerId, http?.ListenerId ?? '', { KeepaliveEnable: 0, SnatEnable: true });
    await emu.admin.patchRule(lb.LoadBalancerId, http?.ListenerId ?? '', http?.Rules[0]?.LocationId ?? '', { HealthCheck: { SourceIpType: 0 } });

    const listeners = (await client.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId })).Listeners ?? [];
    expect(listeners[0]?.HealthCheck).toMatchObject({ SourceIpType: 0, IntervalTime: 9 });
    expect(listeners[1]?.KeepaliveEnable).toBe(0);
    expect(listeners[1]?.Rules?.[0]?.HealthCheck?.SourceIpType).toBe(0);
    expect((await emu.admin.getLoadBalancer(lb.LoadBalancerId)).Listeners[1]?.SnatEnable).toBe(true);
    expect(await emu.admin.tasks()).toEqual([]);
  });

  it('refuses a health check on an L7 listener patch', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTP', Port: 80 }] });
    await expect(emu.admin.patchListener(lb.LoadBalancerId, lb.Listeners[0]?.ListenerId ?? '', { HealthCheck: { SourceIpType: 1 } })).rejects.toMatchObject({ status: 400 });
  });
});

describe('config, capabilities, reset', () => {
  it('starts from the options and merges updates', async () => {
    expect(await emu.admin.getConfig()).toEqual({ taskDurationMs: 5000, rps: 20, rpsPerAction: { ModifyRule: 7 }, healthConvergenceMs: 0 });
    expect(await emu.admin.setConfig({ taskDurationMs: 10 })).toMatchObject({ taskDurationMs: 10, rps: 20 });
    await expect(emu.admin.setConfig({ rps: -1 })).rejects.toMatchObject({ status: 400 });
    await expect(emu.admin.setConfig({ bogus: 1 } as never)).rejects.toMatchObject({ status: 400 });
    expect(await emu.admin.getCapabilities()).toEqual({ healthCheckSource100_64: true, l7KeepaliveSnat: true, account: 'legacy' });
    await expect(emu.admin.setCapabilities({ l7KeepaliveSnat: 'yes' } as never)).rejects.toMatchObject({ status: 400 });
  });

  it('reset forgets CLBs, tasks, stats and faults and restores start-up settings', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    await client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lb.Listeners[0]?.ListenerId ?? '', ListenerName: 'x' });
    expect((await emu.admin.getLoadBalancer(lb.LoadBalancerId)).lockedByTask).not.toBeNull();
    await emu.admin.setCapabilities({ l7KeepaliveSnat: false });
    await emu.admin.setConfig({ rps: 1 });
    await emu.admin.setFaults({ rules: [{ action: '*', rate: 0.5, kind: 'error' }] });

    await emu.admin.reset();
    const state = await emu.admin.state();
    expect(state.loadBalancers).toEqual([]);
    expect(state.tasks).toEqual([]);
    expect((await emu.admin.stats()).calls).toEqual({});
    expect(await emu.admin.getFaults()).toEqual({ rules: [] });
    expect((await emu.admin.getCapabilities()).l7KeepaliveSnat).toBe(true);
    expect((await emu.admin.getConfig()).rps).toBe(20);
  });

  it('a client built from the URL alone works the same', async () => {
    const other = new ClbAdminClient(emu.url);
    await other.seedLoadBalancer({ LoadBalancerName: 'via-url' });
    expect((await emu.admin.state()).loadBalancers.map((l) => l.LoadBalancerName)).toEqual(['via-url']);
  });
});
