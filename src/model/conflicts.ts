// Two policies selecting one target: the one already managing it (holding its originals record) keeps it;
// otherwise the oldest (creationTimestamp, then uid) wins, and the others report Conflict naming the winner.
// Timestamps have second precision, so age alone cannot order policies a GitOps tool applies together: the
// record settles it, and adding a policy never takes a target away from the one managing it. Between newcomers
// of the same second the uid decides: it is fixed at creation and has nothing to do with the names users pick
// (a name tie-break would let a later `alpha` beat an earlier `zeta`), so every reconcile picks the same winner. A policy being
// deleted still wins until it is gone, so its revert and a newcomer's changes never race on the same CLB.
import type { LoopbackPolicy } from '../api/loopbackpolicy.js';
import type { TargetRef } from './facts.js';
import { targetKey } from './facts.js';

export interface PolicyIdentity {
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
}

export interface ClaimResolution {
  target: TargetRef;
  winner: PolicyIdentity;
  /** Other policies selecting the target, oldest first. */
  losers: PolicyIdentity[];
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

function samePolicy(a: PolicyIdentity, b: PolicyIdentity): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/**
 * Groups claims by target and picks each target's winner. Keyed by `Kind/namespace/name`. `holder` names the
 * policy (`<namespace>/<name>`) that holds the target's record, if any.
 */
export function resolveConflicts(claims: readonly Claim[], holder: (target: TargetRef) => string | undefined = () => undefined): Map<string, ClaimResolution> {
  const byTarget = new Map<string, { target: TargetRef; policies: PolicyIdentity[] }>();
  for (const claim of claims) {
    const key = targetKey(claim.target);
    const entry = byTarget.get(key) ?? { target: claim.target, policies: [] };
    if (!entry.policies.some((p) => samePolicy(p, claim.policy))) entry.policies.push(claim.policy);
    byTarget.set(key, entry);
  }
  const result = new Map<string, ClaimResolution>();
  for (const [key, { target, policies }] of byTarget) {
    const held = holder(target);
    const holds = (p: PolicyIdentity) => (`${p.namespace}/${p.name}` === held ? 0 : 1);
    const sorted = [...policies].sort((a, b) => holds(a) - holds(b) || comparePolicyAge(a, b));
    const [winner, ...losers] = sorted as [PolicyIdentity, ...PolicyIdentity[]];
    result.set(key, { target, winner, losers });
  }
  return result;
}

/** Whether `policy` manages the target, given the resolved ownership (unclaimed targets → false). */
export function isWinner(ownership: ReadonlyMap<string, ClaimResolution>, target: TargetRef, policy: PolicyIdentity): boolean {
  const o = ownership.get(targetKey(target));
  return !!o && samePolicy(o.winner, policy);
}
