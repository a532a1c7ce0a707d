// The targets a policy manages, read from the informer caches: selection, conflicts with other policies of the
// namespace, and the CLB each one is bound to.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { withSpecDefaults, type LoopbackPolicy } from '../../api/loopbackpolicy.js';
import { resolveConflicts, type Claim, type Ownership, type PolicyIdentity } from '../../model/conflicts.js';
import type { TargetFacts, TargetRef } from '../../model/facts.js';
import { selectTargets } from '../../model/selection.js';
import { ingressFacts, serviceFacts } from '../../model/target-facts.js';

export function policyIdentity(p: LoopbackPolicy): PolicyIdentity {
  const created = p.metadata.creationTimestamp as unknown;
  return {
    namespace: p.metadata.namespace ?? '',
    name: p.metadata.name ?? '',
    ...(created ? { creationTimestamp: created instanceof Date ? created.toISOString() : String(created) } : {}),
  };
}

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
