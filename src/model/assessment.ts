// Entry point of the pure assessment: one target + the policy + the cluster profile + its CLB →
// verdict, root cause and desired state. Audit and Enforce get the same plan; the mode only decides
// whether the controllers apply it. See docs/diagnosis.md for every rule and its source.
import { assessment, type Assessment, type AssessmentContext } from './assessment-result.js';
import { assessIngress } from './assess-ingress.js';
import { assessService } from './assess-service.js';
import type { TargetFacts, TargetRef } from './facts.js';
import type { PolicyIdentity } from './conflicts.js';

export type { Assessment, AssessmentContext, Blocker, Mitigation } from './assessment-result.js';

export function assessTarget(target: TargetFacts, ctx: AssessmentContext): Assessment {
  return target.kind === 'Service' ? assessService(target, ctx) : assessIngress(target, ctx);
}

/** The verdict for a target that an older policy (`winner`) already manages. */
export function conflictAssessment(target: TargetRef, winner: PolicyIdentity): Assessment {
  return assessment(target, {
    rootCause: 'PolicyConflict',
    message: `also selected by LoopbackPolicy ${winner.namespace}/${winner.name}, which manages it (it holds the target's record, or is older); narrow one of the selectors so each target has one policy`,
  });
}
