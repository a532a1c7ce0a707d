// ClusterLoopbackPolicy (loopguard.dev/v1alpha1, cluster-scoped): TypeScript mirror of
// crds/loopguard.dev_clusterloopbackpolicies.yaml. Its spec is the LoopbackPolicy spec plus the fields that only make
// sense across namespaces; docs/cluster-policy.md gives the design and its sources. The policy controller reconciles
// it (src/controllers/policy/subject.ts).
import type { Condition } from './conditions.js';
import {
  API_VERSION,
  withSpecDefaults,
  type ClusterProfileStatus,
  type LabelSelector,
  type LoopbackPolicySpec,
  type ObjectMeta,
  type PolicyMode,
  type ReleaseStatus,
  type ResolvedPolicySpec,
  type TargetStatus,
  type VerdictCounts,
} from './loopbackpolicy.js';

export const CLUSTER_KIND = 'ClusterLoopbackPolicy';
export const CLUSTER_PLURAL = 'clusterloopbackpolicies';
export const CLUSTER_SINGULAR = 'clusterloopbackpolicy';
export const CLUSTER_SHORT_NAME = 'clbp';
/** Upper bound of `status.byNamespace`; the rest is in the counts and each namespace's Report. */
export const MAX_STATUS_NAMESPACES = 100;
/** Upper bound of `spec.modeOverrides` (first match wins, so a long list is hard to read anyway). */
export const MAX_MODE_OVERRIDES = 8;
/**
 * Namespaces `systemNamespaces: Exclude` always leaves out, besides loopguard's own (known only at run time):
 * the ones Kubernetes creates for itself (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces).
 */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

/** `Exclude`: system namespaces are never covered; `Include`: covered when namespaceSelector (then non-empty) matches. */
export type SystemNamespaces = 'Exclude' | 'Include';
/** Who manages a target this policy and a LoopbackPolicy both select. */
export type Precedence = 'NamespacedFirst' | 'ClusterFirst';
/** Whether `loopguard.dev/skip` opts a target out of this policy (TKE's `mode: skip` is honoured either way). */
export type SkipAnnotationHandling = 'Honor' | 'Ignore';

export interface ModeOverride {
  mode: PolicyMode;
  /** Required and non-empty (the CRD refuses an empty one: that is what spec.mode is for). */
  namespaceSelector: LabelSelector;
}

export interface ClusterLoopbackPolicySpec extends LoopbackPolicySpec {
  /** Over namespaces; empty or absent selects every namespace but the system ones. */
  namespaceSelector?: LabelSelector;
  systemNamespaces?: SystemNamespaces;
  /** Staged rollout: the first entry whose selector matches a namespace gives its mode; else spec.mode. */
  modeOverrides?: ModeOverride[];
  precedence?: Precedence;
  skipAnnotation?: SkipAnnotationHandling;
}

export interface ResolvedClusterPolicySpec extends ResolvedPolicySpec {
  namespaceSelector: LabelSelector;
  systemNamespaces: SystemNamespaces;
  modeOverrides: ModeOverride[];
  precedence: Precedence;
  skipAnnotation: SkipAnnotationHandling;
}

export const CLUSTER_SPEC_DEFAULTS = Object.freeze({
  systemNamespaces: 'Exclude',
  precedence: 'NamespacedFirst',
  skipAnnotation: 'Honor',
} as const satisfies Pick<ResolvedClusterPolicySpec, 'systemNamespaces' | 'precedence' | 'skipAnnotation'>);

/** Applies the CRD's defaults (the schema's `default:` values) without mutating the input. */
export function withClusterSpecDefaults(spec: ClusterLoopbackPolicySpec | undefined): ResolvedClusterPolicySpec {
  const s = spec ?? {};
  return {
    ...withSpecDefaults(s),
    namespaceSelector: s.namespaceSelector ?? {},
    systemNamespaces: s.systemNamespaces ?? CLUSTER_SPEC_DEFAULTS.systemNamespaces,
    modeOverrides: (s.modeOverrides ?? []).map((o) => ({ mode: o.mode, namespaceSelector: o.namespaceSelector })),
    precedence: s.precedence ?? CLUSTER_SPEC_DEFAULTS.precedence,
    skipAnnotation: s.skipAnnotation ?? CLUSTER_SPEC_DEFAULTS.skipAnnotation,
  };
}

// ---- status ---------------------------------------------------------------------------------------

export interface NamespaceCounts {
  /** Namespaces the policy covers. */
  selected: number;
  enforce: number;
  audit: number;
  /** System namespaces namespaceSelector matched but `systemNamespaces: Exclude` left out. */
  excluded: number;
}

export interface NamespaceSummary {
  namespace: string;
  mode: PolicyMode;
  counts: VerdictCounts;
  /** The OpenReports Report loopguard keeps in the namespace; absent when that CRD is not installed. */
  report?: string;
}

export interface ClusterTargetStatus extends TargetStatus {
  namespace: string;
}

export interface ClusterReleaseStatus extends ReleaseStatus {
  namespace: string;
}

export interface ClusterLoopbackPolicyStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  clusterProfile?: ClusterProfileStatus;
  /** Over every covered namespace. */
  counts?: VerdictCounts;
  namespaces?: NamespaceCounts;
  excludedNamespaces?: string[];
  /** Most severe first, at most MAX_STATUS_NAMESPACES. */
  byNamespace?: NamespaceSummary[];
  byNamespaceTruncated?: boolean;
  /** Most severe first across namespaces, at most MAX_STATUS_TARGETS (loopbackpolicy.ts). */
  targets?: ClusterTargetStatus[];
  targetsTruncated?: boolean;
  targetsNote?: string;
  releases?: ClusterReleaseStatus[];
  lastEvaluatedTime?: string;
}

export interface ClusterLoopbackPolicy {
  apiVersion: typeof API_VERSION;
  kind: typeof CLUSTER_KIND;
  /** Cluster-scoped: no namespace. */
  metadata: Omit<ObjectMeta, 'namespace'>;
  spec?: ClusterLoopbackPolicySpec;
  status?: ClusterLoopbackPolicyStatus;
}

export function isClusterLoopbackPolicy(value: unknown): value is ClusterLoopbackPolicy {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  return v.apiVersion === API_VERSION && v.kind === CLUSTER_KIND && typeof v.metadata === 'object' && v.metadata !== null;
}
