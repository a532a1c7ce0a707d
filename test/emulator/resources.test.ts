/** Building and describing CLBs, listeners and rules; Modify* round-trips; deletes (tencent-cloud.md §3). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { HealthCheck } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient, expectSdkError, waitForTask, writeAndWait } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 60 });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.admin.reset());

/**
 * "Not visible before completion" checks must not race a short task, so those tests hold tasks open
 * (long duration) and finish them through the admin API. Natural completion timing is covered in tasks.test.ts.
 */
async function holdTasks(): Promise<void> {
  await emu.admin.setConfig({ taskDurationMs: 60_000 });
}

async function releaseTasks(taskId: string): Promise<void> {
  await emu.admin.completeTasks();
  expect((await waitForTask(client, taskId)).Status).toBe(0);
  await emu.admin.setConfig({ taskDurationMs: 60 });
}

async function createLb(req: Parameters<ClbClient['CreateLoadBalancer']>[0]): Promise<string> {
  const res = await writeAndWait(client, client.CreateLoadBalancer(req));
  expect(res.LoadBalancerIds).toHaveLength(1);
  return res.LoadBalancerIds?.[0] ?? '';
}

async function listener(lbId: string, listenerId: string) {
  const res = await client.DescribeListeners({ LoadBalancerId: lbId, ListenerIds: [listenerId] });
  expect(res.Listeners).toHaveLength(1);
  return res.Listeners?.[0] ?? {};
}

describe('CreateLoadBalancer', () => {
  it('creates an INTERNAL IPv4 CLB with a private VIP; it is "creating" (Status 0) until its task completes', async () => {
    await holdTasks();
    const res = await client.CreateLoadBalancer({ LoadBalancerType: 'INTERNAL', SubnetId: 'subnet-abc', VpcId: 'vpc-abc', LoadBalancerName: 'svc-a' });
    const id = res.LoadBalancerIds?.[0] ?? '';
    expect(id).toMatch(/^lb-[a-z0-9]{8}$/);
    const during = await client.DescribeLoadBalancers({ LoadBalancerIds: [id] });
    expect(during.LoadBalancerSet?.[0]?.Status).toBe(0);
    expect((await client.DescribeTaskStatus({ TaskId: res.RequestId ?? '' })).Status).toBe(2);
    await releaseTasks(res.RequestId ?? '');
    const lb = (await client.DescribeLoadBalancers({ LoadBalancerIds: [id] })).LoadBalancerSet?.[0];
    expect(lb).toMatchObject({
      LoadBalancerId: id,
      LoadBalancerName: 'svc-a',
      LoadBalancerType: 'INTERNAL',
      Status: 1,
      SubnetId: 'subnet-abc',
      VpcId: 'vpc-abc',
      AddressIPVersion: 'ipv4',
      Forward: 1,
    });
    expect(lb?.LoadBalancerVips?.[0]).toMatch(/^10\.\d+\.\d+\.\d+$/);
  });

  it('creates an OPEN CLB with a public-looking VIP and an IPv6 CLB with AddressIPv6 only', async () => {
    const open = await createLb({ LoadBalancerType: 'OPEN' });
    const v6 = await createLb({ LoadBalancerType: 'OPEN', AddressIPVersion: 'IPV6' });
    const full = await createLb({ LoadBalancerType: 'OPEN', AddressIPVersion: 'IPv6FullChain' });
    const set = (await client.DescribeLoadBalancers({ LoadBalancerIds: [open, v6, full] })).LoadBalancerSet ?? [];
    const byId = new Map(set.map((lb) => [lb.LoadBalancerId, lb]));
    expect(byId.get(open)?.LoadBalancerVips?.[0]).toMatch(/^(203\.0\.113|198\.51\.100)\./);
    expect(byId.get(v6)).toMatchObject({ AddressIPVersion: 'ipv6', IPv6Mode: 'IPv6Nat64', LoadBalancerVips: [] });
    expect(byId.get(v6)?.AddressIPv6).toMatch(/^2001:db8:/);
    expect(byId.get(full)).toMatchObject({ AddressIPVersion: 'ipv6', IPv6Mode: 'IPv6FullChain' });
  });

  it('refuses INTERNAL IPv6 CLBs: IPv6 is public-only (tencent-cloud.md §9 #4)', async () => {
    for (const version of ['IPV6', 'IPv6FullChain', 'ipv6']) {
      const err = await expectSdkError(
        client.CreateLoadBalancer({ LoadBalancerType: 'INTERNAL', SubnetId: 's', AddressIPVersion: version }),
        'InvalidParameterCombination',
      );
      expect(err.message).toMatch(/only supported by public/);
    }
    await createLb({ LoadBalancerType: 'INTERNAL', SubnetId: 's', AddressIPVersion: 'IPV4' });
    expect((await emu.admin.state()).loadBalancers.map((lb) => lb.AddressIPVersion)).toEqual(['ipv4']);
  });

  it('requires a SubnetId for INTERNAL CLBs and a valid type', async () => {
    await expectSdkError(client.CreateLoadBalancer({ LoadBalancerType: 'INTERNAL' }), 'MissingParameter');
    await expectSdkError(client.CreateLoadBalancer({ LoadBalancerType: 'PRIVATE' }), 'InvalidParameterValue');
  });
});

describe('DescribeLoadBalancers', () => {
  it('filters by ids, VIPs and type, paginates with Offset/Limit and reports TotalCount', async () => {
    const internal = [];
    for (let i = 0; i < 5; i++) internal.push((await emu.admin.seedLoadBalancer({ LoadBalancerType: 'INTERNAL', LoadBalancerName: `in-${i}` })).LoadBalancerId);
    const open = await emu.admin.seedLoadBalancer({ LoadBalancerType: 'OPEN', Vip: '203.0.113.200' });

    const all = await client.DescribeLoadBalancers({});
    expect(all.TotalCount).toBe(6);
    // Default order: CreateTime descending.
    expect(all.LoadBalancerSet?.map((lb) => lb.LoadBalancerId)).toEqual([open.LoadBalancerId, ...[...internal].reverse()]);

    const page = await client.DescribeLoadBalancers({ LoadBalancerType: 'INTERNAL', Offset: 1, Limit: 2, OrderType: 0 });
    expect(page.TotalCount).toBe(5);
    expect(page.LoadBalancerSet?.map((lb) => lb.LoadBalancerName)).toEqual(['in-1', 'in-2']);

    const byVip = await client.DescribeLoadBalancers({ LoadBalancerVips: ['203.0.113.200'] });
    expect(byVip.LoadBalancerSet?.map((lb) => lb.LoadBalancerId)).toEqual([open.LoadBalancerId]);

    const byIds = await client.DescribeLoadBalancers({ LoadBalancerIds: [internal[0] ?? '', 'lb-unknown0'] });
    expect(byIds.TotalCount).toBe(1);
  });

  it('applies the default Limit of 20', async () => {
    for (let i = 0; i < 22; i++) await emu.admin.seedLoadBalancer({});
    const res = await client.DescribeLoadBalancers({});
    expect(res.TotalCount).toBe(22);
    expect(res.LoadBalancerSet).toHaveLength(20);
  });

  it('rejects more than 20 ids and a Limit above 100', async () => {
    const ids = Array.from({ length: 21 }, (_, i) => `lb-${String(i).padStart(8, '0')}`);
    await expectSdkError(client.DescribeLoadBalancers({ LoadBalancerIds: ids }), 'InvalidParameterValue.Length');
    await expectSdkError(client.DescribeLoadBalancers({ Limit: 101 }), 'InvalidParameterValue.Range');
  });

  it('filters by tag', async () => {
    const tagged = await emu.admin.seedLoadBalancer({ Tags: [{ TagKey: 'tke-clusterId', TagValue: 'cls-1' }] });
    await emu.admin.seedLoadBalancer({ Tags: [{ TagKey: 'tke-clusterId', TagValue: 'cls-2' }] });
    const res = await client.DescribeLoadBalancers({ Filters: [{ Name: 'tag:tke-clusterId', Values: ['cls-1'] }] });
    expect(res.LoadBalancerSet?.map((lb) => lb.LoadBalancerId)).toEqual([tagged.LoadBalancerId]);
  });
});

describe('CreateListener / CreateRule / DescribeListeners', () => {
  it('creates L4 and L7 listeners and rules; they appear only when their task completes', async () => {
    const lbId = await createLb({ LoadBalancerType: 'INTERNAL', SubnetId: 's' });
    await holdTasks();
    const tcp = await client.CreateListener({
      LoadBalancerId: lbId,
      Ports: [443, 8443],
      Protocol: 'TCP',
      ListenerNames: ['tcp-443', 'tcp-8443'],
      HealthCheck: { HealthSwitch: 1, IntervalTime: 10, TimeOut: 4 },
    });
    expect(tcp.ListenerIds).toHaveLength(2);
    // Stricter model: not visible while the task runs.
    expect((await client.DescribeListeners({ LoadBalancerId: lbId })).TotalCount).toBe(0);
    await releaseTasks(tcp.RequestId ?? '');
    const http = await writeAndWait(client, client.CreateListener({ LoadBalancerId: lbId, Ports: [80], Protocol: 'HTTP' }));
    const httpId = http.ListenerIds?.[0] ?? '';
    const rules = await writeAndWait(
      client,
      client.CreateRule({
        LoadBalancerId: lbId,
        ListenerId: httpId,
        Rules: [
          { Domain: 'a.example.com', Url: '/' },
          { Domain: 'a.example.com', Url: '/api', HealthCheck: { HttpCheckPath: '/healthz', SourceIpType: 1 } },
        ],
      }),
    );
    expect(rules.LocationIds).toHaveLength(2);

    const all = await client.DescribeListeners({ LoadBalancerId: lbId });
    expect(all.TotalCount).toBe(3);
    const l4 = all.Listeners?.find((l) => l.Port === 443);
    expect(l4).toMatchObject({ Protocol: 'TCP', ListenerName: 'tcp-443', Rules: null });
    expect(l4?.HealthCheck).toMatchObject({ HealthSwitch: 1, IntervalTime: 10, TimeOut: 4, HealthNum: 3, SourceIpType: 0, CheckType: 'TCP' });

    const l7 = all.Listeners?.find((l) => l.Port === 80);
    expect(l7).toMatchObject({ Protocol: 'HTTP', HealthCheck: null, KeepaliveEnable: 0 });
    expect(l7?.Rules?.map((r) => [r.LocationId, r.Url])).toEqual([
      [rules.LocationIds?.[0], '/'],
      [rules.LocationIds?.[1], '/api'],
    ]);
    expect(l7?.Rules?.[1]?.HealthCheck).toMatchObject({ HttpCheckPath: '/healthz', SourceIpType: 1, CheckType: 'HTTP', HttpCode: 31 });

    const filtered = await client.DescribeListeners({ LoadBalancerId: lbId, Protocol: 'TCP', Port: 8443 });
    expect(filtered.Listeners?.map((l) => l.ListenerId)).toEqual([tcp.ListenerIds?.[1]]);
  });

  it('refuses a port already in use and rules on L4 listeners', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    await expectSdkError(client.CreateListener({ LoadBalancerId: lb.LoadBalancerId, Ports: [80], Protocol: 'HTTP' }), 'InvalidParameter.PortCheckFailed');
    await expectSdkError(
      client.CreateRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lb.Listeners[0]?.ListenerId ?? '', Rules: [{ Domain: 'x', Url: '/' }] }),
      'InvalidParameter',
    );
  });

  it('answers unknown ids with the documented NotFound codes', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTP', Port: 80, Rules: [{ Url: '/' }] }] });
    const lblId = lb.Listeners[0]?.ListenerId ?? '';
    await expectSdkError(client.DescribeListeners({ LoadBalancerId: 'lb-missing0' }), 'InvalidParameter.LBIdNotFound');
    await expectSdkError(client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: 'lbl-missing0' }), 'InvalidParameter.ListenerIdNotFound');
    await expectSdkError(
      client.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lblId, LocationId: 'loc-missing0' }),
      'InvalidParameter.LocationNotFound',
    );
    await expectSdkError(client.DescribeListeners({ LoadBalancerId: '' }), 'MissingParameter');
  });
});

describe('ModifyListener / ModifyRule round-trips', () => {
  const fullL4: HealthCheck = {
    HealthSwitch: 1,
    TimeOut: 3,
    IntervalTime: 12,
    HealthNum: 4,
    UnHealthNum: 5,
    CheckType: 'TCP',
    SourceIpType: 1,
    CheckPort: 8080,
  };

  it('writes a full L4 HealthCheck and reads it back unchanged after the task', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 443 }] });
    const lblId = lb.Listeners[0]?.ListenerId ?? '';
    await holdTasks();
    const res = await client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lblId, HealthCheck: fullL4, ListenerName: 'renamed' });
    // State becomes visible at task completion, not before.
    expect((await listener(lb.LoadBalancerId, lblId)).HealthCheck?.SourceIpType).toBe(0);
    await releaseTasks(res.RequestId ?? '');
    const after = await listener(lb.LoadBalancerId, lblId);
    expect(after.ListenerName).toBe('renamed');
    expect(after.HealthCheck).toMatchObject(fullL4);

    // Round-trip: send back what DescribeListeners returned (nulls are dropped by the SDK) → no change.
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lblId, HealthCheck: after.HealthCheck ?? {} }));
    expect((await listener(lb.LoadBalancerId, lblId)).HealthCheck).toEqual(after.HealthCheck);
  });

  it('writes a full rule HealthCheck with ModifyRule and reads it back', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTPS', Port: 443, Rules: [{ Domain: 'a.example.com', Url: '/' }] }] });
    const l = lb.Listeners[0];
    const locId = l?.Rules[0]?.LocationId ?? '';
    const hc: HealthCheck = {
      HealthSwitch: 1,
      TimeOut: 5,
      IntervalTime: 5,
      HealthNum: 2,
      UnHealthNum: 2,
      HttpCode: 2,
      HttpCheckPath: '/ready',
      HttpCheckDomain: 'a.example.com',
      HttpCheckMethod: 'GET',
      CheckType: 'HTTP',
      SourceIpType: 1,
    };
    await writeAndWait(client, client.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: l?.ListenerId ?? '', LocationId: locId, HealthCheck: hc, Url: '/v2' }));
    const rule = (await listener(lb.LoadBalancerId, l?.ListenerId ?? '')).Rules?.[0];
    expect(rule?.Url).toBe('/v2');
    expect(rule?.HealthCheck).toMatchObject(hc);
  });

  it('sets KeepaliveEnable on an HTTP listener once the account has the capability', async () => {
    await emu.admin.setCapabilities({ l7KeepaliveSnat: true });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTP', Port: 80 }] });
    const lblId = lb.Listeners[0]?.ListenerId ?? '';
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lblId, KeepaliveEnable: 1 }));
    expect((await listener(lb.LoadBalancerId, lblId)).KeepaliveEnable).toBe(1);
  });
});

describe('partial HealthCheck: omitted fields reset to defaults (stricter model)', () => {
  it('ModifyListener {SourceIpType: 1} alone resets a custom interval, thresholds and a disabled switch', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [{ Protocol: 'TCP', Port: 80, HealthCheck: { HealthSwitch: 0, IntervalTime: 30, TimeOut: 10, HealthNum: 6, UnHealthNum: 7 } }],
    });
    const lblId = lb.Listeners[0]?.ListenerId ?? '';
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lblId, HealthCheck: { SourceIpType: 1 } }));
    expect((await listener(lb.LoadBalancerId, lblId)).HealthCheck).toMatchObject({
      SourceIpType: 1,
      HealthSwitch: 1,
      IntervalTime: 5,
      TimeOut: 2,
      HealthNum: 3,
      UnHealthNum: 3,
      // HTTP-only: null on a TCP check, not an invented default (tencent-cloud.md §9 #7).
      HttpCode: null,
      CheckType: 'TCP',
    });
  });

  it('ModifyRule {SourceIpType: 1} alone resets the check path and method', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [{ Protocol: 'HTTP', Port: 80, Rules: [{ Url: '/', HealthCheck: { HttpCheckPath: '/healthz', HttpCheckMethod: 'GET', HttpCode: 2 } }] }],
    });
    const l = lb.Listeners[0];
    await writeAndWait(
      client,
      client.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: l?.ListenerId ?? '', LocationId: l?.Rules[0]?.LocationId ?? '', HealthCheck: { SourceIpType: 1 } }),
    );
    expect((await listener(lb.LoadBalancerId, l?.ListenerId ?? '')).Rules?.[0]?.HealthCheck).toMatchObject({
      SourceIpType: 1,
      HttpCheckPath: '/',
      HttpCheckMethod: 'HEAD',
      HttpCode: 31,
    });
  });

  it('a write without HealthCheck leaves the health check alone', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80, HealthCheck: { IntervalTime: 30 } }] });
    const lblId = lb.Listeners[0]?.ListenerId ?? '';
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lblId, ListenerName: 'x' }));
    expect((await listener(lb.LoadBalancerId, lblId)).HealthCheck?.IntervalTime).toBe(30);
  });
});

describe('ModifyLoadBalancerAttributes / DeleteLoadBalancer', () => {
  it('sets LoadBalancerPassToTarget after the task', async () => {
    const lb = await emu.admin.seedLoadBalancer({});
    await holdTasks();
    const res = await client.ModifyLoadBalancerAttributes({ LoadBalancerId: lb.LoadBalancerId, LoadBalancerPassToTarget: true });
    expect((await client.DescribeLoadBalancers({ LoadBalancerIds: [lb.LoadBalancerId] })).LoadBalancerSet?.[0]?.LoadBalancerPassToTarget).toBe(false);
    await releaseTasks(res.RequestId ?? '');
    expect((await client.DescribeLoadBalancers({ LoadBalancerIds: [lb.LoadBalancerId] })).LoadBalancerSet?.[0]?.LoadBalancerPassToTarget).toBe(true);
  });

  it('refuses LoadBalancerPassToTarget on IPv6 CLBs', async () => {
    const lb = await emu.admin.seedLoadBalancer({ AddressIPVersion: 'IPV6' });
    await expectSdkError(client.ModifyLoadBalancerAttributes({ LoadBalancerId: lb.LoadBalancerId, LoadBalancerPassToTarget: true }), 'InvalidParameterValue');
  });

  it('deletes CLBs when the task completes; unknown ids and delete protection are refused', async () => {
    const a = await emu.admin.seedLoadBalancer({});
    const b = await emu.admin.seedLoadBalancer({ DeleteProtect: true });
    await expectSdkError(client.DeleteLoadBalancer({ LoadBalancerIds: ['lb-missing0'] }), 'InvalidParameter.LBIdNotFound');
    await expectSdkError(client.DeleteLoadBalancer({ LoadBalancerIds: [b.LoadBalancerId] }), 'OperationDenied');
    await holdTasks();
    const res = await client.DeleteLoadBalancer({ LoadBalancerIds: [a.LoadBalancerId] });
    expect((await client.DescribeLoadBalancers({ LoadBalancerIds: [a.LoadBalancerId] })).TotalCount).toBe(1);
    await releaseTasks(res.RequestId ?? '');
    expect((await client.DescribeLoadBalancers({})).LoadBalancerSet?.map((lb) => lb.LoadBalancerId)).toEqual([b.LoadBalancerId]);
  });
});
