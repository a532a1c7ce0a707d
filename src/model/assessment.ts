// Entry point of the pure assessment: one target + the policy + the cluster profile + its CLB →
// verdict, root cause and desired state. Audit and Enforce get the same plan; the mode only decides
// whether the controllers apply it. See docs/diagnosis.md for every rule and its source.
import { assessment, type Assessment, type AssessmentContext } from './assessment-result.js';
import { assessed } from './assess-common.js';
import { decideIngress } from './assess-ingress.js';
import { assessGateway } from './assess-gateway.js';
import { decideService } from './assess-service.js';
import type { TargetFacts, TargetRef } from './facts.js';
import { CLUSTER_KIND } from '../api/clusterloopbackpolicy.js';
import { describePolicy, samePolicy, type ClaimResolution, type Loser, type PolicyIdentity } from './conflicts.js';

export type { Assessment, AssessmentContext, Blocker, Mitigation } from './assessment-result.js';

export function assessTarget(target: TargetFacts, ctx: AssessmentContext): Assessment {
  switch (target.kind) {
    case 'Service':
      return assessed(target, decideService(target, ctx));
    case 'Ingress':
      return assessed(target, decideIngress(target, ctx));
    case 'Gateway':
      return assessGateway(target, ctx);
  }
}

/**
 * The verdict for a target another policy (`resolution.winner`) manages, as `loser` lost it (docs/cluster-policy.md §5):
 * by mode or by precedence between kinds (PolicyPrecedence), or by age within one kind (PolicyConflict).
 */
export function conflictAssessment(target: TargetRef, resolution: Pick<ClaimResolution, 'winner' | 'decidedBy'>, loser?: Loser): Assessment {
  const { winner, decidedBy } = resolution;
  const overruled = disagreement(loser, decidedBy);
  const by = describePolicy(winner);
  if (loser?.by === 'Mode') {
    return assessment(target, { rootCause: 'PolicyPrecedence', message: `managed by ${by}, which enforces it: this policy is in Audit here, and an Audit policy never takes a target from one that enforces it` });
  }
  if (loser?.by === 'Precedence') {
    const message =
      winner.kind !== undefined
        ? `managed by ${by}, whose precedence is ClusterFirst: a cluster policy the platform team set to govern this namespace's targets; this policy changes nothing on it`
        : `managed by ${by}: the cluster policy's precedence is NamespacedFirst, so the namespace's own policy governs the target (set precedence: ClusterFirst on the cluster policy to take it)`;
    return assessment(target, { rootCause: 'PolicyPrecedence', message: message + overruled });
  }
  return assessment(target, {
    rootCause: 'PolicyConflict',
    message: `also selected by ${by}, which manages it (it is older); narrow one of the selectors so each target has one policy${overruled}`,
  });
}

/** A cluster policy whose precedence was not the one that decided (an older cluster policy's was): say so, naming it. */
function disagreement(loser: Loser | undefined, decidedBy: PolicyIdentity | undefined): string {
  const mine = loser?.policy;
  if (!mine || mine.kind !== CLUSTER_KIND || !decidedBy || samePolicy(mine, decidedBy) || mine.precedence === decidedBy.precedence) return '';
  return `; between kinds the oldest cluster policy covering the namespace decides, ${describePolicy(decidedBy)} (${decidedBy.precedence ?? 'NamespacedFirst'}), not this policy's ${mine.precedence ?? 'NamespacedFirst'}: give the two disjoint namespaceSelectors or the same precedence`;
}

/** A target this policy now manages while `holder` still holds its record: Pending until holder has given the originals back. */
export function handoverAssessment(target: TargetRef, holder: PolicyIdentity): Assessment {
  return assessment(target, {
    rootCause: 'PolicyHandover',
    message: `this policy takes the target over by precedence; ${describePolicy(holder)} gives back what it changed first, so the two never write the same CLB at once`,
  });
}
