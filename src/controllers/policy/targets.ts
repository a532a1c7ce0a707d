// The targets a policy manages, read from the informer caches: selection, conflicts with other policies of the
// namespace, and the CLB each one is bound to.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { withSpecDefaults, type LoopbackPolicy } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { ownedBy, sameObject } from '../../plan/ownership.js';
import { targetKey } from '../../model/facts.js';
import type { Orphan } from './round.js';
import { policyIdentity, resolveConflicts, type Claim, type Ownership } from '../../model/conflicts.js';

export { policyIdentity };
import type { TargetFacts, TargetRef } from '../../model/facts.js';
import { selectTargets } from '../../model/selection.js';
import { ingressFacts, serviceFacts } from '../../model/target-facts.js';


export interface NamespaceView {
  candidates: TargetFacts[];
  ownership: Map<string, Ownership>;
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
  return { candidates, ownership: resolveConflicts(claims, holder) };
}

/**
 * The targets whose records belong to `owner` but that it does not manage (now): released. A record whose object
 * is gone (deleted, or replaced by another of the same name) is stale: it is only forgotten.
 */
export function orphansOf(records: readonly LoopbackRecord[], owner: string, managed: ReadonlySet<string>, candidates: readonly TargetFacts[]): Orphan[] {
  const byKey = new Map(candidates.map((t) => [targetKey(t), t]));
  return records.flatMap((entry): Orphan[] => {
    if (!ownedBy(entry, owner)) return [];
    const t = entry.spec.target;
    // A managed target ignores a stale record (its next recording replaces it); releasing it here as well could
    // forget originals that round just recorded.
    if (managed.has(targetKey(t))) return [];
    const live = byKey.get(targetKey(t));
    const stale = !live || !sameObject(entry, live);
    const facts = live ?? ({ kind: t.kind, namespace: t.namespace, name: t.name, ...(t.kind === 'Service' ? { type: 'LoadBalancer', ports: [] } : { rules: [], tls: false }) } as TargetFacts);
    return [{ facts, entry, ...(stale ? { stale: true } : {}) }];
  });
}
