// The targets a policy manages, read from the informer caches: selection, conflicts with other policies of the
// namespace, and the CLB each one is bound to.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { withSpecDefaults, type LoopbackPolicy } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { madeFor, ownedBy, ownerKey, type OwnerKey } from '../../model/record-registry.js';
import { sharedView, type SharedView } from '../../plan/snapshot.js';
import type { Orphan, PolicyCaches } from './deps.js';
import { conflictAssessment, type Assessment } from '../../model/assessment.js';
import { targetKey } from '../../model/facts.js';
import { policyIdentity, resolveConflicts, type Claim, type ClaimResolution } from '../../model/conflicts.js';

export { policyIdentity };
import type { TargetFacts, TargetRef } from '../../model/facts.js';
import { selectTargets } from '../../model/selection.js';
import { ingressFacts, serviceFacts } from '../../model/target-facts.js';


export interface NamespaceView {
  candidates: TargetFacts[];
  claims: Map<string, ClaimResolution>;
}

/** Every Service and Ingress of the namespace as facts, and who owns each among the namespace's live policies. */
export function namespaceView(
  namespace: string,
  services: readonly V1Service[],
  ingresses: readonly V1Ingress[],
  policies: readonly LoopbackPolicy[],
  holder?: (target: TargetRef) => string | undefined,
): NamespaceView {
  const candidates: TargetFacts[] = [...services.map(serviceFacts), ...ingresses.map(ingressFacts)].filter((t) => t.namespace === namespace);
  const claims: Claim[] = [];
  for (const p of policies) {
    if (p.metadata.namespace !== namespace) continue;
    const scope = { namespace, spec: withSpecDefaults(p.spec) };
    for (const t of selectTargets(scope, candidates)) claims.push({ policy: policyIdentity(p), target: t });
  }
  return { candidates, claims: resolveConflicts(claims, holder) };
}

/** What a policy manages in its namespace, what it loses to an older policy, and what it must release. */
export interface PolicyTargets {
  view: NamespaceView;
  mine: TargetFacts[];
  /** Targets it selects that another policy manages: Conflict / PolicyConflict. */
  conflicts: Assessment[];
  orphans: Orphan[];
}

export function policyTargets(policy: LoopbackPolicy, caches: PolicyCaches, holder: (target: TargetRef) => string | undefined): PolicyTargets {
  const namespace = policy.metadata.namespace ?? '';
  const view = namespaceView(namespace, caches.services(namespace), caches.ingresses(namespace), caches.policies(namespace), holder);
  const me = policyIdentity(policy);
  const mine: TargetFacts[] = [];
  const conflicts: Assessment[] = [];
  for (const target of view.candidates) {
    const claim = view.claims.get(targetKey(target));
    if (!claim) continue;
    if (claim.winner.namespace === me.namespace && claim.winner.name === me.name) mine.push(target);
    else if (claim.losers.some((l) => l.name === me.name)) conflicts.push(conflictAssessment(target, claim.winner));
  }
  const orphans = orphansOf(caches.records(namespace), ownerKey(namespace, policy.metadata.name ?? ''), new Set(mine.map(targetKey)), view.candidates);
  return { view, mine, conflicts, orphans };
}

/**
 * Who shares the policy's targets' CLBs (any namespace) and TkeServiceConfigs (see SharedView). Which policy
 * manages a target of another namespace is that namespace's claim, worked out only for namespaces that share.
 */
export function sharedWith(
  targets: readonly TargetFacts[],
  caches: Pick<PolicyCaches, 'services' | 'ingresses' | 'policies'>,
  own: { namespace: string; view: NamespaceView },
  holder: (target: TargetRef) => string | undefined,
): SharedView {
  const clbs = new Set(targets.flatMap((t) => (t.loadBalancerId ? [t.loadBalancerId] : [])));
  // Only the namespace's own Ingresses can name its TkeServiceConfigs; CLBs are shared across namespaces.
  const elsewhere = (o: { metadata?: { namespace?: string } }) => o.metadata?.namespace !== own.namespace;
  const others = [...caches.services().filter(elsewhere).map(serviceFacts), ...caches.ingresses().filter(elsewhere).map(ingressFacts)].filter((t) => t.loadBalancerId && clbs.has(t.loadBalancerId));
  const views = new Map<string, NamespaceView>([[own.namespace, own.view]]);
  const viewOf = (ns: string): NamespaceView => {
    let v = views.get(ns);
    if (!v) views.set(ns, (v = namespaceView(ns, caches.services(ns), caches.ingresses(ns), caches.policies(ns), holder)));
    return v;
  };
  const policyOf = (t: TargetRef): string | undefined => {
    const winner = viewOf(t.namespace).claims.get(targetKey(t))?.winner;
    return winner ? ownerKey(winner.namespace, winner.name) : undefined;
  };
  return sharedView(targets, [...own.view.candidates, ...others], policyOf);
}

/**
 * The targets whose records belong to `owner` but that it does not manage (now): released. A record whose object
 * is gone (deleted, or replaced by another of the same name) is stale: it is only forgotten.
 */
export function orphansOf(records: readonly LoopbackRecord[], owner: OwnerKey, managed: ReadonlySet<string>, candidates: readonly TargetFacts[]): Orphan[] {
  const byKey = new Map(candidates.map((t) => [targetKey(t), t]));
  return records.flatMap((entry): Orphan[] => {
    if (!ownedBy(entry, owner)) return [];
    const t = entry.spec.target;
    // A managed target ignores a stale record (its next recording replaces it); releasing it here as well could
    // forget originals that round just recorded.
    if (managed.has(targetKey(t))) return [];
    const live = byKey.get(targetKey(t));
    const stale = !live || !madeFor(entry, live);
    const facts = live ?? ({ kind: t.kind, namespace: t.namespace, name: t.name, ...(t.kind === 'Service' ? { type: 'LoadBalancer', ports: [] } : { rules: [], tls: false }) } as TargetFacts);
    return [{ facts, entry, ...(stale ? { stale: true } : {}) }];
  });
}
