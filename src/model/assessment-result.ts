// The output of the assessment for one target, and the context it is computed in.
import type { ResolvedPolicySpec, Verdict } from '../api/loopbackpolicy.js';
import type { StalledReasonValue } from '../api/reasons.js';
import type { ClusterProfile } from './cluster-profile.js';
import type { Change, DesiredState } from './desired-state.js';
import type { AccountCapabilities, ClbObservation, TargetRef } from './facts.js';
import { verdictOf, type RootCause, type RootCauseId } from './root-causes.js';
import type { Alternative } from './topology.js';

export interface AssessmentContext {
  policy: ResolvedPolicySpec;
  profile: ClusterProfile;
  clb: ClbObservation;
  capabilities?: AccountCapabilities;
  /** Under a cluster policy with `skipAnnotation: Ignore`: loopguard.dev/skip opts nothing out (TKE's mode: skip still does). */
  ignoreSkipAnnotation?: boolean;
}

/** Something only a human can resolve; in Enforce mode it makes the policy Stalled. */
export interface Blocker {
  reason: StalledReasonValue;
  message: string;
}

/** Names of mitigations observed in effect on a target. */
export type Mitigation =
  | 'HealthCheckSourceRange100_64'
  | 'PreventLoopbackAnnotation'
  | 'Keepalive'
  | 'RuleHealthCheckSourceRange100_64'
  | 'ClbTrafficAllowedByDefault';

export interface Assessment {
  target: TargetRef;
  loadBalancerId?: string;
  verdict: Verdict;
  rootCause: RootCause;
  /** Mitigations in effect now. */
  mitigations: Mitigation[];
  /** Where the target should end up; absent when loopguard manages nothing on it. */
  desired?: DesiredState;
  /** Ordered steps from the observed state to `desired` (the plan). Empty = converged. */
  changes: Change[];
  blockers: Blocker[];
  /** What the user can do beyond loopguard's plan (security groups, X-Forwarded-For). */
  advice: string[];
  /** How callers could reach the target without the fault, each with its limits and source (src/model/topology.ts). */
  alternatives: Alternative[];
  /** Problems with the target's annotations, for Warning Events. */
  warnings: string[];
}

export interface AssessmentParts {
  rootCause: RootCauseId;
  message: string;
  loadBalancerId?: string;
  mitigations?: Mitigation[];
  desired?: DesiredState;
  changes?: Change[];
  blockers?: Blocker[];
  advice?: string[];
  alternatives?: Alternative[];
  warnings?: string[];
}

/** Builds an Assessment; the verdict always comes from the root-cause catalogue. */
export function assessment(target: TargetRef, parts: AssessmentParts): Assessment {
  return {
    target: { kind: target.kind, namespace: target.namespace, name: target.name },
    ...(parts.loadBalancerId !== undefined ? { loadBalancerId: parts.loadBalancerId } : {}),
    verdict: verdictOf(parts.rootCause),
    rootCause: { id: parts.rootCause, message: parts.message },
    mitigations: parts.mitigations ?? [],
    ...(parts.desired ? { desired: parts.desired } : {}),
    changes: parts.changes ?? [],
    blockers: parts.blockers ?? [],
    advice: parts.advice ?? [],
    alternatives: parts.alternatives ?? [],
    warnings: parts.warnings ?? [],
  };
}
