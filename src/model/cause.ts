// A root cause as decided, before any prose: its id (root-causes.ts) and the facts its message speaks of; cause-text.ts
// renders it. docs/diagnosis.md §4–§6 has the rules, §9 the messages.
import type { ResolvedPolicySpec, TargetKind } from '../api/loopbackpolicy.js';
import type { ClusterProfile } from './cluster-profile.js';
import type { TkeServiceConfigRef } from './desired-state.js';
import type { ListenerFacts } from './facts.js';

/** The gates both kinds pass first (docs/diagnosis.md §4): nothing about loopback is concluded yet. */
export type GateCause =
  | { id: 'SkipAnnotation' }
  | { id: 'TkeSyncSkipped'; kind: TargetKind }
  | { id: 'NotLoadBalancerService'; type: string }
  /** A Service Envoy Gateway generated (`generatedFor`: "Gateway ns/name" or "GatewayClass name"): its Gateway is the target. */
  | { id: 'EnvoyGatewayService'; generatedFor: string }
  /** `namespace`: EG's, where it generates the Service by default. */
  | { id: 'GatewayServiceMissing'; className: string; namespace: string }
  | { id: 'GatewayServiceAmbiguous'; services: readonly string[] }
  | { id: 'NotTkeLoadBalancer'; loadBalancerClass: string }
  | { id: 'NotClbIngress'; ingressClass: string }
  | { id: 'ClbNotAssigned'; idAnnotation: string }
  /** `notAnId`: the annotation's value, when it is not a CLB id at all. */
  | { id: 'ClbNotFound'; lb: string; idAnnotation: string; notAnId?: string }
  | { id: 'ClbNotObserved' | 'ClbCreating' | 'ClassicClb'; lb: string }
  | { id: 'ForeignClb'; lb: string; idAnnotation: string; why: string }
  | { id: 'ClbOwnershipUnverified'; lb: string; kind: TargetKind; why: string }
  /** `missing`: the Service ports without a listener (`80/TCP`); absent for an Ingress (no HTTP/HTTPS listener). */
  | { id: 'ListenersNotReady'; lb: string; missing?: readonly string[] };

/** Why a call reaching the CLB keeps the pod IP: ETP Local (IPVS skips the masquerade) or direct-access. */
export type LoopFactor = 'PodSourceNotMasqueraded' | 'DirectAccessSameNode';

/** Why kube-proxy answers the VIP on the node: an upstream build, TKE's prevent-loopback, or all-Dead evidence. */
export type BoundBy = { by: 'Upstream' } | { by: 'Annotation' } | { by: 'DeadBackends'; listenerIds: readonly string[] };

/** What the L4 plan does, for the message: switch VIP-sourced listeners (by TKE first, or loopguard), then annotate. */
export interface L4PlanSummary {
  switchBy?: 'TKE' | 'loopguard';
  annotate: boolean;
}

/** What the message about a VIP health-check drop offers as the fix. */
export type DropFix = 'Ipv6' | 'Blocked' | 'Planned' | 'PolicyForbids';

/** The facts every L4 message after the listener match may name. */
export interface L4Scene {
  lb: string;
  public: boolean;
  vip: string;
  profile: ClusterProfile;
  /** The Service's own listeners (a shared CLB may hold other targets' too), and those that health-check from the VIP. */
  listeners: readonly ListenerFacts[];
  vipSourced: readonly ListenerFacts[];
  /** Ports served by L7 listeners (specify-protocol), noted and not assessed. */
  servedByL7: readonly string[];
}

/** The L4 rules L4-1 … L4-11 (docs/diagnosis.md §5), one variant per message. */
export type L4Rule =
  | { id: 'VipHealthCheckDropped'; boundBy: BoundBy; fix: DropFix }
  | { id: 'PublicClb' }
  | { id: 'MitigationDisabledByPolicy'; factor: LoopFactor; l4: ResolvedPolicySpec['l4'] }
  | { id: LoopFactor; plan: L4PlanSummary }
  | { id: 'KubeProxyTooOld'; factor: LoopFactor; always: boolean; plan: L4PlanSummary }
  | { id: 'KubeProxyVersionUnknown'; factor: LoopFactor; plan: L4PlanSummary }
  /** The questions left open: whether calls loop (`loop`, with its factor) and whether health checks drop. */
  | { id: 'KubeProxyModeUnknown' | 'KubeProxyVersionUnknown'; open: { loop?: LoopFactor; drop: boolean }; plan: L4PlanSummary }
  | { id: 'LoopbackPrevented'; boundBy: BoundBy }
  | { id: 'VipServedLocally' }
  | { id: 'MasqueradedToNodeIp' };

/** An L4 cause: L4-0 (ipMode Proxy), a rule, or an at-risk rule the account's capability (L4-13) or IPv6 (L4-12) overrides. */
export type L4Cause = { layer: 'L4'; at: L4Scene } & (
  | { id: 'IpModeProxy' }
  | L4Rule
  | { id: 'HealthCheckSourceCapabilityMissing'; risk: L4Rule; rejected: string }
  | { id: 'Ipv6Clb'; risk: L4Rule; annotationPresent: boolean }
);

/** The advice an L7 plan carries: the CLB's "allow by default" (a value the Ingress declares, or the security group), X-Forwarded-For. */
export interface L7Advice {
  pass?: { declared: string } | 'SecurityGroup';
  xff: boolean;
}

/** The facts every L7 message may name. */
export interface L7Scene {
  lb: string;
  /** L7 listeners without keepalive. */
  noKeepalive: readonly ListenerFacts[];
  directAccess: boolean;
  advice?: L7Advice;
}

/** The L7 rules (docs/diagnosis.md §6), one variant per message. */
export type L7Rule =
  | { id: 'PublicClb' | 'Ipv6Clb' | 'KeepaliveEnabled' | 'MitigationDisabledByPolicy' }
  | { id: 'KeepaliveCapabilityMissing'; rejected: string }
  | { id: 'TkeServiceConfigAmbiguous'; target: { namespace: string; name: string } }
  | { id: 'L7Loopback'; passFirst: boolean; config: TkeServiceConfigRef };

export type L7Cause = { layer: 'L7'; at: L7Scene } & L7Rule;

export type Cause = GateCause | L4Cause | L7Cause;
