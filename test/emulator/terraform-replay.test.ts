/**
 * Replays, through the unmodified tencentcloud-sdk-nodejs, the CLB requests Tencent's own terraform provider makes
 * (tencentcloudstack/terraform-provider-tencentcloud, read at commit f6970a9, 2026-08-21), and checks the emulator
 * accepts them and gives them their documented effect. The request shapes are written down here as facts read from
 * the provider's code, not copied from it:
 *
 * - `tencentcloud/services/clb/resource_tc_clb_listener.go`, `resourceTencentCloudClbListenerCreate`: CreateListener
 *   with `ListenerNames: [name]`, `Ports: [port]`, `Protocol`, `Scheduler` (schema default `WRR`, so always sent),
 *   `TargetType: "NODE"` on TCP/UDP/TCP_SSL/QUIC listeners when unset, `SessionExpireTime` if set (TCP/UDP only), and
 *   the `HealthCheck` built by `checkHealthCheckPara` when any health attribute is set.
 * - same file, `resourceTencentCloudClbListenerUpdate`: ModifyListener with the changed `ListenerName`,
 *   `SessionExpireTime`, and the `HealthCheck` of `checkHealthCheckParaForUpdate`, which carries every health attribute
 *   present in the state — the computed ones (`health_check_type`, `health_source_ip_type`, …) included.
 * - `tencentcloud/services/clb/service_tencentcloud_clb.go`, `checkHealthCheckPara` / `checkHealthCheckParaForUpdate`:
 *   a disabled check is sent as `{HealthSwitch: 0}` alone; an enabled check on a TCP listener gets `CheckPort: -1`
 *   and `HttpCheckPath: ""` when they are unset, and `HttpCheckDomain: ""` when the check is HTTP without a domain.
 * - `tencentcloud/services/clb/resource_tc_clb_listener_rule.go`, `resourceTencentCloudClbListenerRuleCreate`:
 *   CreateRule with one `RuleInput` {`Domain`, `Url`, `TargetType` (default `NODE`), `Scheduler` (`WRR` when unset),
 *   `SessionExpireTime`, `HealthCheck`}; `resourceTencentCloudClbListenerRuleUpdate`: ModifyRule with the changed
 *   `SessionExpireTime` and the full rule `HealthCheck` from the state.
 * - Every write is followed by `waitForTaskFinish` (DescribeTaskStatus with the write's RequestId until it is done),
 *   then a read through DescribeListeners.
 *
 * The values are those of the provider's acceptance tests `TestAccTencentCloudClbListenerTCPWithTCP`,
 * `TestAccTencentCloudClbListenerTCPWithHTTP` (resource_tc_clb_listener_test.go) and
 * `TestAccTencentCloudClbListenerRuleResource_full` (resource_tc_clb_listener_rule_test.go), which run against the
 * real API. See sim/clb-emulator/CONFORMANCE.md.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { HealthCheck, Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient, writeAndWait } from './support.js';

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
  lb = await emu.admin.seedLoadBalancer({ LoadBalancerType: 'OPEN' });
});

/** What the provider's read (`DescribeListenerById`) sees after the task. */
async function readListener(listenerId: string): Promise<Listener> {
  const res = await client.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId, ListenerIds: [listenerId] });
  const listener = res.Listeners?.[0];
  if (!listener) throw new Error(`listener ${listenerId} not found`);
  return listener;
}

/** The state after a read of the TCP listener below: health_check_type and health_source_ip_type are computed. */
const tcpCheckFromState = { CheckType: 'TCP', SourceIpType: 0 } satisfies HealthCheck;

describe('terraform-provider-tencentcloud: tencentcloud_clb_listener (TCP)', () => {
  async function createTcpListener(): Promise<string> {
    // resourceTencentCloudClbListenerCreate + checkHealthCheckPara, config of TestAccTencentCloudClbListenerTCPWithTCP.
    const res = await writeAndWait(
      client,
      client.CreateListener({
        LoadBalancerId: lb.LoadBalancerId,
        ListenerNames: ['listener_tcp'],
        Ports: [44],
        Protocol: 'TCP',
        HealthCheck: { HealthSwitch: 1, TimeOut: 30, IntervalTime: 100, HealthNum: 2, UnHealthNum: 2, CheckPort: 200, CheckType: 'TCP', HttpCheckPath: '' },
        Scheduler: 'WRR',
        TargetType: 'NODE',
        SessionExpireTime: 30,
      }),
    );
    const id = res.ListenerIds?.[0];
    if (!id) throw new Error('CreateListener returned no ListenerIds');
    return id;
  }

  it('CreateListener with the provider\'s TCP health check (HttpCheckPath "") is accepted and configures the listener', async () => {
    const id = await createTcpListener();
    const listener = await readListener(id);
    expect(listener).toMatchObject({ ListenerName: 'listener_tcp', Port: 44, Protocol: 'TCP', Scheduler: 'WRR', SessionExpireTime: 30 });
    expect(listener.HealthCheck).toMatchObject({ HealthSwitch: 1, TimeOut: 30, IntervalTime: 100, HealthNum: 2, UnHealthNum: 2, CheckPort: 200, CheckType: 'TCP' });
    // The empty HTTP path does not apply to a TCP probe: nothing HTTP is stored.
    expect(listener.HealthCheck?.HttpCheckPath ?? null).toBeNull();
    expect(listener.HealthCheck?.HttpCode ?? null).toBeNull();
  });

  it('ModifyListener with CheckPort -1 and HttpCheckPath "" (an update without health_check_port) restores the backend port', async () => {
    const id = await createTcpListener();
    // resourceTencentCloudClbListenerUpdate + checkHealthCheckParaForUpdate, like TestAccTencentCloudClbListener_tcp_basic's update step.
    await writeAndWait(
      client,
      client.ModifyListener({
        LoadBalancerId: lb.LoadBalancerId,
        ListenerId: id,
        ListenerName: 'listener_tcp_update',
        SessionExpireTime: 60,
        HealthCheck: { HealthSwitch: 1, TimeOut: 20, IntervalTime: 200, HealthNum: 3, UnHealthNum: 3, ...tcpCheckFromState, CheckPort: -1, HttpCheckPath: '' },
      }),
    );
    const listener = await readListener(id);
    expect(listener).toMatchObject({ ListenerName: 'listener_tcp_update', SessionExpireTime: 60 });
    expect(listener.HealthCheck).toMatchObject({ HealthSwitch: 1, TimeOut: 20, IntervalTime: 200, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 0 });
    // -1 "恢复默认设置": the check port is the backend's again (no CheckPort of its own).
    expect(listener.HealthCheck?.CheckPort ?? null).toBeNull();
  });

  it('ModifyListener switching to an HTTP check without path or domain (HttpCheckDomain "", HttpCheckPath "") is accepted', async () => {
    const id = await createTcpListener();
    // TestAccTencentCloudClbListenerTCPWithHTTP's update step: no health_check_http_path/_domain in the config.
    await writeAndWait(
      client,
      client.ModifyListener({
        LoadBalancerId: lb.LoadBalancerId,
        ListenerId: id,
        HealthCheck: {
          HealthSwitch: 1, TimeOut: 20, IntervalTime: 200, HealthNum: 3, UnHealthNum: 3, CheckPort: 200, CheckType: 'HTTP', HttpCode: 2,
          HttpCheckMethod: 'GET', HttpVersion: 'HTTP/1.0', SourceIpType: 0, HttpCheckDomain: '', HttpCheckPath: '',
        },
      }),
    );
    // The acceptance test reads back health_check_http_path "" and health_check_http_domain "".
    expect((await readListener(id)).HealthCheck).toMatchObject({
      CheckType: 'HTTP', HttpCode: 2, HttpCheckMethod: 'GET', HttpVersion: 'HTTP/1.0', CheckPort: 200, HttpCheckPath: '', HttpCheckDomain: '',
    });
  });

  it('ModifyListener with health_check_switch = false sends {HealthSwitch: 0} alone and turns the check off', async () => {
    const id = await createTcpListener();
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: id, HealthCheck: { HealthSwitch: 0 } }));
    expect((await readListener(id)).HealthCheck?.HealthSwitch).toBe(0);
  });

  it('the same TCP shapes are accepted on an IPv6 CLB (the IPv6 check-type rule is not tripped by an empty HTTP path)', async () => {
    const v6 = await emu.admin.seedLoadBalancer({ AddressIPVersion: 'IPV6' });
    const res = await writeAndWait(
      client,
      client.CreateListener({
        LoadBalancerId: v6.LoadBalancerId, ListenerNames: ['listener_tcp'], Ports: [44], Protocol: 'TCP', Scheduler: 'WRR', TargetType: 'NODE',
        HealthCheck: { HealthSwitch: 1, TimeOut: 5, IntervalTime: 10, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', CheckPort: -1, HttpCheckPath: '' },
      }),
    );
    expect(res.ListenerIds).toHaveLength(1);
  });
});

describe('terraform-provider-tencentcloud: tencentcloud_clb_listener (HTTP) and tencentcloud_clb_listener_rule', () => {
  it('CreateListener, CreateRule and ModifyRule as the provider sends them are accepted and take effect', async () => {
    // resourceTencentCloudClbListenerCreate for an HTTP listener: no HealthCheck (no health attribute set), no
    // TargetType (layer 7 sets it per rule), Scheduler WRR from the schema default.
    const created = await writeAndWait(
      client,
      client.CreateListener({ LoadBalancerId: lb.LoadBalancerId, ListenerNames: ['listener_basic'], Ports: [80], Protocol: 'HTTP', Scheduler: 'WRR' }),
    );
    const listenerId = created.ListenerIds?.[0] ?? '';
    expect(listenerId).not.toBe('');

    // resourceTencentCloudClbListenerRuleCreate + checkHealthCheckPara (applyType rule), config of
    // TestAccTencentCloudClbListenerRuleResource_full: health_check_time_out is unset, so TimeOut is not sent.
    const rule = await writeAndWait(
      client,
      client.CreateRule({
        LoadBalancerId: lb.LoadBalancerId,
        ListenerId: listenerId,
        Rules: [
          {
            Domain: 'abc.com', Url: '/', TargetType: 'NODE', Scheduler: 'WRR', SessionExpireTime: 30,
            HealthCheck: { HealthSwitch: 1, IntervalTime: 200, HealthNum: 3, UnHealthNum: 3, HttpCode: 31, HttpCheckPath: '/', HttpCheckDomain: 'abc.com', HttpCheckMethod: 'GET' },
          },
        ],
      }),
    );
    const locationId = rule.LocationIds?.[0] ?? '';
    let read = (await readListener(listenerId)).Rules?.find((r) => r.LocationId === locationId);
    expect(read).toMatchObject({ Domain: 'abc.com', Url: '/', Scheduler: 'WRR', SessionExpireTime: 30 });
    expect(read?.HealthCheck).toMatchObject({ HealthSwitch: 1, TimeOut: 2, IntervalTime: 200, HttpCode: 31, HttpCheckPath: '/', HttpCheckDomain: 'abc.com', HttpCheckMethod: 'GET', CheckType: 'HTTP' });

    // resourceTencentCloudClbListenerRuleUpdate: the update step's health values; the computed health_check_type
    // and health_source_ip_type come from the state.
    await writeAndWait(
      client,
      client.ModifyRule({
        LoadBalancerId: lb.LoadBalancerId,
        ListenerId: listenerId,
        LocationId: locationId,
        SessionExpireTime: 60,
        HealthCheck: {
          HealthSwitch: 1, TimeOut: 4, IntervalTime: 300, HealthNum: 6, UnHealthNum: 6, CheckType: 'HTTP', HttpCode: 1, HttpCheckPath: '/',
          HttpCheckDomain: 'abc.com', HttpCheckMethod: 'HEAD', SourceIpType: 0,
        },
      }),
    );
    read = (await readListener(listenerId)).Rules?.find((r) => r.LocationId === locationId);
    expect(read?.SessionExpireTime).toBe(60);
    expect(read?.HealthCheck).toMatchObject({ TimeOut: 4, IntervalTime: 300, HealthNum: 6, UnHealthNum: 6, HttpCode: 1, HttpCheckMethod: 'HEAD', SourceIpType: 0 });

    // health_check_switch = false on the rule: {HealthSwitch: 0} alone.
    await writeAndWait(client, client.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: listenerId, LocationId: locationId, HealthCheck: { HealthSwitch: 0 } }));
    read = (await readListener(listenerId)).Rules?.find((r) => r.LocationId === locationId);
    expect(read?.HealthCheck?.HealthSwitch).toBe(0);
  });
});
