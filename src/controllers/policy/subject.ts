// The policy a reconcile is about, whichever its kind: a LoopbackPolicy (one namespace) or a ClusterLoopbackPolicy
// (the namespaces its namespaceSelector covers). The round, the deletion and the reports work on this, so both kinds
// share one path from gather to status; only where targets come from and how status is shaped differ.
import { CLUSTER_KIND, withClusterSpecDefaults, type ClusterLoopbackPolicy, type ResolvedClusterPolicySpec } from '../../api/clusterloopbackpolicy.js';
import { ABANDON_ANNOTATION, API_VERSION, KIND, withSpecDefaults, type LoopbackPolicy, type ObjectMeta, type ResolvedPolicySpec } from '../../api/loopbackpolicy.js';
import { clusterOwnerKey, ownerKey, policyRefOf, type OwnerKey } from '../../model/record-registry.js';
import { clusterPolicyIdentity, policyIdentity, type PolicyIdentity } from '../../model/conflicts.js';

export interface PolicySubject {
  kind: typeof KIND | typeof CLUSTER_KIND;
  name: string;
  /** The policy's namespace; undefined for a cluster policy. */
  namespace: string | undefined;
  /** Its records' owner key, also its work-queue key. */
  owner: OwnerKey;
  /** Who it is when claims are resolved (model/conflicts.ts). */
  identity: PolicyIdentity;
  metadata: ObjectMeta;
  spec: ResolvedPolicySpec;
  /** A cluster policy's own fields (namespaceSelector, modeOverrides, precedence, skipAnnotation). */
  cluster?: ResolvedClusterPolicySpec;
  object: LoopbackPolicy | ClusterLoopbackPolicy;
}

export function subjectOf(policy: LoopbackPolicy): PolicySubject {
  const namespace = policy.metadata.namespace ?? '';
  const name = policy.metadata.name ?? '';
  return { kind: KIND, name, namespace, owner: ownerKey(namespace, name), identity: policyIdentity(policy), metadata: policy.metadata, spec: withSpecDefaults(policy.spec), object: policy };
}

export function clusterSubjectOf(policy: ClusterLoopbackPolicy): PolicySubject {
  const name = policy.metadata.name ?? '';
  const cluster = withClusterSpecDefaults(policy.spec);
  return { kind: CLUSTER_KIND, name, namespace: undefined, owner: clusterOwnerKey(name), identity: clusterPolicyIdentity(policy), metadata: policy.metadata, spec: cluster, cluster, object: policy };
}

/** The policy an owner key names, if it exists (as the caches have it). */
export function liveSubject(caches: { policy(namespace: string, name: string): LoopbackPolicy | undefined; clusterPolicy(name: string): ClusterLoopbackPolicy | undefined }, owner: OwnerKey): PolicySubject | undefined {
  const ref = policyRefOf(owner);
  if (ref.kind === CLUSTER_KIND) {
    const cluster = caches.clusterPolicy(ref.name);
    return cluster ? clusterSubjectOf(cluster) : undefined;
  }
  const policy = caches.policy(ref.namespace, ref.name);
  return policy ? subjectOf(policy) : undefined;
}

/** The policy as an Event's involved object. */
export function subjectRef(s: PolicySubject): { apiVersion: string; kind: string; namespace: string; name: string; uid?: string } {
  return { apiVersion: API_VERSION, kind: s.kind, namespace: s.namespace ?? '', name: s.name, ...(s.metadata.uid ? { uid: s.metadata.uid } : {}) };
}

/** The kubectl command that sets loopguard.dev/abandon on the policy. */
export function abandonCommand(s: PolicySubject): string {
  return s.namespace === undefined ? `kubectl annotate clusterloopbackpolicy ${s.name} ${ABANDON_ANNOTATION}=true` : `kubectl annotate loopbackpolicy ${s.name} -n ${s.namespace} ${ABANDON_ANNOTATION}=true`;
}

/**
 * The targets an Event on the policy itself speaks of (issue 38 #4): a LoopbackPolicy's names them; a
 * ClusterLoopbackPolicy's lives in `default`, which a tenant may read, so it counts them (docs/security.md "Events").
 */
export function targetsForPolicyEvent(s: Pick<PolicySubject, 'namespace'>, targets: readonly { kind: string; namespace?: string; name: string }[]): string {
  if (s.namespace === undefined) {
    const namespaces = new Set(targets.map((t) => t.namespace ?? ''));
    return `${targets.length} target(s) in ${namespaces.size} namespace(s) (each target's own Event names it)`;
  }
  return targets.map((t) => `${t.kind} ${t.namespace ?? s.namespace}/${t.name}`).join(', ');
}

/** Whether the policy asks for the CoreDNS rules of `l7.inClusterDNS: Managed` (a cluster policy only). */
export function asksForDns(p: PolicySubject): boolean {
  return p.namespace === undefined && p.spec.l7.inClusterDNS === 'Managed';
}
