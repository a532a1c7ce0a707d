// Reconciles one LoopbackPolicy: gather (caches; the round reads the CLB API per chunk) → plan (pure, planPolicy
// over the snapshot) → execute (Enforce only, src/mitigation/executor.ts) → status (pure, buildPolicyStatus) and
// report (status by SSA, Events on targets, metrics) → requeue (pure, requeue.ts).
// Level-triggered: every round recomputes everything from current state, so a restart at any point converges.
// A target's failure is its outcome: the round reports every target, then a transient failure anywhere asks the
// queue for a backoff retry, and a permanent one makes the policy Stalled in that same round.
import { API_VERSION, FINALIZER, KIND, withSpecDefaults, type LoopbackPolicy, type LoopbackPolicyStatus } from '../../api/loopbackpolicy.js';
import { EventReason } from '../../api/reasons.js';
import { targetKey, type TargetFacts, type TargetRef } from '../../model/facts.js';
import { buildPolicyStatus, initialPolicyStatus, targetProblem, type TargetOutcome } from '../../model/status.js';
import { ExecutionInterrupted, involvedObject, type Execution } from '../../mitigation/executor.js';
import { describeStep } from '../../plan/steps.js';
import { holderOf, ownerKey } from '../../model/record-registry.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import { dueForDrift, type DriftClock } from '../drift.js';
import { PolicyDeletion } from './deletion.js';
import type { PolicyControllerOptions } from './deps.js';
import { nextReconcile } from './requeue.js';
import { PolicyRound, type RoundResult } from './round.js';
import { policyTargets, sharedWith } from './targets.js';

/** Targets named in a RoundInterrupted Event (the log line names all of them). */
const MAX_STOPPED_SHOWN = 5;

function jitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}

/**
 * Status equality for "is a write needed": the evaluation time alone changing is not news. Keys are compared
 * sorted: the cached status comes back from the apiserver in its own key order, not the order buildPolicyStatus
 * writes, and comparing those strings as they were made every converged round write an unchanged status
 * (bench/idle: 60 writes in 10 min of nothing changing).
 */
export function sameStatus(a: LoopbackPolicyStatus | undefined, b: LoopbackPolicyStatus): boolean {
  if (!a) return false;
  const sorted = (_key: string, v: unknown): unknown =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : v;
  const strip = (s: LoopbackPolicyStatus) => JSON.stringify({ ...s, lastEvaluatedTime: undefined }, sorted);
  return strip(a) === strip(b);
}

export class PolicyController {
  private readonly round: PolicyRound;
  /** Last verdict per target and policy, so Events fire on changes, not on every reconcile. */
  private readonly lastVerdicts = new Map<string, string>();
  /** Consecutive rounds a policy waited on TKE (CLBs being built, configs to apply), for the recheck backoff. */
  private readonly building = new Map<string, number>();
  /** Per policy: when its drift checks last earned reads (drift.ts). */
  private readonly driftClocks = new Map<string, DriftClock>();

  private readonly deletion: PolicyDeletion;

  constructor(private readonly o: PolicyControllerOptions) {
    this.round = new PolicyRound(o);
    this.deletion = new PolicyDeletion(o, (policy, stopped) => this.reportStopped(policy, stopped, false));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const [namespace = '', name = ''] = key.split('/');
    const policy = this.o.caches.policy(namespace, name);
    if (!policy) {
      this.forgetPolicy(namespace, name);
      return;
    }
    try {
      return await this.evaluate(policy, key, signal);
    } catch (err) {
      // The shutdown grace period ended mid-round: say where it stopped before the process goes.
      if (signal.aborted) await this.reportStopped(policy, err instanceof ExecutionInterrupted ? err.stopped : [], true);
      throw err;
    }
  }

  /** One reconcile: gather (caches, selection) → plan and execute (the round, per chunk) → status → requeue. */
  private async evaluate(policy: LoopbackPolicy, key: string, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const namespace = policy.metadata.namespace ?? '';
    const name = policy.metadata.name ?? '';
    if (policy.metadata.deletionTimestamp) {
      const outcome = await this.deletion.finalize(policy, signal);
      if (outcome) return outcome;
      this.forgetPolicy(namespace, name);
      return;
    }
    const spec = withSpecDefaults(policy.spec);
    if (spec.mode === 'Enforce' && spec.revertOnDelete && !policy.metadata.finalizers?.includes(FINALIZER)) {
      await this.o.writer.setFinalizers(policy, [...(policy.metadata.finalizers ?? []), FINALIZER]);
    }
    const previous = await this.markReconciling(policy);

    const holder = (t: TargetRef): string | undefined => holderOf(this.o.record(t));
    const { view, mine, conflicts, orphans } = policyTargets(policy, this.o.caches, holder);
    const profile = this.o.profile();
    const enforcing = spec.mode === 'Enforce' && this.o.executor !== undefined;
    // The orphans' CLBs too: a release must see who else keeps a shared CLB's VIP bound (shared-clb.ts).
    const shared = sharedWith([...mine, ...orphans.map((o) => o.facts)], this.o.caches, { namespace, view }, holder);
    const run = await this.round.run({ policy, spec, profile, owner: ownerKey(namespace, name), targets: mine, orphans, enforcing, drift: this.driftDue(key, mine), shared }, signal);
    if (run.skipped > 0) {
      // Shutdown began mid-round: a status of the targets reached so far would drop the others. The last full
      // status stays; the log line and Event say where the round stopped.
      await this.reportStopped(policy, run.stopped, false, run.skipped);
      return;
    }

    const outcomes: TargetOutcome[] = [...run.outcomes, ...conflicts.map((assessment) => ({ assessment }))];
    const status = buildPolicyStatus({
      generation: policy.metadata.generation ?? 0,
      mode: spec.mode,
      profile,
      outcomes,
      releases: run.releases,
      previousConditions: previous?.conditions,
      ...(run.policyError ? { policyError: run.policyError } : {}),
      now: new Date(),
    });
    if (!sameStatus(previous, status)) await this.o.statusWriter.apply(namespace, name, status);
    await this.report(policy, outcomes, enforcing);
    // Shutdown began during the round: the status shows the steps left; this says why they were left.
    if (run.stopped.length > 0) await this.reportStopped(policy, run.stopped, false);
    return this.requeue(key, mine, outcomes, run);
  }

  /** A new generation: Ready=Unknown + Reconciling first, so kstatus/Flux never see the old status as current. */
  private async markReconciling(policy: LoopbackPolicy): Promise<LoopbackPolicyStatus | undefined> {
    const generation = policy.metadata.generation ?? 0;
    if (policy.status?.observedGeneration === generation) return policy.status;
    const initial = { ...initialPolicyStatus(generation, policy.status?.conditions, new Date()) };
    await this.o.statusWriter.apply(policy.metadata.namespace ?? '', policy.metadata.name ?? '', initial);
    return initial;
  }

  /** The cached CLBs of the policy's targets whose drift check is due this round (drift.ts). */
  private driftDue(key: string, targets: readonly TargetFacts[]): string[] {
    const readAt = new Map<string, number>();
    for (const t of targets) {
      const at = t.loadBalancerId ? this.o.observer.observedAt(t.loadBalancerId) : undefined;
      if (at !== undefined) readAt.set(t.loadBalancerId as string, at);
    }
    const drift = dueForDrift(readAt, this.o.driftCheckIntervalMs, Date.now(), this.driftClocks.get(key));
    this.driftClocks.set(key, drift.clock);
    return [...drift.due];
  }

  /** When to come back (requeue.ts), keeping the waiting streak and dropping the reads of CLBs being built. */
  private requeue(key: string, targets: readonly TargetFacts[], outcomes: readonly TargetOutcome[], run: RoundResult): ReconcileOutcome {
    const cached = new Set(targets.flatMap((t) => (t.loadBalancerId && this.o.observer.observedAt(t.loadBalancerId) !== undefined ? [t.loadBalancerId] : [])));
    const next = nextReconcile({
      outcomes,
      releases: run.releases,
      waiting: run.waiting,
      ...(run.graceEndsAt !== undefined ? { graceEndsAt: run.graceEndsAt } : {}),
      streak: this.building.get(key) ?? 0,
      cachedClbs: cached.size,
      driftCheckIntervalMs: this.o.driftCheckIntervalMs,
      now: Date.now(),
      jitter,
    });
    for (const id of next.invalidate) this.o.observer.invalidate(id);
    if (next.streak > 0) this.building.set(key, next.streak);
    else this.building.delete(key);
    return next.outcome;
  }

  /** Events on targets when their verdict changes, and the per-target risk and error gauges. */
  private async report(policy: LoopbackPolicy, outcomes: readonly TargetOutcome[], enforcing: boolean): Promise<void> {
    const namespace = policy.metadata.namespace ?? '';
    const policyName = policy.metadata.name ?? '';
    this.o.metrics.reportTargets(
      namespace,
      policyName,
      outcomes.map((o) => {
        const problem = targetProblem(o, enforcing);
        return { kind: o.assessment.target.kind, name: o.assessment.target.name, verdict: o.assessment.verdict, ...(problem ? { error: problem } : {}) };
      }),
    );
    for (const { assessment: a } of outcomes) {
      const t = a.target;
      const involved = involvedObject(t);
      // True in every round until someone fixes it: one Event per problem, not one write per round.
      for (const w of a.warnings) await this.o.events.recordStanding(involved, 'Warning', EventReason.InvalidAnnotation, w);
      const memo = `${namespace}/${policyName}/${targetKey(t)}`;
      // A Mitigated target whose cause is refined (the first read after Enforce learns that kube-proxy now binds
      // the VIP) had its Event at the transition: one per change of verdict. A problem's Event names its cause.
      const seen = a.verdict === 'Mitigated' ? a.verdict : `${a.verdict}/${a.rootCause.id}`;
      if (this.lastVerdicts.get(memo) === seen) continue;
      this.lastVerdicts.set(memo, seen);
      const by = `(LoopbackPolicy ${namespace}/${policyName})`;
      if (a.verdict === 'AtRisk') {
        await this.o.events.record(involved, 'Warning', EventReason.TargetAtRisk, `${a.rootCause.id}: ${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Conflict') {
        const reason = a.rootCause.id === 'ForeignClb' ? EventReason.ForeignClb : a.rootCause.id === 'SharedConfig' ? EventReason.SharedConfig : a.rootCause.id === 'SharedClb' ? EventReason.SharedClb : EventReason.PolicyConflict;
        await this.o.events.record(involved, 'Warning', reason, `${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Mitigated') {
        await this.o.events.record(involved, 'Normal', EventReason.TargetMitigated, `${a.rootCause.message} ${by}`);
      }
    }
  }

  /**
   * Where shutdown left the policy's round: one log line and an Event on the policy. `graceOver`: the grace
   * period ended with the round still running (steps in flight were aborted); otherwise shutdown began and the
   * round started no further step. Either way the next leader plans again from what the CLB and targets show.
   */
  async reportStopped(policy: LoopbackPolicy, stopped: readonly Execution[], graceOver: boolean, notReached = 0): Promise<void> {
    const namespace = policy.metadata.namespace ?? '';
    const name = policy.metadata.name ?? '';
    const at = stopped.map((e) => {
      const t = e.plan.target;
      const step = e.stopped ? `"${describeStep(e.stopped.step)}" (${e.stopped.inFlight ? 'in flight' : 'not started'})` : 'its next step';
      return `${t.kind} ${t.namespace}/${t.name} at ${step}`;
    });
    this.o.logger.warn('Round stopped by shutdown', {
      policy: `${namespace}/${name}`,
      graceOver,
      targets: stopped.map((e) => `${e.plan.target.kind}/${e.plan.target.namespace}/${e.plan.target.name}`),
      at,
      ...(notReached > 0 ? { notReached } : {}),
    });
    const shown =
      at.slice(0, MAX_STOPPED_SHOWN).join('; ') +
      (at.length > MAX_STOPPED_SHOWN ? `; and ${at.length - MAX_STOPPED_SHOWN} more target(s)` : '') +
      (notReached > 0 ? `${at.length > 0 ? '; ' : ''}${notReached} target(s) not reached yet` : '');
    const what = graceOver
      ? `Shutdown ended this round when its grace period ran out: ${shown || 'no step was in flight (it was reading or reporting)'}. A CLB task in flight may still finish; the next leader reads the CLB again and resumes the round.`
      : `Shutdown stopped this round before its next steps: ${shown}. The next leader resumes the round.`;
    await this.o.events.record({ apiVersion: API_VERSION, kind: KIND, namespace, name, ...(policy.metadata.uid ? { uid: policy.metadata.uid } : {}) }, 'Normal', EventReason.RoundInterrupted, what);
  }

  private forgetPolicy(namespace: string, name: string): void {
    this.building.delete(`${namespace}/${name}`);
    this.driftClocks.delete(`${namespace}/${name}`);
    this.o.metrics.forgetTargets(namespace, name);
    for (const k of [...this.lastVerdicts.keys()]) if (k.startsWith(`${namespace}/${name}/`)) this.lastVerdicts.delete(k);
  }


}
