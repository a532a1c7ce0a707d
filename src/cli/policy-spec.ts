// Pure: which policy covers each target and which spec it is assessed with. The operator assesses a target under
// the policy that manages it; the scans resolve it with the operator's own pieces, so their verdicts match the
// policy's status: a LoopbackPolicy selects in its namespace (model/selection.ts), a ClusterLoopbackPolicy selects in
// the namespaces it covers (model/namespace-coverage.ts, in the mode that namespace gets), and when several select a
// target, resolveConflicts (model/conflicts.ts, docs/cluster-policy.md §5) picks the one that manages it — Enforce
// before Audit, then the oldest cluster policy's precedence between kinds, then age; never the record. A target no policy
// selects is assessed with the defaults — what an Audit policy without settings (config/samples/audit-policy.yaml)
// reports.
import { SYSTEM_NAMESPACES, withClusterSpecDefaults, type ClusterLoopbackPolicy } from '../api/clusterloopbackpolicy.js';
import { withSpecDefaults, type LoopbackPolicy, type ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import { clusterPolicyIdentity, describePolicy, policyIdentity, resolveConflicts, type Claim } from '../model/conflicts.js';
import { targetKey, type TargetFacts } from '../model/facts.js';
import { coverageOf, type NamespaceFacts } from '../model/namespace-coverage.js';
import { ownerOf, type OwnerKey } from '../model/record-registry.js';
import { selects } from '../model/selection.js';

export interface PolicyChoice {
  spec: ResolvedPolicySpec;
  /** The managing policy's owner key (record-registry.ts), the plan's owner; absent when no policy selects the target. */
  owner?: OwnerKey;
  /** How messages name it: `LoopbackPolicy <namespace>/<name>` or `ClusterLoopbackPolicy/<name>`. */
  policy?: string;
  /** A cluster policy with `skipAnnotation: Ignore` manages it (docs/cluster-policy.md §6). */
  ignoreSkipAnnotation?: true;
}

export const DEFAULT_CHOICE: PolicyChoice = { spec: withSpecDefaults({ mode: 'Audit' }) };

/** The cluster policies as the scan read them. */
export interface ClusterPolicyInput {
  policies: readonly ClusterLoopbackPolicy[];
  /** The namespaces (with labels) the targets live in; undefined: they could not be read, so coverage is unresolved. */
  namespaces: readonly NamespaceFacts[] | undefined;
}

export const NO_CLUSTER_POLICIES: ClusterPolicyInput = { policies: [], namespaces: [] };

/** Whether every target's coverage is known: no cluster policy, or the namespaces they cover could be read. */
export function coverageResolved(cluster: ClusterPolicyInput): boolean {
  return cluster.policies.length === 0 || cluster.namespaces !== undefined;
}

/**
 * loopguard's own namespace, which `systemNamespaces: Exclude` leaves out: the operator knows it from its pod; the CLI
 * learns it from what the operator wrote in a cluster policy's status.excludedNamespaces (the system namespaces that
 * policy's selector matched but left out). Undefined when no status names it: then no selector matched it either.
 */
export function operatorNamespace(policies: readonly ClusterLoopbackPolicy[]): string | undefined {
  for (const p of policies) for (const ns of p.status?.excludedNamespaces ?? []) if (!SYSTEM_NAMESPACES.includes(ns)) return ns;
  return undefined;
}

/** The policy choice per target key (`Kind/namespace/name`): the operator's resolution, from the same policies. */
export function choosePolicies(
  targets: readonly TargetFacts[],
  policies: readonly LoopbackPolicy[],
  cluster: ClusterPolicyInput = NO_CLUSTER_POLICIES,
): Map<string, PolicyChoice> {
  const claims: Claim[] = [];
  const choices = new Map<OwnerKey, (namespace: string) => PolicyChoice>();
  for (const p of policies) {
    const id = policyIdentity(p);
    const spec = withSpecDefaults(p.spec);
    choices.set(ownerOf(id), () => ({ spec, owner: ownerOf(id), policy: describePolicy(id) }));
    for (const t of targets) if (selects({ namespace: id.namespace, spec }, t)) claims.push({ policy: id, target: t, mode: spec.mode });
  }
  const namespaces = new Map((cluster.namespaces ?? []).map((n) => [n.name, n]));
  const own = operatorNamespace(cluster.policies);
  for (const p of cluster.namespaces ? cluster.policies : []) {
    const id = clusterPolicyIdentity(p);
    const spec = withClusterSpecDefaults(p.spec);
    const modes = new Map<string, ResolvedPolicySpec['mode']>();
    for (const t of targets) {
      const ns = namespaces.get(t.namespace);
      const mode = ns ? coverageOf(spec, ns, own) : undefined;
      if (mode === undefined || mode === 'excluded') continue;
      modes.set(t.namespace, mode);
      if (selects({ namespace: t.namespace, spec }, t)) claims.push({ policy: id, target: t, mode });
    }
    const ignore = spec.skipAnnotation === 'Ignore' ? { ignoreSkipAnnotation: true as const } : {};
    // Assessed in the mode its namespace gets (modeOverrides), as the operator's round for that namespace is.
    choices.set(ownerOf(id), (namespace) => ({ spec: { ...spec, mode: modes.get(namespace) ?? spec.mode }, owner: ownerOf(id), policy: describePolicy(id), ...ignore }));
  }
  const owners = resolveConflicts(claims);
  const out = new Map<string, PolicyChoice>();
  for (const t of targets) {
    const winner = owners.get(targetKey(t))?.winner;
    const choice = winner ? choices.get(ownerOf(winner)) : undefined;
    out.set(targetKey(t), choice ? choice(t.namespace) : DEFAULT_CHOICE);
  }
  return out;
}
