// What the reconcilers share. One object, built once by the simulator, passed explicitly (no globals).
import type { ClbApi } from './clb-api.js';
import type { EventRecorder } from './events.js';
import type { MissingEnableReading } from './health-check-enable.js';
import type { KubeApi } from './kube-api.js';

/** Marks a CLB VIP as bound by kube-proxy on the nodes, in the emulator's health model (admin API). */
export interface VipBinder {
  setVipBound(loadBalancerId: string, bound: boolean): Promise<void>;
}

/**
 * The health-check source the CLB account gives a check when nobody chooses one (tencent-cloud.md §9 #3: 1 for accounts
 * new to CLB since 2023-02-24, else 0). An account property TKE knows and the CLB API does not report; the
 * simulator reads it from the emulator's admin API.
 */
export interface AccountDefaults {
  defaultSourceIpType(): Promise<number>;
}

/**
 * What TKE's periodic sync re-applies to the listeners it manages: `declared` = only fields a TkeServiceConfig
 * declares; `all` = also the whole health check of its own L4 listeners, back to TKE's view (§9 #2).
 */
export type SyncScope = 'declared' | 'all';
export const SYNC_SCOPES: readonly SyncScope[] = ['declared', 'all'];

export interface SimulatorContext {
  clb: ClbApi;
  vips: VipBinder;
  kube: KubeApi;
  events: EventRecorder;
  /** Written into CLB tags (`tke-clusterId`); only CLBs tagged with it and created-by are ever deleted. */
  clusterId: string;
  vpcId: string;
  /** Newer TKE: prevent-loopback also switches L4 health-check sources to 100.64 (SourceIpType 1). */
  switchHealthCheckSourceOnPreventLoopback: boolean;
  syncScope: SyncScope;
  /** How a TkeServiceConfig `healthCheck` without `enable` is read (health-check-enable.ts). */
  missingHealthCheckEnable: MissingEnableReading;
  account: AccountDefaults;
  log: (line: string) => void;
}
