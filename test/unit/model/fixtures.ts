// Builders for assessment table tests: plain facts, and cluster profiles produced by the real
// detectClusterProfile from DaemonSets shaped like TKE's, so profile parsing and assessment meet.
import type { RecordOwnership } from '../../../src/model/record-registry.js';
import type { Originals } from '../../../src/api/originals.js';
import { expect } from '@jest/globals';
import { withSpecDefaults, type LoopbackPolicySpec, type Verdict } from '../../../src/api/loopbackpolicy.js';
import type { Assessment, AssessmentContext } from '../../../src/model/assessment.js';
import { detectClusterProfile, type ClusterProfile } from '../../../src/model/cluster-profile.js';
import type { Change } from '../../../src/model/desired-state.js';
import type {
  AccountCapabilities,
  ClbFacts,
  ClbObservation,
  IngressFacts,
  ListenerFacts,
  ServiceFacts,
} from '../../../src/model/facts.js';
import { ROOT_CAUSES, type RootCauseId } from '../../../src/model/root-causes.js';

export function kubeProxyDaemonSet(image: string, args: string[] = []) {
  return {
    metadata: { name: 'kube-proxy', namespace: 'kube-system' },
    spec: { template: { spec: { containers: [{ name: 'kube-proxy', image, command: ['kube-proxy'], args }] } } },
  };
}

const TKE = 'ccr.ccs.tencentyun.com/tkeimages/hyperkube';

export const PROFILES = {
  ipvsNew: detectClusterProfile({ daemonSet: kubeProxyDaemonSet(`${TKE}:v1.20.6-tke.12`, ['--proxy-mode=ipvs']) }),
  ipvsOld: detectClusterProfile({ daemonSet: kubeProxyDaemonSet(`${TKE}:v1.18.4-tke.19`, ['--proxy-mode=ipvs']) }),
  ipvsVersionUnknown: detectClusterProfile({ daemonSet: kubeProxyDaemonSet(`${TKE}:latest`, ['--proxy-mode=ipvs']) }),
  ipvsUpstream: detectClusterProfile({ daemonSet: kubeProxyDaemonSet('registry.k8s.io/kube-proxy:v1.30.2', ['--proxy-mode=ipvs']) }),
  iptables: detectClusterProfile({ daemonSet: kubeProxyDaemonSet(`${TKE}:v1.20.6-tke.12`, ['--proxy-mode=iptables']) }),
  nftables: detectClusterProfile({ daemonSet: kubeProxyDaemonSet('registry.k8s.io/kube-proxy:v1.33.1', ['--proxy-mode=nftables']) }),
  none: detectClusterProfile({ flags: { kubeProxyMode: 'none' } }),
  unknown: detectClusterProfile({}),
} satisfies Record<string, ClusterProfile>;

export type ProfileName = keyof typeof PROFILES;

export function listener(id: string, protocol: string, port: number, extra: Partial<ListenerFacts> = {}): ListenerFacts {
  return { listenerId: id, protocol, port, ...extra };
}

export function l4Listener(id: string, protocol: string, port: number, sourceIpType: 0 | 1, extra: Partial<ListenerFacts> = {}): ListenerFacts {
  return listener(id, protocol, port, { healthCheck: { sourceIpType }, ...extra });
}

export function clb(extra: Partial<ClbFacts> = {}): ClbFacts {
  return {
    loadBalancerId: 'lb-abc',
    loadBalancerType: 'INTERNAL',
    addressIpVersion: 'IPV4',
    vips: ['10.0.0.10'],
    status: 1,
    forward: 1,
    listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0)],
    ...extra,
  };
}

export function service(extra: Partial<ServiceFacts> = {}, annotations: Record<string, string> = {}): ServiceFacts {
  return {
    kind: 'Service',
    namespace: 'shop',
    name: 'web',
    type: 'LoadBalancer',
    ports: [{ port: 80, protocol: 'TCP' }],
    externalTrafficPolicy: 'Cluster',
    // TKE publishes the CLB's VIP in status: the CLB is the Service's own (src/model/clb-ownership.ts).
    loadBalancerIps: ['10.0.0.10'],
    ...extra,
    annotations: { 'service.kubernetes.io/loadbalance-id': 'lb-abc', ...annotations },
  };
}

export function ingress(extra: Partial<IngressFacts> = {}, annotations: Record<string, string> = {}): IngressFacts {
  return {
    kind: 'Ingress',
    namespace: 'shop',
    name: 'front',
    rules: [{ host: 'shop.example.com', paths: ['/'] }],
    tls: true,
    loadBalancerIps: ['10.0.0.10'],
    ...extra,
    annotations: { 'kubernetes.io/ingress.qcloud-loadbalance-id': 'lb-ing', ...annotations },
  };
}

export function context(opts: {
  profile?: ProfileName | ClusterProfile;
  policy?: LoopbackPolicySpec;
  clb?: ClbFacts | ClbObservation;
  capabilities?: AccountCapabilities;
}): AssessmentContext {
  const c = opts.clb ?? clb();
  const observation: ClbObservation = 'state' in c ? c : { state: 'Found', clb: c };
  const profile = typeof opts.profile === 'string' || opts.profile === undefined ? PROFILES[opts.profile ?? 'ipvsNew'] : opts.profile;
  return {
    policy: withSpecDefaults(opts.policy),
    profile,
    clb: observation,
    ...(opts.capabilities ? { capabilities: opts.capabilities } : {}),
  };
}

/** What the Service and Ingress assessment tables share: the world a row sets up and what it expects. */
export interface AssessRow {
  name: string;
  annotations?: Record<string, string>;
  clb?: Partial<ClbFacts> | ClbObservation;
  profile?: ProfileName;
  policy?: LoopbackPolicySpec;
  capabilities?: AccountCapabilities;
  verdict: Verdict;
  rootCause: RootCauseId;
  changes?: string[];
  message?: RegExp;
  blocker?: string;
}

/** The context a row describes; `clbDefaults` fill the CLB fields the row leaves out. */
export function rowContext(row: AssessRow, clbDefaults: Partial<ClbFacts> = {}): AssessmentContext {
  const observed = row.clb && 'state' in row.clb ? row.clb : clb({ ...clbDefaults, ...row.clb });
  return context({ ...row, clb: observed });
}

/** The checks every row gets: verdict and root cause (consistent with the catalogue), plan, message, blockers. */
export function expectRow(a: Assessment, row: AssessRow): void {
  expect({ verdict: a.verdict, rootCause: a.rootCause.id }).toEqual({ verdict: row.verdict, rootCause: row.rootCause });
  expect(ROOT_CAUSES[a.rootCause.id].verdict).toBe(a.verdict);
  if (row.changes) expect(a.changes.map(short)).toEqual(row.changes);
  if (row.message) expect(a.rootCause.message).toMatch(row.message);
  if (row.blocker) expect(a.blockers.map((b) => b.reason)).toContain(row.blocker);
  else expect(a.blockers).toEqual([]);
}

/** Compact, order-preserving form of a plan for table expectations. */
export function short(change: Change): string {
  switch (change.action) {
    case 'SetListenerHealthCheckSource':
      return `src:${change.listenerId}:${change.from}->${change.to}`;
    case 'AddPreventLoopbackAnnotation':
      return 'annotate';
    case 'AddTkeServiceConfigAuto':
      return `auto:${change.configName}`;
    case 'SetLoadBalancerPassToTarget':
      return 'passToTarget';
    case 'SetListenerKeepalive':
      return `keepalive:${change.listenerId}`;
    case 'SetRuleHealthCheckSource':
      return `rule:${change.locationId}:${change.from}->${change.to}`;
  }
}

/**
 * Plan tables write a target's registry entry as the two pseudo-annotations `loopguard.dev/originals` and
 * `loopguard.dev/policy` (readable in a row); this splits them into the target's real annotations and the
 * ownership the planner reads from the LoopbackRecord.
 */
export function registryView(annotations: Record<string, string> | undefined): { annotations: Record<string, string>; ownership: RecordOwnership } {
  const { 'loopguard.dev/originals': originals, 'loopguard.dev/policy': owner, ...rest } = annotations ?? {};
  return { annotations: rest, ownership: { ...(originals ? { originals: JSON.parse(originals) as Originals } : {}), ...(owner ? { owner } : {}) } };
}
