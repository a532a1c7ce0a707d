// Several policies selecting one target (docs/cluster-policy.md §5). Within one kind, the policy already managing
// the target (holding its originals record) keeps it; otherwise the oldest (creationTimestamp, then uid) wins, and
// the others report Conflict naming the winner. Timestamps have second precision, so age alone cannot order policies
// a GitOps tool applies together: the record settles it, and adding a policy never takes a target away from the one
// managing it. Between newcomers of the same second the uid decides: it is fixed at creation and has nothing to do
// with the names users pick (a name tie-break would let a later `alpha` beat an earlier `zeta`), so every reconcile
// picks the same winner. A policy being deleted still wins until it is gone, so its revert and a newcomer's changes
// never race on the same CLB.
// Between kinds, the winning cluster policy's `spec.precedence` decides (NamespacedFirst, the default, or
// ClusterFirst, the platform team's switch), whoever holds the record: that is what the switch is for. The handover
// goes through the usual release (the holder gives the originals back, then the winner applies its plan).
import { CLUSTER_KIND, type Precedence } from '../api/clusterloopbackpolicy.js';
import type { LoopbackPolicy, PolicyMode } from '../api/loopbackpolicy.js';
import type { TargetRef } from './facts.js';
import { targetKey } from './facts.js';
import { clusterOwnerKey, describeOwner, ownerKey, type OwnerKey } from './record-registry.js';

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

export interface ClaimResolution {
  target: TargetRef;
  winner: PolicyIdentity;
  /** Other policies selecting the target, oldest first. */
  losers: PolicyIdentity[];
  /** The winner's mode for the target's namespace. */
  winnerMode: PolicyMode;
  /**
   * Precedence would give the target to `deferredTo`, which is in Audit there: the holder of the record keeps it (an
   * Audit policy reports, it never displaces what another policy enforces).
   */
  deferredTo?: PolicyIdentity;
}

/** A policy as conflict resolution sees it (the operator and the CLI build it the same way). */
export function policyIdentity(p: LoopbackPolicy): PolicyIdentity {
  const created = p.metadata.creationTimestamp as unknown;
  return {
    namespace: p.metadata.namespace ?? '',
    name: p.metadata.name ?? '',
    ...(created ? { creationTimestamp: created instanceof Date ? created.toISOString() : String(created) } : {}),
    ...(p.metadata.uid ? { uid: p.metadata.uid } : {}),
  };
}

/** A cluster policy as conflict resolution sees it. */
export function clusterPolicyIdentity(p: { metadata: { name?: string; creationTimestamp?: unknown; uid?: string }; spec?: { precedence?: Precedence } }): PolicyIdentity {
  const created = p.metadata.creationTimestamp;
  return {
    kind: CLUSTER_KIND,
    precedence: p.spec?.precedence ?? 'NamespacedFirst',
    namespace: '',
    name: p.metadata.name ?? '',
    ...(created ? { creationTimestamp: created instanceof Date ? created.toISOString() : String(created) } : {}),
    ...(p.metadata.uid ? { uid: p.metadata.uid } : {}),
  };
}

/** The owner key (record-registry.ts) of a policy. */
export function identityOwner(p: PolicyIdentity): OwnerKey {
  return p.kind === CLUSTER_KIND ? clusterOwnerKey(p.name) : ownerKey(p.namespace, p.name);
}

/** `ClusterLoopbackPolicy/<name>` or `LoopbackPolicy <namespace>/<name>`, for messages. */
export function describePolicy(p: PolicyIdentity): string {
  return describeOwner(identityOwner(p));
}

/** Whether the target went to `winner` by precedence between kinds (not by record and age within one kind). */
export function lostByPrecedence(winner: PolicyIdentity, loser: PolicyIdentity): boolean {
  return (winner.kind === CLUSTER_KIND) !== (loser.kind === CLUSTER_KIND);
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

/**
 * Groups claims by target and picks each target's winner. Keyed by `Kind/namespace/name`. `holder` names the
 * policy (its owner key) that holds the target's record, if any.
 */
export function resolveConflicts(claims: readonly Claim[], holder: (target: TargetRef) => string | undefined = () => undefined): Map<string, ClaimResolution> {
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
    // One policy selects it: it wins, whoever holds the record (a release is the round's business, not a conflict).
    if (!Array.isArray(seen)) result.set(key, { target: seen.target, winner: seen.policy, losers: [], winnerMode: seen.mode ?? 'Enforce' });
    else result.set(key, resolveContested(seen, holder));
  }
  return result;
}

/** A target several claims name (the same policy may claim it twice: one entry each; the last claim's mode counts). */
function resolveContested(claims: readonly Claim[], holder: (target: TargetRef) => string | undefined): ClaimResolution {
  const target = (claims[0] as Claim).target;
  const policies: PolicyIdentity[] = [];
  const modes = new Map<string, PolicyMode>();
  for (const claim of claims) {
    if (!policies.some((p) => samePolicy(p, claim.policy))) policies.push(claim.policy);
    modes.set(identityOwner(claim.policy), claim.mode ?? 'Enforce');
  }
  const held = holder(target);
  const holds = (p: PolicyIdentity) => (identityOwner(p) === held ? 0 : 1);
  const order = (a: PolicyIdentity, b: PolicyIdentity) => holds(a) - holds(b) || comparePolicyAge(a, b);
  // Within each kind: record, then age. Between kinds: the winning cluster policy's precedence.
  const clusters = policies.filter((p) => p.kind === CLUSTER_KIND).sort(order);
  const namespaced = policies.filter((p) => p.kind !== CLUSTER_KIND).sort(order);
  const clusterFirst = clusters[0]?.precedence === 'ClusterFirst' || namespaced.length === 0;
  const ranked = (clusterFirst ? [...clusters, ...namespaced] : [...namespaced, ...clusters]) as [PolicyIdentity, ...PolicyIdentity[]];
  const modeOf = (p: PolicyIdentity) => modes.get(identityOwner(p)) ?? 'Enforce';
  // Precedence takes a target from its holder only to enforce: an Audit winner would strip live mitigations.
  const holderClaim = held !== undefined ? ranked.find((p) => identityOwner(p) === held) : undefined;
  if (holderClaim && !samePolicy(holderClaim, ranked[0]) && lostByPrecedence(ranked[0], holderClaim) && modeOf(ranked[0]) === 'Audit') {
    const losers = ranked.filter((p) => !samePolicy(p, holderClaim));
    return { target, winner: holderClaim, losers, winnerMode: modeOf(holderClaim), deferredTo: ranked[0] };
  }
  const [winner, ...losers] = ranked;
  return { target, winner, losers, winnerMode: modeOf(winner) };
}

/** Whether `policy` manages the target, given the resolved ownership (unclaimed targets → false). */
export function isWinner(ownership: ReadonlyMap<string, ClaimResolution>, target: TargetRef, policy: PolicyIdentity): boolean {
  const o = ownership.get(targetKey(target));
  return !!o && samePolicy(o.winner, policy);
}
