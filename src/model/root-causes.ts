// The root-cause catalogue: every CamelCase id the assessment can report, the one verdict it belongs
// to, and the rule it rests on. docs/diagnosis.md mirrors this table (with the sources); a unit test
// checks that every assessment's verdict matches its root cause here.
import type { Verdict } from '../api/loopbackpolicy.js';

export const ROOT_CAUSES = {
  // Skipped
  SkipAnnotation: { verdict: 'Skipped', summary: 'loopguard.dev/skip opts the target out' },
  TkeSyncSkipped: { verdict: 'Skipped', summary: "TKE's controller is told to skip the target (<kind>/mode: skip)" },
  EnvoyGatewayService: { verdict: 'Skipped', summary: 'Envoy Gateway generated the Service for a Gateway, which is the target (targets: [Gateway])' },
  // Conflict
  PolicyConflict: { verdict: 'Conflict', summary: 'an older policy of the same kind already manages the target' },
  PolicyPrecedence: { verdict: 'Conflict', summary: "a policy that ranks first manages the target: one in Enforce before one in Audit, else the other kind by the cluster policy's precedence" },
  SharedEnvoyProxy: { verdict: 'Conflict', summary: "the Gateway's EnvoyProxy is other Gateways' too: a change there reaches their Services" },
  GatewayServiceAmbiguous: { verdict: 'Conflict', summary: "several Services carry Envoy Gateway's labels for the Gateway: which CLB is its cannot be told" },
  ForeignClb: { verdict: 'Conflict', summary: "the CLB id on the target names a CLB that is not the target's (TKE's owner tag or the status VIP disagree)" },
  SharedConfig: { verdict: 'Conflict', summary: 'the TkeServiceConfig also governs Ingresses loopguard may not change (opted out, or not managed by this policy)' },
  SharedClb: { verdict: 'Conflict', summary: "other listeners on the Service's CLB health-check from the VIP: prevent-loopback, which binds the whole VIP, is not set" },
  // NotApplicable
  NotLoadBalancerService: { verdict: 'NotApplicable', summary: 'the Service is not of type LoadBalancer: no CLB' },
  NotTkeLoadBalancer: { verdict: 'NotApplicable', summary: 'spec.loadBalancerClass hands the Service to another LB controller' },
  NotClbIngress: { verdict: 'NotApplicable', summary: "the Ingress class is not TKE's CLB class (qcloud)" },
  PublicClb: { verdict: 'NotApplicable', summary: "a public CLB sees the node's public egress IP, which no node holds locally" },
  VipServedLocally: { verdict: 'NotApplicable', summary: 'kube-proxy (iptables/nftables/none) answers the CLB VIP on the node' },
  MasqueradedToNodeIp: { verdict: 'NotApplicable', summary: 'IPVS + externalTrafficPolicy Cluster: calls leave masqueraded to the node IP, which the CLB never sends back to' },
  // Pending
  PolicyHandover: { verdict: 'Pending', summary: 'won by precedence; the policy holding the record gives back its changes first' },
  ClbNotAssigned: { verdict: 'Pending', summary: 'TKE has not written the CLB id yet' },
  GatewayServiceMissing: { verdict: 'Pending', summary: 'Envoy Gateway has not generated the Gateway\'s Service (yet)' },
  ClbNotObserved: { verdict: 'Pending', summary: 'loopguard has not read the CLB yet' },
  ClbNotFound: { verdict: 'Pending', summary: 'the CLB id on the target does not exist (yet)' },
  ClbCreating: { verdict: 'Pending', summary: 'the CLB is still being created' },
  ClbOwnershipUnverified: { verdict: 'Pending', summary: "the CLB has no owner tag and TKE has not published its VIP in the target's status" },
  ListenersNotReady: { verdict: 'Pending', summary: "TKE has not created the listeners for the target's ports yet" },
  // Unsupported
  Ipv6Clb: { verdict: 'Unsupported', summary: 'IPv6 CLBs cannot use the 100.64.0.0/10 health-check source' },
  ClassicClb: { verdict: 'Unsupported', summary: 'classic CLBs are not supported' },
  // AtRisk
  VipHealthCheckDropped: { verdict: 'AtRisk', summary: 'kube-proxy binds the CLB VIP locally and health checks from the VIP are dropped: every backend looks dead' },
  PodSourceNotMasqueraded: { verdict: 'AtRisk', summary: 'IPVS + externalTrafficPolicy Local: the CLB sees the pod IP and may send the call back to its own node' },
  DirectAccessSameNode: { verdict: 'AtRisk', summary: 'direct-access: the CLB may send a call to a backend pod on the caller’s own node' },
  KubeProxyTooOld: { verdict: 'AtRisk', summary: 'loopback possible; kube-proxy is too old to bind the VIP (prevent-loopback)' },
  KubeProxyVersionUnknown: { verdict: 'AtRisk', summary: 'loopback possible; whether kube-proxy supports prevent-loopback is unknown' },
  KubeProxyModeUnknown: { verdict: 'AtRisk', summary: 'loopback possible; the kube-proxy mode is unknown' },
  IpModeProxy: { verdict: 'AtRisk', summary: 'status.loadBalancer.ingress[].ipMode: Proxy: kube-proxy ignores the VIP, so in-cluster calls go through the CLB and can loop back' },
  L7Loopback: { verdict: 'AtRisk', summary: 'private L7 CLB without keepalive/SNAT forwards the pod IP to a node: ~4 s stall or failure' },
  KeepaliveCapabilityMissing: { verdict: 'AtRisk', summary: 'the account lacks the CLB L7 SNAT + keepalive capability' },
  HealthCheckSourceCapabilityMissing: { verdict: 'AtRisk', summary: 'the CLB rejects the 100.64.0.0/10 health-check source' },
  MitigationDisabledByPolicy: { verdict: 'AtRisk', summary: 'the policy turns off the mitigation this target needs' },
  TkeServiceConfigAmbiguous: { verdict: 'AtRisk', summary: 'both tke-service-config and tke-service-config-auto are set' },
  // Mitigated
  LoopbackPrevented: { verdict: 'Mitigated', summary: 'kube-proxy answers the VIP locally and health checks come from 100.64.0.0/10' },
  KeepaliveEnabled: { verdict: 'Mitigated', summary: 'keepalive (SNAT) is on for every L7 listener' },
} as const satisfies Record<string, { verdict: Verdict; summary: string }>;

export type RootCauseId = keyof typeof ROOT_CAUSES;

export interface RootCause {
  id: RootCauseId;
  /** What is wrong and what to do, for status and Events. */
  message: string;
}

export function verdictOf(id: RootCauseId): Verdict {
  return ROOT_CAUSES[id].verdict;
}
