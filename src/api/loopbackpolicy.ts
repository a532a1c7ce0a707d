// LoopbackPolicy (loopguard.dev/v1alpha1): TypeScript mirror of crds/loopguard.dev_loopbackpolicies.yaml.
// The CRD is the source of truth for validation and defaulting; these types and `withSpecDefaults`
// mirror it so that pure code (and unit tests) can work with objects the apiserver has not defaulted.
import type { Condition } from './conditions.js';

export const GROUP = 'loopguard.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'LoopbackPolicy';
export const PLURAL = 'loopbackpolicies';
export const SINGULAR = 'loopbackpolicy';
export const SHORT_NAME = 'lbp';
/** Finalizer that makes deleting a policy wait until loopguard has reverted what it changed. */
export const FINALIZER = 'loopguard.dev/revert';
/** On a policy being deleted: release the finalizer without restoring (RevertAbandoned Events say what stays). */
export const ABANDON_ANNOTATION = 'loopguard.dev/abandon';
/** Server-side-apply field manager for everything loopguard writes (status, annotations). */
export const FIELD_MANAGER = 'loopguard';
/** Upper bound of `status.targets`; the rest is counted in `status.counts` and flagged as truncated. */
export const MAX_STATUS_TARGETS = 100;

export type PolicyMode = 'Enforce' | 'Audit';
/** `Gateway`: gateway.networking.k8s.io Gateways of Envoy Gateway, diagnosed through the Service it generates (docs/gateways.md). */
export type TargetKind = 'Service' | 'Ingress' | 'Gateway';
/** Each target kind's apiVersion (Events' involvedObject, OpenReports' resources). */
const TARGET_API_VERSION: Readonly<Record<TargetKind, string>> = { Service: 'v1', Ingress: 'networking.k8s.io/v1', Gateway: 'gateway.networking.k8s.io/v1' };

/** A target as an Event's involved object (and an OpenReports result's resource). */
export function involvedObject(t: { kind: TargetKind; namespace: string; name: string }): { apiVersion: string; kind: TargetKind; namespace: string; name: string } {
  return { apiVersion: TARGET_API_VERSION[t.kind], kind: t.kind, namespace: t.namespace, name: t.name };
}

/** `Range100_64` = CLB `HealthCheck.SourceIpType=1`, `VIP` = `SourceIpType=0`, `Unmanaged` = never touched. */
export type HealthCheckSource = 'Range100_64' | 'VIP' | 'Unmanaged';
/** When loopguard may set `service.cloud.tencent.com/prevent-loopback: "true"`. */
export type PreventLoopback = 'Auto' | 'Always' | 'Never';
/**
 * Who switches a Service's health-check sources when loopguard adds prevent-loopback: `Direct` = loopguard
 * (ModifyListener) before the annotation, so health checks never come from a VIP kube-proxy has bound; `TKEFirst` =
 * the annotation first and TKE's service controller switches (tencent-cloud.md §9 #1), loopguard only after the grace
 * period. A Service that already carries prevent-loopback always gets TKE's grace period first.
 */
export type SourceSwitch = 'Direct' | 'TKEFirst';
export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[];
}

/** metav1.LabelSelector; empty or absent selects every Service/Ingress in the policy's namespace. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface L4Spec {
  healthCheckSource?: HealthCheckSource;
  preventLoopback?: PreventLoopback;
  sourceSwitch?: SourceSwitch;
}

export interface L7Spec {
  keepalive?: boolean;
  healthCheckSource?: HealthCheckSource;
  /** Opt-in: turn on the CLB's `LoadBalancerPassToTarget` ("allow traffic from CLB by default"). */
  allowCLBTrafficByDefault?: boolean;
  /** `Managed`: CoreDNS rewrite rules for targets no annotation fixes (docs/dns.md §4); ClusterLoopbackPolicy only (the CRD refuses it on a LoopbackPolicy). */
  inClusterDNS?: InClusterDns;
}

/** `l7.inClusterDNS`: `Unmanaged` leaves DNS alone; `Managed` keeps loopguard's CoreDNS rewrite rules (docs/dns.md). */
export type InClusterDns = 'Unmanaged' | 'Managed';

/**
 * Measuring the targets' private CLB VIPs from every node (docs/probe.md): off by default, and it needs the probe
 * agent installed. Measurement never makes loopguard write anything the model would not.
 */
export interface ProbeSpec {
  enabled?: boolean;
  /** The path of the L7 probe's HEAD request to an Ingress's host. */
  path?: string;
  /** Narrows the kinds probed; absent: the policy's `targets` that the probe measures. */
  targets?: TargetKind[];
}

export interface LoopbackPolicySpec {
  mode?: PolicyMode;
  selector?: LabelSelector;
  targets?: TargetKind[];
  l4?: L4Spec;
  l7?: L7Spec;
  revertOnDelete?: boolean;
  probe?: ProbeSpec;
}

/** The spec after defaulting: what the model works with. */
export interface ResolvedPolicySpec {
  mode: PolicyMode;
  selector: LabelSelector;
  targets: TargetKind[];
  l4: Required<L4Spec>;
  l7: Required<L7Spec>;
  revertOnDelete: boolean;
  probe: Required<ProbeSpec>;
}

export const SPEC_DEFAULTS: Readonly<ResolvedPolicySpec> = Object.freeze<ResolvedPolicySpec>({
  // Safe by default (issue 37): a policy changes CLBs only when it says `mode: Enforce`. Objects created while the
  // CRD defaulted to Enforce had `mode: Enforce` written into them by the apiserver, so they keep enforcing.
  mode: 'Audit',
  selector: {},
  targets: ['Service', 'Ingress'],
  l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto', sourceSwitch: 'Direct' },
  l7: { keepalive: true, healthCheckSource: 'Range100_64', allowCLBTrafficByDefault: false, inClusterDNS: 'Unmanaged' },
  revertOnDelete: true,
  probe: { enabled: false, path: '/', targets: ['Service', 'Ingress'] },
});

/** Applies the CRD's defaults (same values as the schema's `default:`) without mutating the input. */
export function withSpecDefaults(spec: LoopbackPolicySpec | undefined): ResolvedPolicySpec {
  const s = spec ?? {};
  const targets = s.targets && s.targets.length > 0 ? [...s.targets] : [...SPEC_DEFAULTS.targets];
  return {
    mode: s.mode ?? SPEC_DEFAULTS.mode,
    selector: s.selector ?? {},
    targets,
    l4: {
      healthCheckSource: s.l4?.healthCheckSource ?? SPEC_DEFAULTS.l4.healthCheckSource,
      preventLoopback: s.l4?.preventLoopback ?? SPEC_DEFAULTS.l4.preventLoopback,
      sourceSwitch: s.l4?.sourceSwitch ?? SPEC_DEFAULTS.l4.sourceSwitch,
    },
    l7: {
      keepalive: s.l7?.keepalive ?? SPEC_DEFAULTS.l7.keepalive,
      healthCheckSource: s.l7?.healthCheckSource ?? SPEC_DEFAULTS.l7.healthCheckSource,
      allowCLBTrafficByDefault: s.l7?.allowCLBTrafficByDefault ?? SPEC_DEFAULTS.l7.allowCLBTrafficByDefault,
      inClusterDNS: s.l7?.inClusterDNS ?? SPEC_DEFAULTS.l7.inClusterDNS,
    },
    revertOnDelete: s.revertOnDelete ?? SPEC_DEFAULTS.revertOnDelete,
    probe: {
      enabled: s.probe?.enabled ?? SPEC_DEFAULTS.probe.enabled,
      path: s.probe?.path ?? SPEC_DEFAULTS.probe.path,
      // Only narrows: a kind the policy does not select is not probed (the CRD refuses naming one).
      targets: s.probe?.targets && s.probe.targets.length > 0 ? targets.filter((k) => s.probe!.targets!.includes(k)) : [...targets],
    },
  };
}

// ---- status ---------------------------------------------------------------------------------------

export type Verdict = 'AtRisk' | 'Mitigated' | 'NotApplicable' | 'Unsupported' | 'Pending' | 'Skipped' | 'Conflict';
export const VERDICTS: readonly Verdict[] = [
  'AtRisk',
  'Mitigated',
  'NotApplicable',
  'Unsupported',
  'Pending',
  'Skipped',
  'Conflict',
];

export type KubeProxyMode = 'ipvs' | 'iptables' | 'nftables' | 'none' | 'unknown';
export type ProfileSource = 'DaemonSet' | 'ConfigMap' | 'Flag' | 'Unknown';
export type Tristate = 'True' | 'False' | 'Unknown';
/**
 * Whether kube-proxy binds a LoadBalancer Service's CLB VIP to a local interface (kube-ipvs0):
 * `OnAnnotation` = TKE build that binds only Services annotated prevent-loopback; `Always` = upstream
 * IPVS behaviour (kubernetes PR #63066); `Never` = iptables/nftables/none or a TKE build older than the fix.
 */
export type VipBinding = 'OnAnnotation' | 'Always' | 'Never' | 'Unknown';

export interface ClusterProfileStatus {
  kubeProxyMode: KubeProxyMode;
  kubeProxyVersion?: string;
  preventLoopbackSupported: Tristate;
  vipBinding?: VipBinding;
  /** The kube-proxy version to upgrade to for prevent-loopback support, when known. */
  upgradeTo?: string;
  source: ProfileSource;
  message?: string;
}

export interface VerdictCounts {
  atRisk: number;
  mitigated: number;
  notApplicable: number;
  unsupported: number;
  pending: number;
  skipped: number;
  conflict: number;
  total: number;
}

export interface TargetStatus {
  kind: TargetKind;
  name: string;
  verdict: Verdict;
  /** CamelCase id from the root-cause catalogue (docs/diagnosis.md). */
  rootCause: string;
  /** Mitigations in effect on the target (observed, not planned). */
  mitigations?: string[];
  /** Changes the desired state still needs; in Audit mode this is what Enforce would do. */
  plan?: string[];
  /** Topology alternatives (src/model/topology.ts): what to do, what it fixes and leaves, and the source. */
  alternatives?: string[];
  message?: string;
  /** What the probe measured (docs/probe.md §11), e.g. "measured: 12/40 failed from node-1, node-3; p99 4.2 s". */
  measured?: string;
  loadBalancerId?: string;
}

export interface ReleaseStatus {
  kind: TargetKind;
  name: string;
  plan?: string[];
  message?: string;
}

export interface LoopbackPolicyStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  clusterProfile?: ClusterProfileStatus;
  counts?: VerdictCounts;
  targets?: TargetStatus[];
  targetsTruncated?: boolean;
  targetsNote?: string;
  /** Targets the policy changed but no longer manages, and the steps that give their originals back. */
  releases?: ReleaseStatus[];
  lastEvaluatedTime?: string;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export interface LoopbackPolicy {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec?: LoopbackPolicySpec;
  status?: LoopbackPolicyStatus;
}

export function isLoopbackPolicy(value: unknown): value is LoopbackPolicy {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  return v.apiVersion === API_VERSION && v.kind === KIND && typeof v.metadata === 'object' && v.metadata !== null;
}
