// The root-cause catalogue: every id the assessment can report, its one verdict and the rule it rests on
// (docs/diagnosis.md mirrors it, with the sources).
import type { Verdict } from '../api/loopbackpolicy.js';

/** By verdict, so that each root cause names its verdict once. */
const BY_VERDICT = {
  Skipped: {
    SkipAnnotation: 'loopguard.dev/skip opts the target out',
    TkeSyncSkipped: "TKE's controller is told to skip the target (<kind>/mode: skip)",
    EnvoyGatewayService: 'Envoy Gateway generated the Service for a Gateway, which is the target (targets: [Gateway])',
  },
  Conflict: {
    PolicyConflict: 'an older policy of the same kind already manages the target',
    PolicyPrecedence: "a policy that ranks first manages the target: one in Enforce before one in Audit, else the other kind by the cluster policy's precedence",
    SharedEnvoyProxy: "the Gateway's EnvoyProxy is other Gateways' too: a change there reaches their Services",
    GatewayServiceAmbiguous: "several Services carry Envoy Gateway's labels for the Gateway: which CLB is its cannot be told",
    ForeignClb: "the CLB id on the target names a CLB that is not the target's (TKE's owner tag or the status VIP disagree)",
    SharedConfig: 'the TkeServiceConfig also governs Ingresses loopguard may not change (opted out, or not managed by this policy)',
    SharedClb: "other listeners on the Service's CLB health-check from the VIP: prevent-loopback, which binds the whole VIP, is not set",
  },
  NotApplicable: {
    NotLoadBalancerService: 'the Service is not of type LoadBalancer: no CLB',
    NotTkeLoadBalancer: 'spec.loadBalancerClass hands the Service to another LB controller',
    NotClbIngress: "the Ingress class is not TKE's CLB class (qcloud)",
    PublicClb: "a public CLB sees the node's public egress IP, which no node holds locally",
    VipServedLocally: 'kube-proxy (iptables/nftables/none) answers the CLB VIP on the node',
    MasqueradedToNodeIp: 'IPVS + externalTrafficPolicy Cluster: calls leave masqueraded to the node IP, which the CLB never sends back to',
  },
  Pending: {
    PolicyHandover: 'won by precedence; the policy holding the record gives back its changes first',
    ClbNotAssigned: 'TKE has not written the CLB id yet',
    GatewayServiceMissing: 'Envoy Gateway has not generated the Gateway\'s Service (yet)',
    ClbNotObserved: 'loopguard has not read the CLB yet',
    ClbNotFound: 'the CLB id on the target does not exist (yet)',
    ClbCreating: 'the CLB is still being created',
    ClbOwnershipUnverified: "the CLB has no owner tag and TKE has not published its VIP in the target's status",
    ListenersNotReady: "TKE has not created the listeners for the target's ports yet",
  },
  Unsupported: {
    Ipv6Clb: 'IPv6 CLBs cannot use the 100.64.0.0/10 health-check source',
    ClassicClb: 'classic CLBs are not supported',
  },
  AtRisk: {
    VipHealthCheckDropped: 'kube-proxy binds the CLB VIP locally and health checks from the VIP are dropped: every backend looks dead',
    PodSourceNotMasqueraded: 'IPVS + externalTrafficPolicy Local: the CLB sees the pod IP and may send the call back to its own node',
    DirectAccessSameNode: 'direct-access: the CLB may send a call to a backend pod on the caller’s own node',
    KubeProxyTooOld: 'loopback possible; kube-proxy is too old to bind the VIP (prevent-loopback)',
    KubeProxyVersionUnknown: 'loopback possible; whether kube-proxy supports prevent-loopback is unknown',
    KubeProxyModeUnknown: 'loopback possible; the kube-proxy mode is unknown',
    IpModeProxy: 'status.loadBalancer.ingress[].ipMode: Proxy: kube-proxy ignores the VIP, so in-cluster calls go through the CLB and can loop back',
    L7Loopback: 'private L7 CLB without keepalive/SNAT forwards the pod IP to a node: ~4 s stall or failure',
    KeepaliveCapabilityMissing: 'the account lacks the CLB L7 SNAT + keepalive capability',
    HealthCheckSourceCapabilityMissing: 'the CLB rejects the 100.64.0.0/10 health-check source',
    MitigationDisabledByPolicy: 'the policy turns off the mitigation this target needs',
    TkeServiceConfigAmbiguous: 'both tke-service-config and tke-service-config-auto are set',
  },
  Mitigated: {
    LoopbackPrevented: 'kube-proxy answers the VIP locally and health checks come from 100.64.0.0/10',
    KeepaliveEnabled: 'keepalive (SNAT) is on for every L7 listener',
  },
} as const satisfies Partial<Record<Verdict, Record<string, string>>>;

type ByVerdict = typeof BY_VERDICT;
export type RootCauseId = { [V in keyof ByVerdict]: keyof ByVerdict[V] }[keyof ByVerdict];

export const ROOT_CAUSES = Object.fromEntries(
  Object.entries(BY_VERDICT).flatMap(([verdict, causes]) => Object.entries(causes).map(([id, summary]) => [id, { verdict, summary }])),
) as Readonly<Record<RootCauseId, { verdict: Verdict; summary: string }>>;

export interface RootCause {
  id: RootCauseId;
  /** What is wrong and what to do, for status and Events. */
  message: string;
}

export function verdictOf(id: RootCauseId): Verdict {
  return ROOT_CAUSES[id].verdict;
}
