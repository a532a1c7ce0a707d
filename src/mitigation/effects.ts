// Applying one step: the only place where a plan's step becomes a write. Each function is idempotent (it reads
// what it changes and skips a write that would change nothing), so a step repeated after a restart is harmless.
// A step's result is data, never an exception for the target's own failure: the executor classifies thrown
// errors, and verification verdicts (TKE did not apply a config) come back as `failed`.
import type { Originals } from '../api/originals.js';
import { describeCloudError, type CallOptions, type ClbClient, type ListenerInfo } from '../cloud/index.js';
import type { ClbObserver } from '../cloud/clb-observer.js';
import type { KubeWriter } from '../kube/writer.js';
import type { TargetRef } from '../model/facts.js';
import type { RecordRegistry } from '../model/record-registry.js';
import type { TargetError } from '../model/status.js';
import { buildConfigPatch, buildRemovalPatch } from '../plan/config-patch.js';
import { healthCheckFor } from '../plan/l4.js';
import { isEmptyOriginals, mergeOriginals, withoutFields } from '../api/originals.js';
import { TKE_GRACE_MS } from '../model/tke-timing.js';
import type { Step } from '../plan/steps.js';
import type { LearnedCapabilities } from './capabilities.js';
import type { EventView } from './tke-events.js';
import { judgeWait, type WaitClock } from './tke-wait.js';

export type StepResult =
  | { status: 'done' }
  /** `since`: when a wait for TKE began (ms), so the round reads again right after its grace period. */
  | { status: 'waiting'; note: string; since?: number }
  /** Not carried out: what it was for happened meanwhile; the next round plans from a fresh read. */
  | { status: 'superseded'; note: string }
  | { status: 'gone' }
  | { status: 'failed'; error: TargetError };

export interface EffectDeps {
  writer: Pick<KubeWriter, 'get' | 'patchAnnotations' | 'patchConfig' | 'eventsOf'>;
  /** The ownership registry (LoopbackRecords). */
  records: Pick<RecordRegistry, 'update'>;
  clb: Pick<ClbClient, 'describeListeners' | 'modifyListenerHealthCheck' | 'modifyLoadBalancerPassToTarget'>;
  /** Told of every write whose task succeeded (its cache is the post-write read). */
  observer: Pick<ClbObserver, 'rawListeners' | 'observedAt' | 'invalidate' | 'listenerSourceWritten' | 'passToTargetWritten'>;
  capabilities: Pick<LearnedCapabilities, 'learn' | 'forget'>;
  /** Aborts when shutdown begins: a CLB write not submitted yet is dropped then (CallOptions.stopping). */
  stopping?: AbortSignal;
  /** The leader's fence (LeaderElector.mayWrite), asked before every step and every CLB submission. */
  mayWrite?: () => boolean;
  /** TKE's grace period (--tke-grace-period; default TKE_GRACE_MS). */
  tkeGraceMs?: number;
  /** When each wait for TKE began (the Executor makes one). */
  waits?: WaitClock;
}

/**
 * What the executor does to carry out one step, as one interface: the cluster's (CLB API, Kubernetes) in the
 * operator (clusterEffects), an in-memory world in the executor's unit tests.
 */
export interface Effects {
  apply(owner: string, target: TargetRef, step: Step, signal: AbortSignal): Promise<StepResult>;
}

/** The effects on the cluster: CLB writes through the client, Kubernetes writes, LoopbackRecords. */
export function clusterEffects(deps: EffectDeps): Effects {
  return { apply: (owner, target, step, signal) => applyStep(deps, owner, target, step, signal) };
}

export { TKE_SYNC_FAILED } from './tke-wait.js';

const DONE: StepResult = { status: 'done' };

function sourceOf(l: ListenerInfo | undefined): 0 | 1 {
  return l?.healthCheck?.SourceIpType === 1 ? 1 : 0;
}

function writeOptions(deps: EffectDeps, signal: AbortSignal): CallOptions {
  return { signal, ...(deps.stopping ? { stopping: deps.stopping } : {}), ...(deps.mayWrite ? { mayWrite: deps.mayWrite } : {}) };
}

/** A record that holds nothing is no record: the store deletes it. */
function nonEmpty(record: Originals): Originals | undefined {
  return isEmptyOriginals(record) ? undefined : record;
}

export async function applyStep(deps: EffectDeps, owner: string, target: TargetRef, step: Step, signal: AbortSignal): Promise<StepResult> {
  const { writer, clb, observer } = deps;
  const { kind, namespace, name } = target;
  switch (step.kind) {
    case 'RecordOriginals': {
      // Only for the object that is there now (its uid ties the record to it); merged into the record as stored,
      // so an original recorded by an earlier write always survives.
      const object = await writer.get(kind, namespace, name);
      if (!object) return { status: 'gone' };
      await deps.records.update({ ...target, uid: object.metadata?.uid }, owner, (current) => nonEmpty(mergeOriginals(current, step.record)), { takeOver: true });
      return DONE;
    }
    case 'AnnotateTarget': {
      const object = await writer.get(kind, namespace, name);
      const self = { ...target, uid: object?.metadata?.uid };
      // Originals before the change they belong to; a release's forgetting after the restore it records.
      if (step.record) {
        if (!object) return { status: 'gone' };
        await deps.records.update(self, owner, (current) => nonEmpty(mergeOriginals(withoutFields(current, step.forget ?? []), step.record!)), { takeOver: true });
      }
      if (object && Object.keys(step.set).length > 0) await writer.patchAnnotations(kind, namespace, name, () => step.set, object);
      if (step.forget && !step.record) await deps.records.update(self, owner, (current) => nonEmpty(withoutFields(current, step.forget ?? [])), { takeOver: false });
      // A target that is gone has nothing left to annotate or restore; a release goes on to forget its record.
      return object || step.forget || step.restore ? DONE : { status: 'gone' };
    }
    case 'SetListenerHealthCheckSource': {
      const lbId = step.loadBalancerId;
      // A restore reads fresh (it may come long after the last observation), and so does a switch TKE was asked to
      // make (its grace period is over, but TKE may be acting right now: a listener it switched since the
      // observation is not written twice); any other switch uses the observation just made.
      let raw = step.restore || step.why ? undefined : observer.rawListeners(lbId);
      let listener = raw?.find((l) => l.listenerId === step.listenerId);
      if (!listener) {
        try {
          raw = await clb.describeListeners(lbId, { signal });
        } catch (err) {
          // A CLB that is gone has nothing left to restore.
          if (step.restore && describeCloudError(err).reason === 'ClbNotFound') return DONE;
          throw err;
        }
        listener = raw.find((l) => l.listenerId === step.listenerId);
      }
      if (!listener) {
        if (step.restore) return DONE; // the listener is gone: nothing left to restore
        return { status: 'failed', error: { reason: 'ListenerNotFound', message: `listener ${step.listenerId} of CLB ${lbId} is gone; reading the CLB again`, permanent: false } };
      }
      if (step.why && sourceOf(listener) === step.to) {
        // TKE switched it after the round's read: its change, not loopguard's. The plan's next steps would record it
        // as loopguard's (restored on revert, even under the user's own prevent-loopback): plan again instead.
        observer.invalidate(lbId);
        return { status: 'superseded', note: `TKE switched listener ${step.listenerId} of CLB ${lbId} meanwhile; planning again from a fresh read` };
      }
      if (sourceOf(listener) !== step.to) await clb.modifyListenerHealthCheck(lbId, step.listenerId, healthCheckFor(listener, step.to), writeOptions(deps, signal));
      observer.listenerSourceWritten(lbId, step.listenerId, step.to);
      if (step.to === 1) deps.capabilities.forget('range100_64Rejected');
      return DONE;
    }
    case 'SetLoadBalancerPassToTarget':
      await clb.modifyLoadBalancerPassToTarget(step.loadBalancerId, step.to, writeOptions(deps, signal));
      observer.passToTargetWritten(step.loadBalancerId, step.to);
      return DONE;
    case 'DeclareInTkeServiceConfig': {
      const result = await writer.patchConfig(namespace, step.config, (spec) => buildConfigPatch(spec, step.edits, step.vip));
      // Gone between the plan and now: the next round plans on the config as it is (or its absence).
      return result === 'gone' ? { status: 'waiting', note: `TkeServiceConfig ${step.config} disappeared; planning again` } : DONE;
    }
    case 'RemoveFromTkeServiceConfig':
      await writer.patchConfig(namespace, step.config, (spec) => buildRemovalPatch(spec, step.removals, step.vip));
      return DONE;
    case 'AwaitTke':
      return awaitTke(deps, target, step, signal);
  }
}

/** Verification of what TKE was asked to do: TKE's own Warning Event or the grace period ends the wait (tke-wait.ts). */
async function awaitTke(deps: EffectDeps, target: TargetRef, step: Extract<Step, { kind: 'AwaitTke' }>, signal: AbortSignal): Promise<StepResult> {
  const now = Date.now();
  // The config is read from the informer (as fresh as now); everything else from the CLB read the plan was made on.
  const observedAtMs = step.reason === 'ConfigCreated' ? now : deps.observer.observedAt(step.loadBalancerId);
  // Each wait ends with a fresh read of the CLB at the next round.
  deps.observer.invalidate(step.loadBalancerId);
  // Without a clock (EffectDeps built by hand), a wait without `since` ends only by TKE's Warning.
  const sinceMs = deps.waits?.since(target, step, now) ?? (step.since ? Math.min(Date.parse(step.since), now) : now);
  let events: EventView[] = [];
  if (!signal.aborted) events = (await deps.writer.eventsOf(target.kind, target.namespace, target.name)) as EventView[];
  const verdict = judgeWait({ step, target, events, sinceMs, observedAtMs, nowMs: now, graceMs: deps.tkeGraceMs ?? TKE_GRACE_MS });
  if (verdict.status === 'waiting') return { ...verdict, since: sinceMs };
  if (verdict.keepaliveRejected) deps.capabilities.learn('keepaliveRejected', verdict.keepaliveRejected);
  return { status: 'failed', error: verdict.error };
}
