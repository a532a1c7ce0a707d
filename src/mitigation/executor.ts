// Enforce: runs a policy plan exactly as planned (docs/execution.md "Ordering (the preconditions)", "The executor").
// Per target, steps run in order and the first one that does not finish (a wait for TKE, a failure) ends the target's
// run; targets run side by side. A target's failure is its outcome, never an exception, so one target can never hide
// another's result; only an abort (the shutdown grace period ended) throws. Once shutdown begins (`stopping`), no new
// step starts, while a step in flight goes on until its signal aborts.
import { involvedObject } from '../api/loopbackpolicy.js';
import { EventReason, type ErrorReason, type EventReasonValue } from '../api/reasons.js';
import { describeCloudError } from '../cloud/index.js';
import type { EventRecorder } from '../kube/events.js';
import { describeOwner } from '../model/record-registry.js';
import type { TargetError } from '../model/status.js';
import { describeStep, isTkeWait, type Step, type TargetPlan } from '../plan/steps.js';
import type { Logger } from '../runtime/logger.js';
import type { Metrics } from '../runtime/metrics.js';
import { settleAll } from '../runtime/settle.js';
import type { LearnedCapabilities } from './capabilities.js';
import { driftCorrection, stepEvent, type Effects } from './effects.js';
import { CAPABILITY_MISSING, classifyError } from './errors.js';
import { WaitClock } from './tke-wait.js';

/** What happened to one target's plan this round. */
export interface Execution {
  plan: TargetPlan;
  /** The steps carried out, in order (a prefix of `plan.steps`). */
  executed: Step[];
  /** The run ended at a wait for TKE; the note says for what. */
  waiting?: string;
  /** When that wait began (ms; TKE's grace period counts from it). */
  waitSince?: number;
  error?: TargetError;
  /** The target disappeared while its steps ran. */
  gone?: boolean;
  /**
   * Shutdown ended the run at `step`: before it started (`inFlight` false: shutdown had begun), or while it ran
   * (true: the grace period ended; a CLB task it submitted may still finish).
   */
  stopped?: { step: Step; inFlight: boolean };
}

/** The steps not carried out yet; a wait stays on the list until TKE has done what it waits for. */
export function remainingSteps(e: Execution): Step[] {
  const rest = e.plan.steps.slice(e.executed.length);
  return e.waiting ? [e.plan.steps[e.executed.length - 1] as Step, ...rest] : rest;
}

/** Thrown by `execute` when its signal aborted; `stopped` says where each interrupted target was. */
export class ExecutionInterrupted extends Error {
  constructor(readonly stopped: readonly Execution[], options?: ErrorOptions) {
    super(`interrupted by shutdown: ${stopped.length} target(s) stopped mid-plan`, options);
    this.name = 'ExecutionInterrupted';
  }

  /** One interruption out of several (chunks of a round), plus targets stopped earlier: every target stopped. */
  static merge(errors: readonly unknown[], stoppedBefore: readonly Execution[] = []): ExecutionInterrupted {
    const stopped = errors.flatMap((e) => (e instanceof ExecutionInterrupted ? e.stopped : []));
    return new ExecutionInterrupted([...stoppedBefore, ...stopped], { cause: errors[0] });
  }
}

export interface ExecutorDeps {
  /** How a step is carried out (clusterEffects in the operator). */
  effects: Effects;
  /** Refusals learned from failures (a missing 100.64 capability). */
  capabilities: Pick<LearnedCapabilities, 'learn'>;
  events: Pick<EventRecorder, 'record'>;
  logger: Pick<Logger, 'info' | 'warn'>;
  metrics: Pick<Metrics, 'driftCorrections'>;
  /** Aborts when shutdown begins: no new step starts. */
  stopping?: AbortSignal;
  /** The leader's fence (LeaderElector.mayWrite), asked before every step. */
  mayWrite?: () => boolean;
  /** Targets worked on at once; the CLB client's budgets and per-CLB write gate do the real pacing. */
  concurrency?: number;
  /**
   * When each wait for TKE began: the clock the effects judge waits by (give clusterEffects the same one); the
   * executor ends a target's wait when its run gets past it. Default: one of its own.
   */
  waits?: WaitClock;
}

const DEFAULT_CONCURRENCY = 256;

/** The Event reason of a step's failure, by its error's reason; any other is a CLB write that failed. */
const FAILURE_EVENTS: Readonly<Partial<Record<ErrorReason, EventReasonValue>>> = {
  PermissionDenied: EventReason.PermissionDenied,
  ...Object.fromEntries(CAPABILITY_MISSING.map((r) => [r, EventReason.CapabilityMissing])),
  RecordLost: EventReason.RecordLost,
  InvalidRequest: EventReason.TargetUpdateFailed,
  TargetMisconfigured: EventReason.TargetUpdateFailed,
  TkeSyncFailed: EventReason.TargetUpdateFailed,
};

export class Executor {
  private readonly d: ExecutorDeps;

  constructor(deps: ExecutorDeps) {
    this.d = { ...deps, waits: deps.waits ?? new WaitClock() };
  }

  /** Runs every plan; resolves with one execution per plan, in the same order. */
  async execute(owner: string, plans: readonly TargetPlan[], signal: AbortSignal): Promise<Execution[]> {
    const settled = await settleAll(plans, this.d.concurrency ?? DEFAULT_CONCURRENCY, (plan) => this.run(owner, plan, signal));
    if (signal.aborted) {
      const stopped = settled.flatMap((r) => (r.status === 'fulfilled' && r.value.stopped ? [r.value] : []));
      throw new ExecutionInterrupted(stopped, { cause: signal.reason });
    }
    return settled.map((r, i) => (r.status === 'fulfilled' ? r.value : { plan: plans[i] as TargetPlan, executed: [], error: classifyError(r.reason, 'executing the plan') }));
  }

  private async run(owner: string, plan: TargetPlan, signal: AbortSignal): Promise<Execution> {
    const e = await this.steps(owner, plan, signal);
    // A run that did not end at a wait for TKE ended every wait of the target: the next one starts its own clock.
    if (!(e.waiting && isTkeWait(e.executed.at(-1))) && !e.stopped && !(e.error && isTkeWait(plan.steps[e.executed.length]))) this.d.waits?.ended(plan.target);
    return e;
  }

  private async steps(owner: string, plan: TargetPlan, signal: AbortSignal): Promise<Execution> {
    const t = plan.target;
    const target = `${t.kind}/${t.namespace}/${t.name}`;
    const executed: Step[] = [];
    const by = `(${describeOwner(owner)})`;
    const stopped = (step: Step, inFlight: boolean): Execution => ({ plan, executed, stopped: { step, inFlight } });
    for (const step of plan.steps) {
      // Shutdown has begun, or a leader paused past its lease resumed here while another replica leads: no step after that.
      if (signal.aborted || this.d.stopping?.aborted || (this.d.mayWrite && !this.d.mayWrite())) return stopped(step, false);
      let result;
      try {
        result = await this.d.effects.apply(owner, t, step, signal);
      } catch (err) {
        if (signal.aborted) {
          // Where this target stopped, for whoever picks the round up (the next leader re-plans from the CLB).
          this.d.logger.warn('Step interrupted by shutdown', { policy: owner, target, step: describeStep(step) });
          return stopped(step, true);
        }
        // A write still waiting for its turn when shutdown began was dropped before it was submitted.
        if ((this.d.stopping?.aborted || this.d.mayWrite?.() === false) && describeCloudError(err).reason === 'Aborted') return stopped(step, false);
        result = { status: 'failed' as const, error: classifyError(err, `${describeStep(step)} for ${t.kind} ${t.namespace}/${t.name}`) };
      }
      if (result.status === 'gone') return { plan, executed, gone: true };
      if (result.status === 'superseded') {
        // Listed with the executed steps the way a wait is (remainingSteps shows it again), yet neither logged as
        // applied nor announced: nothing was written.
        this.d.logger.info('Step superseded', { policy: owner, target, step: describeStep(step), note: result.note });
        return { plan, executed: [...executed, step], waiting: result.note };
      }
      if (result.status === 'failed') return this.failed(plan, executed, result.error, by);
      executed.push(step);
      this.d.logger.info('Step applied', { policy: owner, target, step: describeStep(step) });
      const event = stepEvent(step);
      if (event) await this.d.events.record(involvedObject(t), event.type, event.reason, `${describeStep(step)} ${by}`);
      const drift = driftCorrection(step);
      if (drift) this.d.metrics.driftCorrections.inc({ kind: drift });
      if (result.status === 'waiting') return { plan, executed, waiting: result.note, ...(result.since !== undefined ? { waitSince: result.since } : {}) };
    }
    if (plan.error) return this.failed(plan, executed, plan.error, by);
    return { plan, executed };
  }

  private async failed(plan: TargetPlan, executed: Step[], error: TargetError, by: string): Promise<Execution> {
    const t = plan.target;
    if (error.reason === 'HealthCheckSourceCapabilityMissing') this.d.capabilities.learn('range100_64Rejected', error.message);
    this.d.logger.warn('Step failed', { target: `${t.kind}/${t.namespace}/${t.name}`, reason: error.reason, permanent: error.permanent, message: error.message });
    if (error.permanent) await this.d.events.record(involvedObject(t), 'Warning', FAILURE_EVENTS[error.reason] ?? EventReason.ClbWriteFailed, `${error.message} ${by}`);
    return { plan, executed, error };
  }
}
