/**
 * JSON shapes of the admin API (`/_admin/*`), shared by the server (admin.ts) and the typed client
 * (admin-client.ts). Type-only: importing this file pulls in no server code.
 */
import type { Capabilities } from './capabilities.js';
import type { HealthCheckState, ListenerProtocol, LoadBalancerRecord, TagInfo } from './model.js';
import type { TaskView } from './tasks.js';

export type { AccountProfile, Capabilities } from './capabilities.js';
export type { HealthCheckState, ListenerProtocol, ListenerRecord, LoadBalancerRecord, NodeRecord, RuleRecord, TagInfo } from './model.js';
export type { TaskView } from './tasks.js';

/** Runtime-tunable settings (`GET/PUT /_admin/config`; PUT merges top-level keys, `rpsPerAction` is replaced). */
export interface EmulatorConfig {
  taskDurationMs: number;
  rps: number;
  rpsPerAction: Record<string, number>;
  healthConvergenceMs: number;
}

export type FaultKind = 'error' | 'http5xx' | 'reset' | 'latency' | 'taskFailure';

export interface FaultRule {
  /** `"*"` or an action name, e.g. `"ModifyListener"`. */
  action: string;
  /** Probability in [0, 1] per matching request. */
  rate: number;
  kind: FaultKind;
  /** `error`: the API error code (default `InternalError`). */
  code?: string;
  /** `error`/`taskFailure`: message / task Message. */
  message?: string;
  /** `latency`: added delay before the request is processed. */
  latencyMs?: number;
  /** `http5xx`: HTTP status (default 503). */
  status?: number;
  /** Only requests that name this CLB (`LoadBalancerId` or one of `LoadBalancerIds`); default every request. */
  loadBalancerId?: string;
  /** Only requests signed by this caller (its `callers` name, e.g. `tke`); default every caller. */
  caller?: string;
}

export interface FaultPlan {
  /** RNG seed; defaults to the emulator's `faultSeed`. Setting a plan always restarts the RNG. */
  seed?: number;
  rules: FaultRule[];
}

/** Outcome of one call in `byCaller`: `OK`, or the error code (`HTTP<status>` / `ConnectionReset` for transport faults). */
export type CallOutcome = string;

export interface StatsSnapshot {
  calls: Record<string, number>;
  /**
   * Every call of `calls`, by caller (the `callers` name of its SecretId, `(unauthenticated)` when it did not
   * authenticate), action and outcome: `byCaller.loopguard.ModifyListener.OK`.
   */
  byCaller: Record<string, Record<string, Record<CallOutcome, number>>>;
  throttled: Record<string, number>;
  errors: Record<string, Record<string, number>>;
  /** Accepted ModifyListener calls, key `lb-x/lbl-y`. */
  listenerWrites: Record<string, number>;
  /** Accepted ModifyRule calls, key `lb-x/lbl-y/loc-z`. */
  ruleWrites: Record<string, number>;
  tasks: { started: number; succeeded: number; failed: number };
}

export type WriteLogStatus = 'running' | 'succeeded' | 'failed';

/** One accepted ModifyListener/ModifyRule in the write log (`GET /_admin/writes`, write-log.ts). */
export interface WriteLogEntry {
  /** 1, 2, …: the order the emulator accepted the writes in. */
  seq: number;
  /** The caller name of the SecretId that sent it (see `callers`). */
  caller: string;
  action: 'ModifyListener' | 'ModifyRule';
  loadBalancerId: string;
  listenerId: string;
  /** ModifyRule's rule; null for ModifyListener. */
  locationId: string | null;
  /** = the RequestId the write was answered with. */
  taskId: string;
  acceptedAtMs: number;
  finishedAtMs: number | null;
  status: WriteLogStatus;
  /**
   * Fields the task changed when it completed (`HealthCheck.SourceIpType`, `KeepaliveEnable`, …); empty while it
   * runs, when it failed, and when it wrote the values already there. Effective write = succeeded with changes.
   */
  changed: string[];
}

/** `GET /_admin/callers`: who may call, without the keys. */
export interface CallerView {
  caller: string;
  secretId: string;
}

export interface AdminLoadBalancer extends LoadBalancerRecord {
  /** TaskId of the running task holding this CLB's lock, if any. */
  lockedByTask: string | null;
}

export interface AdminState {
  region: string;
  loadBalancers: AdminLoadBalancer[];
  tasks: TaskView[];
}

export interface NodeSpec {
  ip: string;
  instanceId?: string;
  vipBound?: boolean;
}

/** Health-check fields for seeds and drift patches; missing fields keep defaults (seed) or current values (patch). */
export type HealthCheckPatch = Partial<HealthCheckState>;

export interface SeedRule {
  LocationId?: string;
  /** Defaults to the CLB's VIP (TKE's `domain: ""`). */
  Domain?: string;
  Url: string;
  ForwardType?: 'HTTP' | 'HTTPS' | 'GRPC';
  HealthCheck?: HealthCheckPatch;
}

export interface SeedListener {
  ListenerId?: string;
  ListenerName?: string;
  Protocol: ListenerProtocol;
  Port: number;
  HealthCheck?: HealthCheckPatch;
  KeepaliveEnable?: number;
  SnatEnable?: boolean;
  Rules?: SeedRule[];
}

export interface SeedLoadBalancer {
  LoadBalancerId?: string;
  LoadBalancerName?: string;
  /** Default `INTERNAL` for IPv4, `OPEN` for IPv6 (IPv6 CLBs are public-only; INTERNAL + IPv6 is a 400). */
  LoadBalancerType?: 'OPEN' | 'INTERNAL';
  /** Default `IPV4`. */
  AddressIPVersion?: 'IPV4' | 'IPV6' | 'IPv6FullChain';
  /** IPv4 VIP; allocated when omitted. */
  Vip?: string;
  /** IPv6 address (IPv6 CLBs); allocated when omitted. */
  AddressIPv6?: string;
  VpcId?: string;
  SubnetId?: string;
  Tags?: TagInfo[];
  ClusterIds?: string[];
  LoadBalancerPassToTarget?: boolean;
  DeleteProtect?: boolean;
  /** Default: three nodes 10.0.1.1–3. */
  nodes?: NodeSpec[];
  /** Marks the VIP bound on every node (overrides per-node `vipBound`). */
  vipBound?: boolean;
  Listeners?: SeedListener[];
}

export interface ListenerPatch {
  ListenerName?: string;
  /** Merged into the current health check (a console user editing fields), not reset. L4 only. */
  HealthCheck?: HealthCheckPatch;
  KeepaliveEnable?: number;
  SnatEnable?: boolean;
}

export interface RulePatch {
  Url?: string;
  Domain?: string;
  HealthCheck?: HealthCheckPatch;
}

export interface VipBoundRequest {
  bound: boolean;
  /** Node IPs to change; default all nodes of the CLB. */
  nodes?: string[];
}

export interface AdminErrorBody {
  error: string;
}

export type CapabilitiesPatch = Partial<Capabilities>;
