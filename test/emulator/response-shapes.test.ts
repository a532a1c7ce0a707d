/**
 * Every response the emulator renders, held to the SDK's model interfaces (clb_models.d.ts, parsed with the
 * TypeScript compiler API in sdk-models.ts): no invented field, the documented JSON type, null only where the
 * model says "may return null", no missing required field. Plus the values the models pin down that a type check
 * cannot see (tencent-cloud.md §9 #6, #7): `AttrFlags` names `SnatEnable` when SNAT is on, the HTTP-only health-check
 * fields are null on TCP/UDP/PING/CUSTOM checks, `KeepaliveEnable` is null on layer-4 listeners.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { HealthCheck, Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { ACTIONS } from '../../sim/clb-emulator/actions/index.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { Models } from './sdk-models.js';
import { checkObject, httpOnlyNullableFields, loadModels } from './sdk-models.js';
import type { ClbClient } from './support.js';
import { clbClient, waitForTask, writeAndWait } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;
let models: Models;
/** Action → problems of every response of that action seen so far. */
const seen = new Map<string, string[]>();

/** Records a response's problems against `<Action>Response`; returns the response for further use. */
async function checked<T>(action: string, call: Promise<T>): Promise<T> {
  const res = await call;
  const problems = seen.get(action) ?? [];
  checkObject(models, res, `${action}Response`, action, problems);
  seen.set(action, problems);
  return res;
}

const lbId = (res: { LoadBalancerIds?: string[] }): string => res.LoadBalancerIds?.[0] ?? '';

let internal = '';
let listeners: Listener[] = [];

beforeAll(async () => {
  models = loadModels();
  emu = await startClbEmulator({ taskDurationMs: 20, capabilities: { l7KeepaliveSnat: true } });
  client = clbClient(emu);

  // Every action through the SDK, each response checked as it comes.
  const created = await checked('CreateLoadBalancer', client.CreateLoadBalancer({ LoadBalancerType: 'INTERNAL', SubnetId: 'subnet-1', VpcId: 'vpc-1' }));
  internal = lbId(created);
  await checked('DescribeTaskStatus', client.DescribeTaskStatus({ TaskId: created.RequestId ?? '' }));
  await emu.admin.completeTasks();
  const v6 = await writeAndWait(client, checked('CreateLoadBalancer', client.CreateLoadBalancer({ LoadBalancerType: 'OPEN', AddressIPVersion: 'IPv6FullChain' })));
  const doomed = await writeAndWait(client, client.CreateLoadBalancer({ LoadBalancerType: 'OPEN' }));

  const create = (req: Parameters<ClbClient['CreateListener']>[0]) => writeAndWait(client, checked('CreateListener', client.CreateListener(req)));
  await create({ LoadBalancerId: internal, Ports: [80], Protocol: 'TCP', SnatEnable: true });
  await create({ LoadBalancerId: internal, Ports: [53], Protocol: 'UDP' });
  await create({ LoadBalancerId: internal, Ports: [81], Protocol: 'TCP', HealthCheck: { CheckType: 'HTTP', HttpCheckDomain: 'a.example.com', HttpVersion: 'HTTP/1.1' } });
  await create({ LoadBalancerId: internal, Ports: [82], Protocol: 'TCP', HealthCheck: { CheckType: 'CUSTOM', ContextType: 'TEXT', SendContext: 'ping', RecvContext: 'pong' } });
  await create({ LoadBalancerId: internal, Ports: [8080], Protocol: 'HTTP', KeepaliveEnable: 1 });
  const https = await create({ LoadBalancerId: internal, Ports: [443], Protocol: 'HTTPS', SnatEnable: true });
  await create({ LoadBalancerId: lbId(v6), Ports: [80], Protocol: 'TCP' });

  const httpsId = https.ListenerIds?.[0] ?? '';
  const rules = await writeAndWait(
    client,
    checked('CreateRule', client.CreateRule({ LoadBalancerId: internal, ListenerId: httpsId, Rules: [{ Domain: 'a.example.com', Url: '/', ForwardType: 'HTTPS' }, { Domain: 'b.example.com', Url: '/' }] })),
  );
  const l80 = (await client.DescribeListeners({ LoadBalancerId: internal, Port: 80, Protocol: 'TCP' })).Listeners?.[0];
  await writeAndWait(client, checked('ModifyListener', client.ModifyListener({ LoadBalancerId: internal, ListenerId: l80?.ListenerId ?? '', HealthCheck: { SourceIpType: 1 } })));
  await writeAndWait(client, checked('ModifyRule', client.ModifyRule({ LoadBalancerId: internal, ListenerId: httpsId, LocationId: rules.LocationIds?.[0] ?? '', HealthCheck: { SourceIpType: 1 } })));
  await writeAndWait(client, checked('ModifyLoadBalancerAttributes', client.ModifyLoadBalancerAttributes({ LoadBalancerId: internal, DeleteProtect: true })));
  await writeAndWait(client, checked('DeleteLoadBalancer', client.DeleteLoadBalancer({ LoadBalancerIds: [lbId(doomed)] })));

  // A failed task carries a Message; a finished one a null Message.
  await emu.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'taskFailure', message: 'injected' }] });
  const failing = await client.ModifyListener({ LoadBalancerId: internal, ListenerId: l80?.ListenerId ?? '', ListenerName: 'x' });
  await emu.admin.clearFaults();
  await checked('DescribeTaskStatus', waitForTask(client, failing.RequestId ?? ''));
  await checked('DescribeTaskStatus', client.DescribeTaskStatus({ TaskId: failing.RequestId ?? '' }));
  await checked('DescribeTaskStatus', client.DescribeTaskStatus({ TaskId: rules.RequestId ?? '' }));

  await checked('DescribeLoadBalancers', client.DescribeLoadBalancers({ AdditionalFields: ['TargetCount'] }));
  listeners = [
    ...((await checked('DescribeListeners', client.DescribeListeners({ LoadBalancerId: internal }))).Listeners ?? []),
    ...((await checked('DescribeListeners', client.DescribeListeners({ LoadBalancerId: lbId(v6) }))).Listeners ?? []),
  ];
  await emu.admin.setVipBound(internal, true, ['10.0.1.1']);
  await checked('DescribeTargetHealth', client.DescribeTargetHealth({ LoadBalancerIds: [internal, lbId(v6)] }));
});

afterAll(() => emu?.close());

describe('emulator responses against clb_models.d.ts', () => {
  it('exercises every action the emulator implements', () => {
    expect([...seen.keys()].sort()).toEqual(Object.keys(ACTIONS).sort());
  });

  it.each(Object.keys(ACTIONS).sort())('%s: no invented field, documented types and nulls, no missing required field', (action) => {
    expect(seen.get(action)).toEqual([]);
  });

  it('reads the model: HttpCode is an HTTP-only field that may return null, KeepaliveEnable may be null, AttrFlags may not', () => {
    expect(httpOnlyNullableFields(models)).toEqual(expect.arrayContaining(['HttpCode', 'HttpCheckPath', 'HttpCheckMethod', 'HttpCheckDomain']));
    expect(models.get('Listener')?.get('KeepaliveEnable')?.nullable).toBe(true);
    expect(models.get('Listener')?.get('AttrFlags')).toMatchObject({ nullable: false, type: { kind: 'array', element: { kind: 'string' } } });
  });
});

describe('values the model pins down (tencent-cloud.md §9)', () => {
  it('AttrFlags lists SnatEnable exactly on the listeners with SNAT on (#6)', async () => {
    const state = await emu.admin.getLoadBalancer(internal);
    const snatOn = state.Listeners.filter((l) => l.SnatEnable).map((l) => l.ListenerId);
    expect(snatOn).toHaveLength(2);
    const flagged = listeners.filter((l) => l.AttrFlags?.includes('SnatEnable')).map((l) => l.ListenerId);
    expect(flagged.sort()).toEqual(snatOn.sort());
  });

  it('the HTTP-only health-check fields are null on TCP, UDP/PING and CUSTOM checks, set on HTTP checks (#7)', () => {
    const httpOnly = httpOnlyNullableFields(models);
    const checks: Array<[string, HealthCheck]> = [];
    for (const l of listeners) {
      if (l.HealthCheck) checks.push([`${l.Protocol}:${l.Port}`, l.HealthCheck]);
      for (const r of l.Rules ?? []) if (r.HealthCheck) checks.push([`${l.Protocol}:${l.Port} ${r.Domain ?? ''}${r.Url ?? ''}`, r.HealthCheck]);
    }
    const isHttp = (hc: HealthCheck): boolean => hc.CheckType === 'HTTP' || hc.CheckType === 'HTTPS';
    const others = checks.filter(([, hc]) => !isHttp(hc));
    expect(others.map(([where, hc]) => `${where} ${hc.CheckType ?? ''}`).sort()).toEqual(['TCP:80 TCP', 'TCP:80 TCP', 'TCP:82 CUSTOM', 'UDP:53 PING']);
    for (const [where, hc] of others) {
      const got = Object.fromEntries(httpOnly.map((f) => [f, hc[f as keyof HealthCheck]]));
      expect({ where, got }).toEqual({ where, got: Object.fromEntries(httpOnly.map((f) => [f, null])) });
    }
    const httpChecks = checks.filter(([, hc]) => isHttp(hc));
    expect(httpChecks.map(([where]) => where).sort()).toEqual(['HTTPS:443 a.example.com/', 'HTTPS:443 b.example.com/', 'TCP:81']);
    for (const [where, hc] of httpChecks) expect({ where, HttpCode: hc.HttpCode }).toEqual({ where, HttpCode: 31 });
  });

  it('KeepaliveEnable is null on layer-4 listeners and 0/1 on HTTP/HTTPS ones (#7)', () => {
    expect(listeners.map((l) => [`${l.Protocol}:${l.Port}`, l.KeepaliveEnable]).sort()).toEqual(
      [['TCP:80', null], ['UDP:53', null], ['TCP:81', null], ['TCP:82', null], ['HTTP:8080', 1], ['HTTPS:443', 0], ['TCP:80', null]].sort(),
    );
  });
});

describe('the checker itself', () => {
  it('reports invented names, wrong types, undocumented nulls, null array elements and missing required fields', () => {
    const problems = checkObject(models, {
      Listeners: [{ ListenerId: 'lbl-1', Port: '80', SnatEnable: true, AttrFlags: [null], ListenerName: null, HealthCheck: null }],
      TotalCount: 1,
      RequestId: 'r',
    }, 'DescribeListenersResponse', 'R');
    expect(problems.sort()).toEqual([
      'R.Listeners[0].AttrFlags[0]: null, but the model does not say it may return null',
      'R.Listeners[0].ListenerName: null, but the model does not say it may return null',
      'R.Listeners[0].Port: "80" is not a number',
      'R.Listeners[0].SnatEnable: Listener has no field SnatEnable',
    ]);
    expect(checkObject(models, { Tags: [{ TagKey: 'k' }] }, 'LoadBalancer', 'LB')).toEqual(['LB.Tags[0].TagValue: required by TagInfo, missing']);
  });
});
