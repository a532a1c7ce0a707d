// Applying one step: the only place where a plan's step becomes a write. Each kind's effect is one module in ./steps/
// (its pure half in src/plan/steps/: docs/architecture.md §7); STEP_EFFECTS gathers them, exhaustive by kind.
import type { TargetRef } from '../model/facts.js';
import { entryOf, type Step, type StepKind, type StepOf } from '../plan/steps.js';
import { annotateTarget } from './steps/annotate-target.js';
import { awaitTke } from './steps/await-tke.js';
import { declareInTkeServiceConfig } from './steps/declare-in-tke-service-config.js';
import type { DriftKind, EffectDeps, StepEffect, StepEvent, StepResult } from './steps/effect.js';
import { recordOriginals } from './steps/record-originals.js';
import { removeFromTkeServiceConfig } from './steps/remove-from-tke-service-config.js';
import { setListenerHealthCheckSource } from './steps/set-listener-health-check-source.js';
import { setLoadBalancerPassToTarget } from './steps/set-load-balancer-pass-to-target.js';

export type { DriftKind, EffectDeps, StepEffect, StepEvent, StepResult } from './steps/effect.js';

/** Every step kind's effect, keyed by kind: a kind of `Step` missing here fails the typecheck. */
export const STEP_EFFECTS: { readonly [K in StepKind]: StepEffect<StepOf<K>> } = {
  RecordOriginals: recordOriginals,
  SetListenerHealthCheckSource: setListenerHealthCheckSource,
  SetLoadBalancerPassToTarget: setLoadBalancerPassToTarget,
  AnnotateTarget: annotateTarget,
  DeclareInTkeServiceConfig: declareInTkeServiceConfig,
  RemoveFromTkeServiceConfig: removeFromTkeServiceConfig,
  AwaitTke: awaitTke,
};

const effectOf = (step: Step) => entryOf<StepEffect<Step>>(STEP_EFFECTS, step);

/**
 * What the executor does to carry out one step, as one interface: the cluster's (CLB API, Kubernetes) in the
 * operator (clusterEffects), an in-memory world in the executor's unit tests.
 */
export interface Effects {
  apply(owner: string, target: TargetRef, step: Step, signal: AbortSignal): Promise<StepResult>;
}

/** The effects on the cluster: CLB writes through the client, Kubernetes writes, LoopbackRecords. */
export function clusterEffects(deps: EffectDeps): Effects {
  return { apply: (owner, target, step, signal) => effectOf(step).apply(deps, owner, target, step, signal) };
}

/** The Event a finished step leaves on its target (none for bookkeeping and waits). */
export function stepEvent(step: Step): StepEvent | undefined {
  return effectOf(step).event(step);
}

/** The drift correction a finished step counts as (loopguard_drift_corrections_total's `kind`), if it is one. */
export function driftCorrection(step: Step): DriftKind | undefined {
  return effectOf(step).driftCorrection?.(step);
}
