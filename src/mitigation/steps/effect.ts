// What a step kind is to the executor: its effect through EffectDeps, and the Event and metric a finished step leaves;
// one object per kind, gathered in STEP_EFFECTS (../effects.ts). Each `apply` is idempotent (it reads what it changes
// and skips a write that would change nothing), so a step repeated after a restart is harmless. A step's result is
// data, never an exception for the target's own failure: the executor classifies thrown errors, and verification
// verdicts (TKE did not apply a config) come back as `failed`.
import type { Originals } from '../../api/originals.js';
import type { CallOptions, ClbClient } from '../../cloud/index.js';
import type { ClbObserver } from '../../cloud/clb-observer.js';
import type { KubeWriter } from '../../kube/writer.js';
import type { TargetRef } from '../../model/facts.js';
import type { RecordRegistry } from '../../model/record-registry.js';
import type { TargetError } from '../../model/status.js';
import { isEmptyOriginals } from '../../api/originals.js';
import type { LearnedCapabilities } from '../capabilities.js';
import type { WaitClock } from '../tke-wait.js';

export type StepResult =
  | { status: 'done' }
  /** `since`: when a wait for TKE began (ms), so the round reads again right after its grace period. */
  | { status: 'waiting'; note: string; since?: number }
  /** Not carried out: what it was for happened meanwhile; the next round plans from a fresh read. */
  | { status: 'superseded'; note: string }
  | { status: 'gone' }
  | { status: 'failed'; error: TargetError };

export interface EffectDeps {
  writer: Pick<KubeWriter, 'get' | 'patchAnnotations' | 'envoyServiceAnnotations' | 'patchEnvoyServiceAnnotations' | 'patchConfig' | 'eventsOf'>;
  /** The ownership registry (LoopbackRecords). */
  records: Pick<RecordRegistry, 'update'>;
  clb: Pick<ClbClient, 'describeListeners' | 'modifyListenerHealthCheck' | 'modifyLoadBalancerPassToTarget' | 'reserve'>;
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

/** The Event a finished step leaves on its target; its message is the step's description. */
export interface StepEvent {
  type: 'Normal' | 'Warning';
  reason: string;
}

/** The `kind` label of loopguard_drift_corrections_total: what was put back outside loopguard. */
export type DriftKind = 'ListenerHealthCheckSource' | 'Ingress';

export interface StepEffect<S> {
  /** Carries the step out for `owner` (the policy, namespace/name) on `target`. */
  apply(deps: EffectDeps, owner: string, target: TargetRef, step: S, signal: AbortSignal): Promise<StepResult>;
  /** The Event the finished step leaves on its target; undefined: none (bookkeeping, waits). */
  event(step: S): StepEvent | undefined;
  /** The drift correction the finished step counts as; undefined: none. */
  driftCorrection?(step: S): DriftKind | undefined;
}

export const DONE: StepResult = { status: 'done' };

/**
 * How old the observation behind a write may be (ms): a round reads again and plans once more before executing on
 * an older one (`planOnFreshReads`, controllers/policy/round.ts), and a listener write sends back a listener struct no older.
 */
export const FRESH_BEFORE_WRITE_MS = 30_000;

export function writeOptions(deps: EffectDeps, signal: AbortSignal): CallOptions {
  return { signal, ...(deps.stopping ? { stopping: deps.stopping } : {}), ...(deps.mayWrite ? { mayWrite: deps.mayWrite } : {}) };
}

/**
 * Sends a CLB write; when it fails, the observer forgets the CLB. A failure after the submission (a poll timeout)
 * leaves the CLB's state unknown (the task may well have succeeded), and planning again from the old observation
 * would write the change twice (test/integration/heavy-throttling.test.ts); forgotten, the CLB is read again first.
 */
export async function writeOrForget(deps: Pick<EffectDeps, 'observer'>, loadBalancerId: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    deps.observer.invalidate(loadBalancerId);
    throw err;
  }
}

/** A record that holds nothing is no record: the store deletes it. */
export function nonEmpty(record: Originals): Originals | undefined {
  return isEmptyOriginals(record) ? undefined : record;
}

/**
 * A change TKE's controllers act on (an annotation, docs/tencent-cloud.md §2; a TkeServiceConfig edit, §1) makes TKE
 * sync the object, reading the CLB on the account quota loopguard shares: one DescribeListeners, we assume (undocumented;
 * as the TKE simulator does). While that action is congested the change waits for one of loopguard's budget
 * (ClbClient.reserve), so loopguard slows the reads it causes along with its own (bench:fleet).
 */
export function paceTkeSync(deps: Pick<EffectDeps, 'clb' | 'stopping'>, signal: AbortSignal): Promise<void> {
  return deps.clb.reserve('DescribeListeners', { signal, ...(deps.stopping ? { stopping: deps.stopping } : {}) });
}
