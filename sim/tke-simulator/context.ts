// What the reconcilers share. One object, built once by the simulator, passed explicitly (no globals).
import type { ClbApi } from './clb-api.js';
import type { EventRecorder } from './events.js';
import type { KubeApi } from './kube-api.js';

/** Marks a CLB VIP as bound by kube-proxy on the nodes, in the emulator's health model (admin API). */
export interface VipBinder {
  setVipBound(loadBalancerId: string, bound: boolean): Promise<void>;
}

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
  log: (line: string) => void;
}
