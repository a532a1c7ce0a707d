// What loopguard needs from the CLB API, in domain terms. Everything above src/cloud talks to this
// interface; the Tencent implementation (tencent-clb-client.ts) does batching, pagination, budgets,
// retries, per-CLB write serialization and task polling behind it. The one SDK shape kept as is:
// `HealthCheck`, because a write must send back the full struct that was read, unchanged except for
// the field loopguard manages: whether the CLB resets omitted fields is not documented (tencent-cloud.md §3, §8
// open question 4), and the full struct is right either way (the emulator takes the strict reading, health-check.ts).
import type { HealthCheck } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';

export type { HealthCheck };

export type LoadBalancerType = 'OPEN' | 'INTERNAL';
export type IpVersion = 'IPv4' | 'IPv6';

export interface LoadBalancerInfo {
  loadBalancerId: string;
  name: string;
  /** `OPEN` (public) or `INTERNAL` (private). */
  type: LoadBalancerType | string;
  /** `IPv6` for both NAT64 and full-chain CLBs (no 100.64 health-check source, no PassToTarget). */
  ipVersion: IpVersion;
  /** The API's value as returned: `IPV4`, `IPV6`, `IPv6FullChain` (casing varies). */
  addressIpVersion: string;
  /** IPv4 VIPs; empty for IPv6 CLBs. */
  vips: string[];
  ipv6Address?: string;
  /** 0 = creating, 1 = running. */
  status: number;
  /** 1 = CLB, 0 = classic CLB. */
  forward: number;
  vpcId?: string;
  subnetId?: string;
  tags: Record<string, string>;
  /** `LoadBalancerPassToTarget`: backends' security groups are not checked for CLB traffic. */
  passToTarget: boolean;
  clusterIds: string[];
}

export interface RuleInfo {
  locationId: string;
  domain: string;
  url: string;
  /** The rule's full health check, as returned (null fields dropped). */
  healthCheck?: HealthCheck;
}

export interface ListenerInfo {
  listenerId: string;
  name: string;
  protocol: string;
  port: number;
  /** L4 listeners only (TCP/UDP/TCP_SSL/QUIC); L7 health checks are per rule. */
  healthCheck?: HealthCheck;
  /** L7 listeners: 1 = keepalive (and SNAT) between CLB and backends. */
  keepaliveEnable?: number;
  /** L7 listeners only. */
  rules: RuleInfo[];
}

export type TargetHealthStatus = 'Alive' | 'Dead' | 'Unknown' | 'Close';

export interface TargetHealthInfo {
  ip: string;
  port: number;
  healthy: boolean;
  /** `Alive` | `Dead` | `Unknown` | `Close` (health check off); other strings passed through. */
  status: TargetHealthStatus | string;
  targetId?: string;
  weight?: number;
}

export interface RuleHealthInfo {
  /** For L4 listeners the CLB reports one pseudo-rule. */
  locationId: string;
  domain?: string;
  url?: string;
  targets: TargetHealthInfo[];
}

export interface ListenerHealthInfo {
  listenerId: string;
  protocol: string;
  port: number;
  rules: RuleHealthInfo[];
}

export interface LoadBalancerHealthInfo {
  loadBalancerId: string;
  listeners: ListenerHealthInfo[];
}

export interface DescribeListenersOptions {
  listenerIds?: string[];
  protocol?: string;
  port?: number;
}

export interface CallOptions {
  /** Aborts waiting, retries and the HTTP request (the shutdown grace period ended). */
  signal?: AbortSignal;
  /**
   * Writes only, shutdown began: a write not submitted yet when it aborts (waiting for the CLB's previous
   * write, a slot or the budget) is dropped (ClbError `Aborted`); a submitted one runs on, its task awaited,
   * until `signal` aborts.
   */
  stopping?: AbortSignal;
  /**
   * Writes only: asked right before each submission (the leader's fence, LeaderElector.mayWrite). false: the
   * write is not sent (ClbError `Aborted`).
   */
  mayWrite?: () => boolean;
}

export interface WriteResult {
  /** RequestId of the accepted write = TaskId of its async task. */
  taskId: string;
  /** Submissions it took (a failed task or a busy CLB means another). */
  attempts: number;
}

export interface ClbClient {
  /** CLBs by id, batched by 20 ids per call; ids that do not exist are simply absent from the result. */
  describeLoadBalancers(ids: readonly string[], options?: CallOptions): Promise<LoadBalancerInfo[]>;
  /** CLBs whose IPv4 VIP or IPv6 address is in `vips` (e.g. from a Service's status), paginated. */
  describeLoadBalancersByVip(vips: readonly string[], options?: CallOptions): Promise<LoadBalancerInfo[]>;
  /** Listeners of one CLB with health checks and L7 rules. Unknown CLB → ClbError reason ClbNotFound. */
  describeListeners(loadBalancerId: string, options?: DescribeListenersOptions & CallOptions): Promise<ListenerInfo[]>;
  /** Backend health, batched by 30 CLBs per call; CLBs that do not exist are absent from the result. */
  describeTargetHealth(loadBalancerIds: readonly string[], options?: CallOptions): Promise<LoadBalancerHealthInfo[]>;

  // Writes. Each resolves once the CLB's async task is proven to have succeeded (DescribeTaskStatus = 0, or a listener
  // read that shows the write, src/cloud/proof.ts); writes to one CLB are serialized, to different CLBs concurrent
  // (bounded). Failures are ClbErrors.

  /** ModifyListener with the listener's FULL health check (L4 listeners; full, so no field depends on merge-or-reset). */
  modifyListenerHealthCheck(loadBalancerId: string, listenerId: string, healthCheck: HealthCheck, options?: CallOptions): Promise<WriteResult>;
  /** ModifyRule with the rule's FULL health check (L7 rules). */
  modifyRuleHealthCheck(
    loadBalancerId: string,
    listenerId: string,
    locationId: string,
    healthCheck: HealthCheck,
    options?: CallOptions,
  ): Promise<WriteResult>;
  /** ModifyListener KeepaliveEnable (HTTP/HTTPS listeners; needs the L7 SNAT + keepalive capability to enable). */
  modifyListenerKeepalive(loadBalancerId: string, listenerId: string, enable: boolean, options?: CallOptions): Promise<WriteResult>;
  /** ModifyLoadBalancerAttributes LoadBalancerPassToTarget (IPv4 CLBs only). */
  modifyLoadBalancerPassToTarget(loadBalancerId: string, enable: boolean, options?: CallOptions): Promise<WriteResult>;

  /**
   * While `action` is congested (its adaptive rate cut below the budget, or started below it on evidence of contention): waits until its budget
   * allows a call and spends it without calling; otherwise returns at once. For the calls a change of loopguard's makes
   * TKE's controllers send on the same account quota (an annotated Service or an edited TkeServiceConfig is synced, and
   * the sync reads the CLB): when the quota is congested they slow down with loopguard's own calls of that action
   * (adaptive-rate.ts) instead of adding TKE's reads on top at full speed; when it is not, they cost loopguard nothing.
   */
  reserve(action: string, options?: CallOptions): Promise<void>;

  /** Stops timers and rejects queued calls (AbortError); in-flight calls finish or abort by their signal. */
  close(): Promise<void>;
}

/**
 * The read side of the CLB API: all the observer needs, and all `loopguard doctor` holds, so that a read-only scan
 * cannot write by construction (CAM: clb:DescribeLoadBalancers, clb:DescribeListeners, clb:DescribeTargetHealth).
 */
export type ClbReader = Pick<ClbClient, 'describeLoadBalancers' | 'describeListeners' | 'describeTargetHealth'>;

/** The health check to write for a source switch: everything as read, only `SourceIpType` changed. */
export function withSourceIpType(healthCheck: HealthCheck, sourceIpType: 0 | 1): HealthCheck {
  return { ...healthCheck, SourceIpType: sourceIpType };
}
