/**
 * The emulator's in-memory data model. Field names follow the CLB API (clb_models.d.ts) so records render to
 * API output with little translation; lowerCamel fields are emulator-only bookkeeping.
 * Everything here is plain JSON so the admin API can return it as-is.
 */

export const LISTENER_PROTOCOLS = ['TCP', 'UDP', 'HTTP', 'HTTPS', 'TCP_SSL', 'QUIC'] as const;
export type ListenerProtocol = (typeof LISTENER_PROTOCOLS)[number];

export const isLayer7 = (protocol: ListenerProtocol): boolean => protocol === 'HTTP' || protocol === 'HTTPS';

/** Full health-check state; `null` = not applicable / not set (the API returns null for such fields). */
export interface HealthCheckState {
  HealthSwitch: number;
  TimeOut: number;
  IntervalTime: number;
  HealthNum: number;
  UnHealthNum: number;
  HttpCode: number | null;
  HttpCheckPath: string | null;
  HttpCheckDomain: string | null;
  HttpCheckMethod: string | null;
  CheckPort: number | null;
  ContextType: string | null;
  SendContext: string | null;
  RecvContext: string | null;
  CheckType: string;
  HttpVersion: string | null;
  SourceIpType: number;
  ExtendedCode: string | null;
}

export interface RuleRecord {
  LocationId: string;
  Domain: string;
  Url: string;
  HealthCheck: HealthCheckState;
  Scheduler: string;
  SessionExpireTime: number;
  ForwardType: string;
  DefaultServer: boolean;
  CreateTime: string;
  /** Epoch ms of the last health-check change (drives `healthConvergenceMs`). */
  healthChangedAtMs: number;
}

export interface ListenerRecord {
  ListenerId: string;
  ListenerName: string;
  Protocol: ListenerProtocol;
  Port: number;
  /** L4 only; L7 listeners have per-rule health checks. */
  HealthCheck: HealthCheckState | null;
  /** L4 only (L7 scheduling is per rule). */
  Scheduler: string | null;
  SessionExpireTime: number;
  SessionType: string;
  /** L7 only: 0/1. Rendered as null on L4 listeners (clb_models.d.ts: may return null). */
  KeepaliveEnable: number;
  /** No `SnatEnable` field in `Listener` output (tencent-cloud.md §3): rendered as `AttrFlags: ["SnatEnable"]` (§9 #6). */
  SnatEnable: boolean;
  DeregisterTargetRst: boolean;
  IdleConnectTimeout: number | null;
  CreateTime: string;
  Rules: RuleRecord[];
  healthChangedAtMs: number;
}

export interface NodeRecord {
  ip: string;
  instanceId: string;
  /** kube-proxy (IPVS) has bound the CLB VIP on this node: VIP-sourced health checks are dropped (k8s #79783). */
  vipBound: boolean;
}

export type AddressIpVersion = 'ipv4' | 'ipv6';
export type Ipv6Mode = 'IPv6Nat64' | 'IPv6FullChain';

export interface TagInfo {
  TagKey: string;
  TagValue: string;
}

export interface LoadBalancerRecord {
  LoadBalancerId: string;
  LoadBalancerName: string;
  LoadBalancerType: 'OPEN' | 'INTERNAL';
  Forward: number;
  /** 0 = creating, 1 = running. */
  Status: number;
  VpcId: string;
  SubnetId: string;
  /** IPv4 VIPs; empty for IPv6 CLBs, whose address is `AddressIPv6` (tencent-cloud.md §3 HealthCheck paragraph). */
  LoadBalancerVips: string[];
  AddressIPVersion: AddressIpVersion;
  IPv6Mode: Ipv6Mode | null;
  AddressIPv6: string | null;
  Tags: TagInfo[];
  LoadBalancerPassToTarget: boolean;
  SnatPro: boolean;
  DeleteProtect: boolean;
  ClusterIds: string[];
  CreateTime: string;
  Listeners: ListenerRecord[];
  nodes: NodeRecord[];
  /** Creation order, for the default `OrderBy=CreateTime` sort (CreateTime has 1 s resolution). */
  seq: number;
}

export const isIpv6 = (lb: LoadBalancerRecord): boolean => lb.AddressIPVersion === 'ipv6';

/** The CLB's address as seen by nodes and Services (IPv6 CLBs have no IPv4 VIP). */
export const primaryVip = (lb: LoadBalancerRecord): string => lb.LoadBalancerVips[0] ?? lb.AddressIPv6 ?? '';
