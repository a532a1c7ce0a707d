// Several policies selecting one target (docs/cluster-policy.md §5): exactly one manages it, the others report
// Conflict. The winner is a pure function of the policies that select it, never of who holds its record or of event
// order, so the operator, the CLI and the admission params agree: 1. mode (Enforce first), 2. between kinds the oldest
// cluster policy's `spec.precedence`, 3. age (creationTimestamp, then uid). A holder that lost gives back first.
import { CLUSTER_KIND, type Precedence } from '../api/clusterloopbackpolicy.js';
import type { PolicyMode } from '../api/loopbackpolicy.js';
import { targetKey, type TargetRef } from './facts.js';
import { describeOwner, ownerOf } from './record-registry.js';

export interface PolicyIdentity {
  /** Absent: a LoopbackPolicy. */
  kind?: typeof CLUSTER_KIND;
  /** A cluster policy's switch between kinds (absent: NamespacedFirst). */
  precedence?: Precedence;
  /** '' for a cluster policy. */
  namespace: string;
  name: string;
  /** RFC 3339; a policy without one (not yet persisted) sorts after every persisted policy. */
  creationTimestamp?: string;
  /** metadata.uid: the tie-break between policies created in the same second. */
  uid?: string;
}

export interface Claim {
  policy: PolicyIdentity;
  target: TargetRef;
  /** The policy's mode for this target's namespace (a cluster policy's differ by namespace); absent: Enforce. */
  mode?: PolicyMode;
}

export interface Loser {
  policy: PolicyIdentity;
  /** The rule of the order above that decided: Mode (the winner enforces, this one audits), Precedence (kinds), Age. */
  by: 'Mode' | 'Precedence' | 'Age';
}

export interface ClaimResolution {
  target: TargetRef;
  winner: PolicyIdentity;
  /** Other policies selecting the target, best ranked first. */
  losers: Loser[];
  /** The winner's mode for the target's namespace. */
  winnerMode: PolicyMode;
  /** The cluster policy whose `precedence` decided between the kinds (both selected the target in the winner's mode). */
  decidedBy?: PolicyIdentity;
}

/** What conflict resolution reads of a policy object, of either kind. */
type PolicyObject = { metadata: { namespace?: string; name?: string; creationTimestamp?: unknown; uid?: string } };

/** A policy as conflict resolution sees it (the operator and the CLI build it the same way). */
export function policyIdentity(p: PolicyObject): PolicyIdentity {
  const { namespace = '', name = '', creationTimestamp: created, uid } = p.metadata;
  return {
    namespace,
    name,
    ...(created ? { creationTimestamp: created instanceof Date ? created.toISOString() : String(created) } : {}),
    ...(uid ? { uid } : {}),
  };
}

/** A cluster policy as conflict resolution sees it. */
export function clusterPolicyIdentity(p: PolicyObject & { spec?: { precedence?: Precedence } }): PolicyIdentity {
  return { kind: CLUSTER_KIND, precedence: p.spec?.precedence ?? 'NamespacedFirst', ...policyIdentity({ metadata: { ...p.metadata, namespace: '' } }) };
}

/** `ClusterLoopbackPolicy/<name>` or `LoopbackPolicy <namespace>/<name>`, for messages. */
export function describePolicy(p: PolicyIdentity): string {
  return describeOwner(ownerOf(p));
}

function timeOf(p: PolicyIdentity): number {
  const t = p.creationTimestamp ? Date.parse(p.creationTimestamp) : NaN;
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}

/** Orders policies oldest first; equal timestamps (seconds precision) fall back to the uid, then (unpersisted) the name. */
export function comparePolicyAge(a: PolicyIdentity, b: PolicyIdentity): number {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.uid && b.uid && a.uid !== b.uid) return a.uid < b.uid ? -1 : 1;
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function samePolicy(a: PolicyIdentity, b: PolicyIdentity): boolean {
  return (a.kind === CLUSTER_KIND) === (b.kind === CLUSTER_KIND) && a.namespace === b.namespace && a.name === b.name;
}

/** Groups claims by target and picks each target's winner (the order above). Keyed by `Kind/namespace/name`. */
export function resolveConflicts(claims: readonly Claim[]): Map<string, ClaimResolution> {
  // Claims grouped by target as they come: nearly every target has one claim, and a round resolves every target of
  // the policy (12,000 in bench/scale), so the one-claim case allocates nothing beyond its resolution.
  const byTarget = new Map<string, Claim | Claim[]>();
  for (const claim of claims) {
    const key = targetKey(claim.target);
    const seen = byTarget.get(key);
    if (seen === undefined) byTarget.set(key, claim);
    else if (Array.isArray(seen)) seen.push(claim);
    else byTarget.set(key, [seen, claim]);
  }
  const result = new Map<string, ClaimResolution>();
  for (const [key, seen] of byTarget) {
    if (!Array.isArray(seen)) result.set(key, { target: seen.target, winner: seen.policy, losers: [], winnerMode: seen.mode ?? 'Enforce' });
    else result.set(key, resolveContested(seen));
  }
  return result;
}

/** A target several claims name (the same policy may claim it twice: one entry each; the last claim's mode counts). */
function resolveContested(claims: readonly Claim[]): ClaimResolution {
  const target = (claims[0] as Claim).target;
  const policies: PolicyIdentity[] = [];
  const modes = new Map<string, PolicyMode>();
  for (const claim of claims) {
    if (!policies.some((p) => samePolicy(p, claim.policy))) policies.push(claim.policy);
    modes.set(ownerOf(claim.policy), claim.mode ?? 'Enforce');
  }
  const modeOf = (p: PolicyIdentity): PolicyMode => modes.get(ownerOf(p)) ?? 'Enforce';
  policies.sort(comparePolicyAge);
  // 1. Mode: Enforce before Audit.
  const winnerMode: PolicyMode = policies.some((p) => modeOf(p) === 'Enforce') ? 'Enforce' : 'Audit';
  const contenders = policies.filter((p) => modeOf(p) === winnerMode);
  const outranked = policies.filter((p) => modeOf(p) !== winnerMode);
  // 2. Between kinds: the oldest cluster contender's precedence. 3. Within the kind: age (already sorted).
  const clusters = contenders.filter((p) => p.kind === CLUSTER_KIND);
  const namespaced = contenders.filter((p) => p.kind !== CLUSTER_KIND);
  const decider = clusters.length > 0 && namespaced.length > 0 ? clusters[0] : undefined;
  const clusterFirst = namespaced.length === 0 || decider?.precedence === 'ClusterFirst';
  const [winner, ...rest] = (clusterFirst ? [...clusters, ...namespaced] : [...namespaced, ...clusters]) as [PolicyIdentity, ...PolicyIdentity[]];
  const sameKind = (p: PolicyIdentity) => (p.kind === CLUSTER_KIND) === (winner.kind === CLUSTER_KIND);
  const losers: Loser[] = [...rest.map((policy): Loser => ({ policy, by: sameKind(policy) ? 'Age' : 'Precedence' })), ...outranked.map((policy): Loser => ({ policy, by: 'Mode' }))];
  return { target, winner, losers, winnerMode, ...(decider ? { decidedBy: decider } : {}) };
}

/** How `policy` lost the target, if it is among the losers. */
export function lossOf(resolution: ClaimResolution, policy: PolicyIdentity): Loser | undefined {
  return resolution.losers.find((l) => samePolicy(l.policy, policy));
}
