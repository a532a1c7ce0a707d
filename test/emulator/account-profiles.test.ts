/**
 * Account profiles (tencent-cloud.md §9 #3): accounts new to CLB since 2023-02-24 get the 100.64 health-check source by
 * default; `legacy` accounts the VIP source. The default applies wherever the caller does not choose a source.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { ClbAdminError, startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient, writeAndWait } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 20 });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.admin.reset());

/** Creates TCP:80 (health check as given) and HTTP:8080 with one rule (no health check), returns the sources. */
async function createdSources(ipVersion: 'IPV4' | 'IPV6', healthCheck?: { HealthSwitch?: number; SourceIpType?: number }) {
  const lb = await emu.admin.seedLoadBalancer({ AddressIPVersion: ipVersion, Listeners: [] });
  const id = lb.LoadBalancerId;
  await writeAndWait(client, client.CreateListener({ LoadBalancerId: id, Ports: [80], Protocol: 'TCP', ...(healthCheck ? { HealthCheck: healthCheck } : {}) }));
  const [http] = (await writeAndWait(client, client.CreateListener({ LoadBalancerId: id, Ports: [8080], Protocol: 'HTTP' }))).ListenerIds ?? [];
  await writeAndWait(client, client.CreateRule({ LoadBalancerId: id, ListenerId: http ?? '', Rules: [{ Domain: 'a.example.com', Url: '/' }] }));
  const listeners = (await client.DescribeListeners({ LoadBalancerId: id })).Listeners ?? [];
  return {
    id,
    listenerId: listeners.find((l) => l.Port === 80)?.ListenerId ?? '',
    l4: listeners.find((l) => l.Port === 80)?.HealthCheck?.SourceIpType,
    rule: listeners.find((l) => l.Port === 8080)?.Rules?.[0]?.HealthCheck?.SourceIpType,
  };
}

describe('account profiles', () => {
  it('legacy (the default): listeners and rules get the VIP source unless the request picks 100.64', async () => {
    expect((await emu.admin.getCapabilities()).account).toBe('legacy');
    expect(await createdSources('IPV4')).toMatchObject({ l4: 0, rule: 0 });
    expect(await createdSources('IPV4', { HealthSwitch: 1 })).toMatchObject({ l4: 0 });
    expect(await createdSources('IPV4', { SourceIpType: 1 })).toMatchObject({ l4: 1 });
  });

  it('since2023: a check whose request leaves SourceIpType out gets 100.64; an explicit 0 is kept; IPv6 stays on 0', async () => {
    await emu.admin.setCapabilities({ account: 'since2023' });
    expect(await createdSources('IPV4')).toMatchObject({ l4: 1, rule: 1 });
    expect(await createdSources('IPV4', { HealthSwitch: 1 })).toMatchObject({ l4: 1 });
    const explicit = await createdSources('IPV4', { HealthSwitch: 1, SourceIpType: 0 });
    expect(explicit.l4).toBe(0);
    // IPv6 CLBs cannot use 100.64 (§9 #4): the account default does not apply to them, and nothing is refused.
    expect(await createdSources('IPV6')).toMatchObject({ l4: 0, rule: 0 });

    // The strict reset model resets an omitted source to the account's default, not to 0.
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: explicit.id, ListenerId: explicit.listenerId, HealthCheck: { IntervalTime: 9 } }));
    const after = (await client.DescribeListeners({ LoadBalancerId: explicit.id, ListenerIds: [explicit.listenerId] })).Listeners?.[0];
    expect(after?.HealthCheck).toMatchObject({ IntervalTime: 9, SourceIpType: 1 });

    // Seeds are CLBs of this account too.
    const seeded = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'UDP', Port: 53 }, { Protocol: 'HTTP', Port: 80, Rules: [{ Url: '/' }] }] });
    expect(seeded.Listeners[0]?.HealthCheck?.SourceIpType).toBe(1);
    expect(seeded.Listeners[1]?.Rules[0]?.HealthCheck.SourceIpType).toBe(1);
  });

  it('keeps the profile and the 100.64 capability coherent, and reset restores the start-up profile', async () => {
    // legacy without the capability: an old account that still needs the ticket.
    expect(await emu.admin.setCapabilities({ healthCheckSource100_64: false })).toMatchObject({ account: 'legacy', healthCheckSource100_64: false });
    await expect(emu.admin.setCapabilities({ account: 'since2023' })).rejects.toMatchObject({ status: 400 });
    expect(await emu.admin.setCapabilities({ account: 'since2023', healthCheckSource100_64: true })).toMatchObject({ account: 'since2023' });
    await expect(emu.admin.setCapabilities({ healthCheckSource100_64: false })).rejects.toBeInstanceOf(ClbAdminError);
    await expect(emu.admin.setCapabilities({ account: 'since2020' } as never)).rejects.toMatchObject({ status: 400 });
    expect((await emu.admin.getCapabilities()).account).toBe('since2023');

    await emu.admin.reset();
    expect((await emu.admin.getCapabilities()).account).toBe('legacy');
    await expect(startClbEmulator({ capabilities: { account: 'since2023', healthCheckSource100_64: false } })).rejects.toThrow(/since2023/);
    const young = await startClbEmulator({ capabilities: { account: 'since2023' } });
    try {
      await young.admin.reset();
      expect((await young.admin.getCapabilities()).account).toBe('since2023');
    } finally {
      await young.close();
    }
  });
});
