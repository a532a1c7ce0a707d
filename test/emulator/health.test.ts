/**
 * DescribeTargetHealth and the loopback health model: VIP bound on nodes (kube-proxy IPVS) + VIP-sourced probes
 * (SourceIpType 0) → Dead; 100.64 source → Alive (kubernetes/kubernetes#79783, tencent-cloud.md §5).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DescribeTargetHealthResponse } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import { nodePortFor, startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient, eventually, expectSdkError, writeAndWait } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;
let lb: AdminLoadBalancer;

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 30 });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(async () => {
  await emu.admin.reset();
  lb = await emu.admin.seedLoadBalancer({
    Listeners: [
      { Protocol: 'TCP', Port: 443 },
      { Protocol: 'HTTP', Port: 80, Rules: [{ Domain: 'a.example.com', Url: '/' }, { Domain: 'a.example.com', Url: '/api' }] },
    ],
  });
});

const tcpId = () => lb.Listeners[0]?.ListenerId ?? '';
const httpId = () => lb.Listeners[1]?.ListenerId ?? '';
const locId = (i: number) => lb.Listeners[1]?.Rules[i]?.LocationId ?? '';

/** Detail strings per "listener/location" key, e.g. {"lbl-x/lbl-x": ["Alive","Alive","Alive"]}. */
function details(res: DescribeTargetHealthResponse): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const l of res.LoadBalancers?.[0]?.Listeners ?? []) {
    for (const r of l.Rules ?? []) out[`${l.ListenerId}/${r.LocationId}`] = (r.Targets ?? []).map((t) => t.HealthStatusDetail ?? '?');
  }
  return out;
}

const health = async () => details(await client.DescribeTargetHealth({ LoadBalancerIds: [lb.LoadBalancerId] }));

describe('DescribeTargetHealth', () => {
  it('lists every node as a target per L4 listener and per L7 rule, all Alive by default', async () => {
    const res = await client.DescribeTargetHealth({ LoadBalancerIds: [lb.LoadBalancerId] });
    const listeners = res.LoadBalancers?.[0]?.Listeners ?? [];
    expect(listeners.map((l) => [l.Protocol, l.Port, l.Rules?.length])).toEqual([
      ['TCP', 443, 1],
      ['HTTP', 80, 2],
    ]);
    const tcpTargets = listeners[0]?.Rules?.[0]?.Targets ?? [];
    expect(tcpTargets.map((t) => [t.IP, t.Port, t.HealthStatus, t.HealthStatusDetail])).toEqual([
      ['10.0.1.1', nodePortFor(443), true, 'Alive'],
      ['10.0.1.2', nodePortFor(443), true, 'Alive'],
      ['10.0.1.3', nodePortFor(443), true, 'Alive'],
    ]);
    expect(listeners[1]?.Rules?.map((r) => [r.LocationId, r.Domain, r.Url])).toEqual([
      [locId(0), 'a.example.com', '/'],
      [locId(1), 'a.example.com', '/api'],
    ]);
  });

  it('filters by ListenerIds and LocationIds', async () => {
    const res = await client.DescribeTargetHealth({ LoadBalancerIds: [lb.LoadBalancerId], ListenerIds: [httpId()], LocationIds: [locId(1)] });
    expect(Object.keys(details(res))).toEqual([`${httpId()}/${locId(1)}`]);
  });

  it('rejects more than 30 CLB ids and unknown CLBs', async () => {
    const many = Array.from({ length: 31 }, () => lb.LoadBalancerId);
    await expectSdkError(client.DescribeTargetHealth({ LoadBalancerIds: many }), 'InvalidParameterValue.Length');
    await expectSdkError(client.DescribeTargetHealth({ LoadBalancerIds: ['lb-missing0'] }), 'InvalidParameter.LBIdNotFound');
  });
});

describe('loopback health model', () => {
  it('VIP bound + VIP source → Dead; switching the source to 100.64 → Alive', async () => {
    await emu.admin.setVipBound(lb.LoadBalancerId, true);
    const dead = await health();
    expect(dead[`${tcpId()}/${tcpId()}`]).toEqual(['Dead', 'Dead', 'Dead']);
    expect(dead[`${httpId()}/${locId(0)}`]).toEqual(['Dead', 'Dead', 'Dead']);
    const res = await client.DescribeTargetHealth({ LoadBalancerIds: [lb.LoadBalancerId], ListenerIds: [tcpId()] });
    expect(res.LoadBalancers?.[0]?.Listeners?.[0]?.Rules?.[0]?.Targets?.[0]?.HealthStatus).toBe(false);

    // L4: the full struct read back from DescribeListeners with only SourceIpType changed.
    const current = (await client.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId, ListenerIds: [tcpId()] })).Listeners?.[0]?.HealthCheck ?? {};
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: tcpId(), HealthCheck: { ...current, SourceIpType: 1 } }));
    // L7: per rule.
    await writeAndWait(client, client.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: httpId(), LocationId: locId(0), HealthCheck: { SourceIpType: 1 } }));

    const after = await health();
    expect(after[`${tcpId()}/${tcpId()}`]).toEqual(['Alive', 'Alive', 'Alive']);
    expect(after[`${httpId()}/${locId(0)}`]).toEqual(['Alive', 'Alive', 'Alive']);
    // The other rule still probes from the VIP.
    expect(after[`${httpId()}/${locId(1)}`]).toEqual(['Dead', 'Dead', 'Dead']);
  });

  it('only nodes with the VIP bound see Dead targets (partial rollout of kube-proxy)', async () => {
    await emu.admin.setVipBound(lb.LoadBalancerId, true, ['10.0.1.2']);
    expect((await health())[`${tcpId()}/${tcpId()}`]).toEqual(['Alive', 'Dead', 'Alive']);
    await emu.admin.setVipBound(lb.LoadBalancerId, false);
    expect((await health())[`${tcpId()}/${tcpId()}`]).toEqual(['Alive', 'Alive', 'Alive']);
  });

  it('HealthSwitch 0 → Close (HealthStatus true)', async () => {
    await emu.admin.setVipBound(lb.LoadBalancerId, true);
    await emu.admin.patchListener(lb.LoadBalancerId, tcpId(), { HealthCheck: { HealthSwitch: 0 } });
    const res = await client.DescribeTargetHealth({ LoadBalancerIds: [lb.LoadBalancerId], ListenerIds: [tcpId()] });
    const t = res.LoadBalancers?.[0]?.Listeners?.[0]?.Rules?.[0]?.Targets?.[0];
    expect([t?.HealthStatus, t?.HealthStatusDetail]).toEqual([true, 'Close']);
  });

  it('reports the admin-set node list as targets', async () => {
    await emu.admin.setNodes(lb.LoadBalancerId, ['192.168.0.10', { ip: '192.168.0.11', instanceId: 'ins-abcdefgh', vipBound: true }]);
    const res = await client.DescribeTargetHealth({ LoadBalancerIds: [lb.LoadBalancerId], ListenerIds: [tcpId()] });
    const targets = res.LoadBalancers?.[0]?.Listeners?.[0]?.Rules?.[0]?.Targets ?? [];
    expect(targets.map((t) => [t.IP, t.TargetId, t.HealthStatusDetail])).toEqual([
      ['192.168.0.10', expect.stringMatching(/^ins-/), 'Alive'],
      ['192.168.0.11', 'ins-abcdefgh', 'Dead'],
    ]);
  });

  it('reports Unknown while a health-check change converges (healthConvergenceMs)', async () => {
    // Long enough that the first read cannot miss the window on a loaded machine.
    await emu.admin.setConfig({ healthConvergenceMs: 1500 });
    await emu.admin.setVipBound(lb.LoadBalancerId, true);
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: tcpId(), HealthCheck: { SourceIpType: 1 } }));
    expect((await health())[`${tcpId()}/${tcpId()}`]).toEqual(['Unknown', 'Unknown', 'Unknown']);
    await eventually(async () => ((await health())[`${tcpId()}/${tcpId()}`]?.[0] === 'Alive' ? true : undefined), 'targets Alive');
  });
});
