// Entry point of the pure assessment: one target + the policy + the cluster profile + its CLB →
// verdict, root cause and desired state. Audit and Enforce get the same plan; the mode only decides
// whether the controllers apply it. See docs/diagnosis.md for every rule and its source.
import { assessment, type Assessment, type AssessmentContext } from './assessment-result.js';
import { assessIngress } from './assess-ingress.js';
import { assessService } from './assess-service.js';
import type { TargetFacts, TargetRef } from './facts.js';
import { describePolicy, lostByPrecedence, type PolicyIdentity } from './conflicts.js';

export type { Assessment, AssessmentContext, Blocker, Mitigation } from './assessment-result.js';

export function assessTarget(target: TargetFacts, ctx: AssessmentContext): Assessment {
  return target.kind === 'Service' ? assessService(target, ctx) : assessIngress(target, ctx);
}

/**
 * The verdict for a target another policy (`winner`) manages: by record and age within one kind (PolicyConflict), or
 * by a cluster policy's precedence between kinds (PolicyPrecedence). `loser` is the policy reporting it.
 */
export function conflictAssessment(target: TargetRef, winner: PolicyIdentity, loser?: PolicyIdentity, deferred = false): Assessment {
  if (loser && deferred) {
    return assessment(target, {
      rootCause: 'PolicyPrecedence',
      message: `precedence gives this target to this policy, but it is in Audit here: ${describePolicy(winner)} keeps managing it (an Audit policy reports, it never takes a target from a policy that enforces it); in Enforce mode this policy takes it over`,
    });
  }
  if (loser && lostByPrecedence(winner, loser)) {
    const clusterWins = winner.kind !== undefined;
    return assessment(target, {
      rootCause: 'PolicyPrecedence',
      message: clusterWins
        ? `managed by ${describePolicy(winner)}, whose precedence is ClusterFirst: a cluster policy the platform team set to govern this namespace's targets; this policy changes nothing on it`
        : `managed by ${describePolicy(winner)}: the cluster policy's precedence is NamespacedFirst, so the namespace's own policy governs the target (set precedence: ClusterFirst on the cluster policy to take it)`,
    });
  }
  return assessment(target, {
    rootCause: 'PolicyConflict',
    message: `also selected by ${describePolicy(winner)}, which manages it (it holds the target's record, or is older); narrow one of the selectors so each target has one policy`,
  });
}

/** A target won by precedence from `holder`, which holds its record: Pending until holder has given the originals back. */
export function handoverAssessment(target: TargetRef, holder: PolicyIdentity): Assessment {
  return assessment(target, {
    rootCause: 'PolicyHandover',
    message: `this policy takes the target over by precedence; ${describePolicy(holder)} gives back what it changed first, so the two never write the same CLB at once`,
  });
}
