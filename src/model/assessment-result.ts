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
export type Mitigation = 'HealthCheckSourceRange100_64' | 'PreventLoopbackAnnotation' | 'Keepalive' | 'RuleHealthCheckSourceRange100_64' | 'ClbTrafficAllowedByDefault';

export interface Assessment {
  target: TargetRef;
  loadBalancerId?: string;
  verdict: Verdict;
  rootCause: RootCause;
  /** Mitigations in effect now. */
  mitigations: readonly Mitigation[];
  /** Where the target should end up; absent when loopguard manages nothing on it. */
  desired?: DesiredState;
  /** Ordered steps from the observed state to `desired` (the plan). Empty = converged. */
  changes: readonly Change[];
  blockers: readonly Blocker[];
  /** What the user can do beyond loopguard's plan (security groups, X-Forwarded-For). */
  advice: readonly string[];
  /** How callers could reach the target without the fault, each with its limits and source (src/model/topology.ts). */
  alternatives: readonly Alternative[];
  /** Problems with the target's annotations, for Warning Events. */
  warnings: readonly string[];
}

/**
 * The one empty list every assessment and outcome plan shares: their empty arrays were 2.5 MiB of the 11 MiB a round
 * over 12,000 targets held (bench/scale, 2026-11-26). Frozen: code adding to one fails instead of changing every one.
 */
const NONE: readonly never[] = Object.freeze([]);

/** `items`, or the shared empty list when there are none. */
export function list<T>(items: readonly T[] | undefined): readonly T[] {
  return items && items.length > 0 ? items : NONE;
}

/** An Assessment's parts: its root cause as id and message, the lists optional. */
export type AssessmentParts = Partial<Omit<Assessment, 'target' | 'verdict' | 'rootCause'>> & { rootCause: RootCauseId; message: string };

/** Builds an Assessment; the verdict always comes from the root-cause catalogue. */
export function assessment(target: TargetRef, parts: AssessmentParts): Assessment {
  return {
    target: { kind: target.kind, namespace: target.namespace, name: target.name },
    ...(parts.loadBalancerId !== undefined ? { loadBalancerId: parts.loadBalancerId } : {}),
    verdict: verdictOf(parts.rootCause),
    rootCause: { id: parts.rootCause, message: parts.message },
    mitigations: list(parts.mitigations),
    ...(parts.desired ? { desired: parts.desired } : {}),
    changes: list(parts.changes),
    blockers: list(parts.blockers),
    advice: list(parts.advice),
    alternatives: list(parts.alternatives),
    warnings: list(parts.warnings),
  };
}

/**
 * An assessment as a round keeps it to its end, for the status: without `desired` and the advice (only `loopguard
 * doctor` prints them), and without `changes` when the outcome carries its plan's steps (they stand in for none).
 */
export function keptForStatus(a: Assessment, withPlan: boolean): Assessment {
  const { desired: _desired, ...kept } = a;
  return { ...kept, advice: NONE, ...(withPlan ? { changes: NONE } : {}) };
}
