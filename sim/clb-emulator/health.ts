import type { HealthCheckState, ListenerRecord, LoadBalancerRecord, NodeRecord, RuleRecord } from './model.js';
import { primaryVip } from './model.js';

/**
 * Target health, modelling the loopback fault of kubernetes/kubernetes#79783 (tencent-cloud.md §5): in IPVS mode
 * kube-proxy binds the CLB VIP on every node, so a health probe whose *source* is the VIP (`SourceIpType` 0)
 * looks like a martian/local-source packet and is dropped → the target is `Dead`. Probes from 100.64.0.0/10
 * (`SourceIpType` 1) are unaffected → `Alive`.
 *
 * - `HealthSwitch` 0 → `Close` with `HealthStatus` true: the doc says "Close = health check off", and with checks
 *   off CLB forwards to every target.
 * - Within `healthConvergenceMs` after a health-check change → `Unknown`, `HealthStatus` false ("not probed yet").
 * - Targets are the CLB's nodes; the target port is the modelled NodePort `30000 + (listenerPort % 2768)`, which
 *   stays in Kubernetes' default NodePort range 30000–32767.
 */

export interface TargetHealthView {
  IP: string;
  Port: number;
  HealthStatus: boolean;
  TargetId: string;
  HealthStatusDetail: 'Alive' | 'Dead' | 'Unknown' | 'Close';
  Weight: number;
}

export const nodePortFor = (listenerPort: number): number => 30000 + (listenerPort % 2768);

/** One target's health check as the CLB would send it: what an external source of truth needs to probe it. */
export interface TargetProbe {
  loadBalancerId: string;
  vip: string;
  listenerId: string;
  /** L7 rules only. */
  locationId: string | null;
  protocol: ListenerRecord['Protocol'];
  /** Position of the node in the CLB's node list (a lab maps it to one of its nodes). */
  nodeIndex: number;
  nodeIp: string;
  nodePort: number;
  /** The configured source: 0 = the VIP, 1 = 100.64.0.0/10. */
  sourceIpType: number;
  checkType: string;
}

/**
 * Optional emulator mode (`EmulatorOptions.targetHealth`): health from real probes (the data-plane lab,
 * lab/health-oracle.ts) instead of the rule below. Synchronous, like the real API: it answers from the latest probe
 * results and probes in the background.
 */
export type TargetHealthSource = (probe: TargetProbe) => 'Alive' | 'Dead' | 'Unknown';

export function probeTarget(hc: HealthCheckState, node: NodeRecord, changedAtMs: number, nowMs: number, convergenceMs: number, real?: () => 'Alive' | 'Dead' | 'Unknown') {
  if (hc.HealthSwitch === 0) return { HealthStatus: true, HealthStatusDetail: 'Close' as const };
  if (nowMs - changedAtMs < convergenceMs) return { HealthStatus: false, HealthStatusDetail: 'Unknown' as const };
  if (real) {
    const detail = real();
    return { HealthStatus: detail === 'Alive', HealthStatusDetail: detail };
  }
  const dropped = hc.SourceIpType === 0 && node.vipBound;
  return dropped
    ? { HealthStatus: false, HealthStatusDetail: 'Dead' as const }
    : { HealthStatus: true, HealthStatusDetail: 'Alive' as const };
}

export function targetsFor(
  lb: LoadBalancerRecord,
  listener: ListenerRecord,
  rule: RuleRecord | undefined,
  nowMs: number,
  convergenceMs: number,
  source?: TargetHealthSource,
): TargetHealthView[] {
  const hc = rule ? rule.HealthCheck : listener.HealthCheck;
  const changedAt = rule ? rule.healthChangedAtMs : listener.healthChangedAtMs;
  if (!hc) return [];
  return lb.nodes.map((node, nodeIndex) => ({
    IP: node.ip,
    Port: nodePortFor(listener.Port),
    TargetId: node.instanceId,
    // No TargetGroupId: targets are bound directly, and the model does not allow null there.
    Weight: 10,
    ...probeTarget(
      hc,
      node,
      changedAt,
      nowMs,
      convergenceMs,
      source &&
        (() =>
          source({
            loadBalancerId: lb.LoadBalancerId,
            vip: primaryVip(lb),
            listenerId: listener.ListenerId,
            locationId: rule?.LocationId ?? null,
            protocol: listener.Protocol,
            nodeIndex,
            nodeIp: node.ip,
            nodePort: nodePortFor(listener.Port),
            sourceIpType: hc.SourceIpType,
            checkType: hc.CheckType,
          })),
    ),
  }));
}
