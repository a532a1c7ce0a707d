import type { ClbStore } from './state.js';
import { clbTime, defaultNodes, newId } from './state.js';
import type { HealthCheckState, ListenerProtocol, ListenerRecord, LoadBalancerRecord, NodeRecord, RuleRecord, TagInfo } from './model.js';
import { isLayer7 } from './model.js';

/** Record constructors shared by the Create* actions and admin seeding, so both produce identical shapes. */

export type IpVersionInput = 'IPV4' | 'IPV6' | 'IPv6FullChain';

export interface LoadBalancerInit {
  id?: string | undefined;
  name?: string | undefined;
  type: 'OPEN' | 'INTERNAL';
  ipVersion: IpVersionInput;
  vip?: string | undefined;
  addressIPv6?: string | undefined;
  vpcId?: string | undefined;
  subnetId?: string | undefined;
  tags?: TagInfo[] | undefined;
  clusterIds?: string[] | undefined;
  passToTarget?: boolean | undefined;
  deleteProtect?: boolean | undefined;
  snatPro?: boolean | undefined;
  status: 0 | 1;
  nodes?: NodeRecord[] | undefined;
}

export function buildLoadBalancer(store: ClbStore, init: LoadBalancerInit, nowMs: number): LoadBalancerRecord {
  const id = init.id ?? newId('lb');
  const ipv6 = init.ipVersion !== 'IPV4';
  return {
    LoadBalancerId: id,
    LoadBalancerName: init.name ?? id,
    LoadBalancerType: init.type,
    Forward: 1,
    Status: init.status,
    VpcId: init.vpcId ?? 'vpc-loopguard',
    SubnetId: init.subnetId ?? '',
    LoadBalancerVips: ipv6 ? [] : [init.vip ?? store.allocateVip(init.type)],
    // Output spelling is lowercase ipv4/ipv6 + IPv6Mode (clb_models.d.ts; terraform-provider-tencentcloud reads it so).
    AddressIPVersion: ipv6 ? 'ipv6' : 'ipv4',
    IPv6Mode: init.ipVersion === 'IPV6' ? 'IPv6Nat64' : init.ipVersion === 'IPv6FullChain' ? 'IPv6FullChain' : null,
    AddressIPv6: ipv6 ? (init.addressIPv6 ?? store.allocateVip('IPV6')) : null,
    Tags: (init.tags ?? []).map((t) => ({ ...t })),
    LoadBalancerPassToTarget: init.passToTarget ?? false,
    SnatPro: init.snatPro ?? false,
    DeleteProtect: init.deleteProtect ?? false,
    ClusterIds: [...(init.clusterIds ?? [])],
    CreateTime: clbTime(nowMs),
    Listeners: [],
    nodes: init.nodes ?? defaultNodes(),
    seq: store.nextSeq(),
  };
}

export interface ListenerInit {
  id?: string | undefined;
  name?: string | undefined;
  protocol: ListenerProtocol;
  port: number;
  healthCheck: HealthCheckState | null;
  keepalive?: number | undefined;
  snat?: boolean | undefined;
  scheduler?: string | undefined;
  sessionExpireTime?: number | undefined;
  sessionType?: string | undefined;
  deregisterTargetRst?: boolean | undefined;
  idleConnectTimeout?: number | undefined;
}

export function buildListener(init: ListenerInit, nowMs: number): ListenerRecord {
  const l7 = isLayer7(init.protocol);
  return {
    ListenerId: init.id ?? newId('lbl'),
    ListenerName: init.name ?? `${init.protocol}-${init.port}`,
    Protocol: init.protocol,
    Port: init.port,
    HealthCheck: l7 ? null : init.healthCheck,
    Scheduler: l7 ? null : (init.scheduler ?? 'WRR'),
    SessionExpireTime: init.sessionExpireTime ?? 0,
    SessionType: init.sessionType ?? 'NORMAL',
    KeepaliveEnable: init.keepalive ?? 0,
    SnatEnable: init.snat ?? false,
    DeregisterTargetRst: init.deregisterTargetRst ?? false,
    IdleConnectTimeout: l7 ? null : (init.idleConnectTimeout ?? (init.protocol === 'UDP' ? 300 : 900)),
    CreateTime: clbTime(nowMs),
    Rules: [],
    healthChangedAtMs: nowMs,
  };
}

export interface RuleInit {
  id?: string | undefined;
  domain: string;
  url: string;
  forwardType: string;
  healthCheck: HealthCheckState;
  scheduler?: string | undefined;
  sessionExpireTime?: number | undefined;
  defaultServer?: boolean | undefined;
}

export function buildRule(init: RuleInit, nowMs: number): RuleRecord {
  return {
    LocationId: init.id ?? newId('loc'),
    Domain: init.domain,
    Url: init.url,
    HealthCheck: init.healthCheck,
    Scheduler: init.scheduler ?? 'WRR',
    SessionExpireTime: init.sessionExpireTime ?? 0,
    ForwardType: init.forwardType,
    DefaultServer: init.defaultServer ?? false,
    CreateTime: clbTime(nowMs),
    healthChangedAtMs: nowMs,
  };
}

/** Two listeners clash when they share a port and both are TCP-based (or both UDP-based). */
export function portsClash(a: ListenerProtocol, b: ListenerProtocol): boolean {
  const udp = (p: ListenerProtocol): boolean => p === 'UDP' || p === 'QUIC';
  return udp(a) === udp(b);
}
