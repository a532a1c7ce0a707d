// The desired state a target's mitigation should reach, and the ordered changes from the observed state to it. A
// `desired` value of undefined means "not managed": left, or its recorded original restored if loopguard changed it.
import type { SourceIpType } from '../api/annotations.js';
import type { SourceSwitch } from '../api/loopbackpolicy.js';
import type { ListenerFacts, RuleFacts } from './facts.js';

/** A listener's or rule's health-check source, as observed and as loopguard wants it (absent: not managed). */
interface SourceState {
  currentSourceIpType: SourceIpType;
  desiredSourceIpType?: SourceIpType;
}

export interface L4ListenerState extends Pick<ListenerFacts, 'listenerId' | 'protocol' | 'port'>, SourceState {}

export interface L4DesiredState {
  layer: 'L4';
  loadBalancerId: string;
  /** The TCP/UDP/TCP_SSL/QUIC listeners that serve the Service's ports. */
  listeners: L4ListenerState[];
  preventLoopback: {
    present: boolean;
    /** Whether loopguard wants `service.cloud.tencent.com/prevent-loopback: "true"` on the Service. */
    desired: boolean;
  };
  /**
   * Who switches the listeners' sources first. `TKE`: on prevent-loopback (the Service's, or loopguard's first with
   * TKEFirst) TKE switches them itself (tencent-cloud.md §9 #1), given a grace period; `loopguard`: before the annotation.
   */
  sourceBy: 'loopguard' | 'TKE';
  /** The policy's l4.sourceSwitch: with `Direct`, a prevent-loopback loopguard added itself asks TKE of nothing. */
  sourceSwitch: SourceSwitch;
}

export interface L7RuleState extends Pick<RuleFacts, 'locationId' | 'domain' | 'url'>, SourceState {
  /** The rule's HealthCheck.HealthSwitch on the CLB (undefined: not reported); the `enable` loopguard declares with the source. */
  currentHealthSwitch?: 0 | 1;
}

export interface L7ListenerState extends Pick<ListenerFacts, 'listenerId' | 'protocol' | 'port'> {
  currentKeepalive: 0 | 1;
  desiredKeepalive?: 0 | 1;
  rules: L7RuleState[];
}

export interface TkeServiceConfigRef {
  name: string;
  /** `Annotation`: named by the user; `Auto`: TKE's `<ingress>-auto-ingress-config`; `ToBeCreated`: loopguard must add the -auto annotation. */
  source: 'Annotation' | 'Auto' | 'ToBeCreated';
}

export interface L7DesiredState {
  layer: 'L7';
  loadBalancerId: string;
  tkeServiceConfig: TkeServiceConfigRef;
  listeners: L7ListenerState[];
  /** `declared`: the Ingress's `ingress.cloud.tencent.com/pass-to-target` value, TKE's interface for the attribute. */
  passToTarget: { current?: boolean; desired?: boolean; declared?: string };
}

export type DesiredState = L4DesiredState | L7DesiredState;

export type Change =
  | { action: 'SetListenerHealthCheckSource'; listenerId: string; protocol: string; port: number; from: SourceIpType; to: SourceIpType }
  | { action: 'AddPreventLoopbackAnnotation' }
  | { action: 'AddTkeServiceConfigAuto'; configName: string }
  | { action: 'SetLoadBalancerPassToTarget'; from: boolean | undefined; to: boolean }
  | { action: 'SetListenerKeepalive'; listenerId: string; protocol: string; port: number; from: 0 | 1; to: 0 | 1 }
  | { action: 'SetRuleHealthCheckSource'; listenerId: string; locationId: string; domain: string; url: string; from: SourceIpType; to: SourceIpType };

const SOURCE_NAME: Record<SourceIpType, string> = { 0: 'VIP', 1: '100.64.0.0/10' };

/** One line per change for status.targets[].plan and Events. */
export function describeChange(change: Change): string {
  switch (change.action) {
    case 'SetListenerHealthCheckSource':
      return `listener ${change.listenerId} (${change.protocol}:${change.port}): health-check source ${SOURCE_NAME[change.from]} -> ${SOURCE_NAME[change.to]}`;
    case 'AddPreventLoopbackAnnotation':
      return 'annotate service.cloud.tencent.com/prevent-loopback: "true"';
    case 'AddTkeServiceConfigAuto':
      return `annotate ingress.cloud.tencent.com/tke-service-config-auto: "true" (TKE creates ${change.configName})`;
    case 'SetLoadBalancerPassToTarget':
      return `CLB LoadBalancerPassToTarget ${String(change.from ?? 'unknown')} -> ${String(change.to)}`;
    case 'SetListenerKeepalive':
      return `listener ${change.listenerId} (${change.protocol}:${change.port}): keepaliveEnable ${change.from} -> ${change.to}`;
    case 'SetRuleHealthCheckSource':
      return `rule ${change.locationId} (${change.domain || '<default>'}${change.url}): health-check source ${SOURCE_NAME[change.from]} -> ${SOURCE_NAME[change.to]}`;
  }
}

/** A CLB HealthCheck.SourceIpType as observed; absent means the CLB default, the VIP. */
export function sourceIpTypeOf(value: number | undefined): SourceIpType {
  return value === 1 ? 1 : 0;
}
