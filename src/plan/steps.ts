// The steps of a plan: one vocabulary for what Audit prints (status.targets[].plan) and what Enforce executes.
// Each step is one write (or one wait) with everything the executor needs; its description is the line a user
// reads, before (Audit) and after (the executor logs every executed step with the same text).
//
// A kind is two small files, each keyed by kind in a table the compiler makes exhaustive: its shape and description,
// pure, here (./steps/<kind>.ts, STEP_KINDS); its effect, Event and metric in src/mitigation/steps/ (STEP_EFFECTS).
// Why two, and how to add a kind: docs/architecture.md §7 "a step kind" (under "Where a newcomer adds…").
import type { TargetRef } from '../model/facts.js';
import type { TargetError } from '../model/status.js';
import { annotateTarget, type AnnotateTargetStep } from './steps/annotate-target.js';
import { awaitTke, type AwaitTkeStep } from './steps/await-tke.js';
import { declareInTkeServiceConfig, type DeclareInTkeServiceConfigStep } from './steps/declare-in-tke-service-config.js';
import type { StepKindPlan } from './steps/kind.js';
import { recordOriginals, type RecordOriginalsStep } from './steps/record-originals.js';
import { removeFromTkeServiceConfig, type RemoveFromTkeServiceConfigStep } from './steps/remove-from-tke-service-config.js';
import { setListenerHealthCheckSource, type SetListenerHealthCheckSourceStep } from './steps/set-listener-health-check-source.js';
import { setLoadBalancerPassToTarget, type SetLoadBalancerPassToTargetStep } from './steps/set-load-balancer-pass-to-target.js';

export type { AwaitReason, AwaitTkeStep } from './steps/await-tke.js';
export type { StepKindPlan } from './steps/kind.js';

export type Layer = 'L4' | 'L7';

export type Step =
  | RecordOriginalsStep
  | SetListenerHealthCheckSourceStep
  | SetLoadBalancerPassToTargetStep
  | AnnotateTargetStep
  | DeclareInTkeServiceConfigStep
  | RemoveFromTkeServiceConfigStep
  | AwaitTkeStep;

export type StepKind = Step['kind'];

/** The step of one kind. */
export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

export interface TargetPlan {
  target: TargetRef;
  layer: Layer;
  /** `Mitigate`: a target the policy manages; `Release`: give back what loopguard changed on it. */
  purpose: 'Mitigate' | 'Release';
  steps: Step[];
  /** A problem found while planning that only a human can fix; the steps stop before it. */
  error?: TargetError;
}

/** Every step kind's pure half, keyed by kind: a kind missing here, or not in `Step`, fails the typecheck. */
export const STEP_KINDS: { readonly [K in StepKind]: StepKindPlan<StepOf<K>> } = {
  RecordOriginals: recordOriginals,
  SetListenerHealthCheckSource: setListenerHealthCheckSource,
  SetLoadBalancerPassToTarget: setLoadBalancerPassToTarget,
  AnnotateTarget: annotateTarget,
  DeclareInTkeServiceConfig: declareInTkeServiceConfig,
  RemoveFromTkeServiceConfig: removeFromTkeServiceConfig,
  AwaitTke: awaitTke,
};

/** The entry of a step's own kind in a table keyed by kind (STEP_KINDS, STEP_EFFECTS): the compiler cannot follow a union through an index. */
export function entryOf<E>(table: { readonly [K in StepKind]: E }, step: Step): E {
  return table[step.kind];
}
const kindOf = (step: Step) => entryOf<StepKindPlan<Step>>(STEP_KINDS, step);

/** The line Audit prints and the executor logs for a step. */
export function describeStep(step: Step): string {
  return kindOf(step).describe(step);
}

/** The annotations a step sets on its target (null removes); none for a step that does not annotate. */
export function annotationsSet(step: Step): Readonly<Record<string, string | null>> {
  return kindOf(step).annotations?.(step) ?? {};
}

/** The target's annotations after the executed steps (for assessing it again without a read). */
export function annotationsAfter(annotations: Readonly<Record<string, string>> | undefined, executed: readonly Step[]): Record<string, string> {
  const out: Record<string, string> = { ...(annotations ?? {}) };
  for (const s of executed) {
    for (const [k, v] of Object.entries(annotationsSet(s))) {
      if (v === null) delete out[k];
      else out[k] = v;
    }
  }
  return out;
}

/** Whether the step is a wait for TKE. */
export function isTkeWait(step: Step | undefined): boolean {
  return step !== undefined && kindOf(step).wait !== undefined;
}

/** When the plan says a wait for TKE began (undefined: not a wait, or the plan gives no start). */
export function waitSince(step: Step | undefined): string | undefined {
  return step === undefined ? undefined : kindOf(step).wait?.since(step);
}

/** Whether Audit after Enforce still carries the step out on a target the policy holds (StepKindPlan.maintainedInAudit). */
export function maintainedInAudit(step: Step): boolean {
  return kindOf(step).maintainedInAudit?.(step) ?? false;
}
