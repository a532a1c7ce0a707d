// Reconciles one policy, a LoopbackPolicy or a ClusterLoopbackPolicy (subject.ts; the queue key is its owner key):
// gather (caches; the round reads the CLB API per chunk) → plan (pure, planPolicy
// over the snapshot) → execute (Enforce only, src/mitigation/executor.ts) → status (pure, buildPolicyStatus) and
// report (status by SSA, Events on targets, metrics) → requeue (pure, requeue.ts).
// Level-triggered: every round recomputes everything from current state, so a restart at any point converges. A
// converged policy whose inputs are unchanged only makes its drift checks, and a full round if they find anything new
// (quiet.ts).
// A target's failure is its outcome: the round reports every target, then a transient failure anywhere asks the
// queue for a backoff retry, and a permanent one makes the policy Stalled in that same round.
import { FINALIZER, type LoopbackPolicyStatus, type PolicyMode } from '../../api/loopbackpolicy.js';
import { CLUSTER_KIND, type ClusterLoopbackPolicyStatus } from '../../api/clusterloopbackpolicy.js';
import { readSkip, LoopguardAnnotation } from '../../api/annotations.js';
import { buildClusterPolicyStatus } from '../../model/cluster-status.js';
import type { ReportTarget } from '../../model/namespace-report.js';
import { EventReason } from '../../api/reasons.js';
import { targetKey, type TargetFacts } from '../../model/facts.js';
import { buildPolicyStatus, initialPolicyStatus, targetProblem, type TargetOutcome } from '../../model/status.js';
import { ExecutionInterrupted, involvedObject, type Execution } from '../../mitigation/executor.js';
import { describeStep } from '../../plan/steps.js';
import { holderOf } from '../../model/record-registry.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import { maxReadAgeMs, signalled } from '../drift-signal.js';
import { PolicyDeletion } from './deletion.js';
import type { PolicyControllerOptions } from './deps.js';
import { nextReconcile } from './requeue.js';
import { converged, expectedStatus, mayStayQuiet, sameStatus, statusKey, withReportsVersion, type QuietRound } from './quiet.js';
import { PolicyRound, type RoundResult } from './round.js';
import { clusterSubjectOf, describeSubject, subjectOf, subjectRef, targetsForPolicyEvent, type PolicySubject } from './subject.js';
import { policyTargets, sharedWith, type PolicyTargets } from './targets.js';

/** Targets named in a RoundInterrupted Event (the log line names all of them). */
const MAX_STOPPED_SHOWN = 5;

/** The CLBs the targets are bound to. */
function boundClbs(targets: readonly TargetFacts[]): string[] {
  return targets.flatMap((t) => (t.loadBalancerId ? [t.loadBalancerId] : []));
}

function jitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}

export class PolicyController {
  private readonly round: PolicyRound;
  /**
   * Per policy, the last verdict of each target it reported, so Events fire on changes, not on every reconcile.
   * Replaced each round: a target or namespace that leaves the policy leaves this too.
   */
  private readonly lastVerdicts = new Map<string, Map<string, string>>();
  /** Consecutive rounds a policy waited on TKE (CLBs being built, configs to apply), for the recheck backoff. */
  private readonly building = new Map<string, number>();
  /** Per policy, its last round's inputs if it converged: the next reconcile on the same inputs only checks drift (quiet.ts). */
  private readonly quiet = new Map<string, QuietRound>();

  private readonly deletion: PolicyDeletion;

  constructor(private readonly o: PolicyControllerOptions) {
    this.round = new PolicyRound(o);
    this.deletion = new PolicyDeletion(o, (policy, stopped) => this.reportStopped(policy, stopped, false));
  }

  /** `key`: the policy's owner key, `<namespace>/<name>` or `ClusterLoopbackPolicy/<name>` (record-registry.ts). */
  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const subject = this.subject(key);
    if (!subject) {
      await this.forgetPolicy(key);
      return;
    }
    try {
      return await this.evaluate(subject, signal);
    } catch (err) {
      // The shutdown grace period ended mid-round: say where it stopped before the process goes.
      if (signal.aborted) await this.reportStopped(subject, err instanceof ExecutionInterrupted ? err.stopped : [], true);
      throw err;
    }
  }

  private subject(key: string): PolicySubject | undefined {
    const [first = '', name = ''] = key.split('/');
    if (first === CLUSTER_KIND) {
      const cluster = this.o.caches.clusterPolicy(name);
      return cluster ? clusterSubjectOf(cluster) : undefined;
    }
    const policy = this.o.caches.policy(first, name);
    return policy ? subjectOf(policy) : undefined;
  }

  /** One reconcile: gather (caches, selection) → plan and execute (the round, per chunk and mode) → status → requeue. */
  private async evaluate(policy: PolicySubject, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const key = policy.owner;
    if (policy.metadata.deletionTimestamp) {
      const outcome = await this.deletion.finalize(policy, signal);
      if (outcome) return outcome;
      await this.forgetPolicy(key);
      return;
    }
    // Converged on the same inputs: the drift checks due, and a full round only if they found something new.
    let startedAt = Date.now();
    const cluster = policy.namespace === undefined;
    let stamp = this.stamp(cluster);
    const last = this.quiet.get(key);
    this.quiet.delete(key);
    if (mayStayQuiet(last, { stamp, status: policy.object.status }, startedAt, this.o.driftCheckIntervalMs)) {
      const due = this.driftDue(key, last.clbs);
      await this.round.driftChecks(due.full, signal, due.signal);
      // A CLB still overdue (its drift read failed) goes to the full round, whose read of it reports the failure.
      const maxAge = maxReadAgeMs(this.o);
      const overdue = last.clbs.some((id) => startedAt - (this.o.observer.observedAt(id) ?? 0) > maxAge);
      if (!overdue && this.stamp(cluster) === stamp) {
        this.quiet.set(key, last);
        // A report write that failed, again once its backoff is over (a full round's publish does it too). Not
        // awaited: a report's apiserver trouble must hold up no reconcile; a write that gets through changes the
        // reports' version, so the rounds whose status names reports come back full.
        void this.o.reports?.retry();
        const next = this.requeue(key, last.clbs, [], { outcomes: [], releases: [], waiting: false, stopped: [], skipped: 0 });
        // Never later than the full round due once per drift interval.
        const fullDueIn = Math.max(0, last.at + this.o.driftCheckIntervalMs - Date.now());
        return next.requeueAfterMs !== undefined ? { requeueAfterMs: Math.min(next.requeueAfterMs, fullDueIn) } : next;
      }
      // Something new: the full round, stamped with what it starts from (the drift reads just made included).
      startedAt = Date.now();
      stamp = this.stamp(cluster);
    }
    const { spec } = policy;
    const targets = policyTargets(policy, this.o.caches, (t) => holderOf(this.o.record(t)));
    const enforces = [...targets.namespaces.values(), ...targets.orphans.map((o) => o.mode)].includes('Enforce');
    if (enforces && spec.revertOnDelete && !policy.metadata.finalizers?.includes(FINALIZER)) {
      await this.o.writer.setFinalizers({ kind: policy.kind, metadata: policy.metadata }, [...(policy.metadata.finalizers ?? []), FINALIZER]);
    }
    const previous = await this.markReconciling(policy);
    const mine = targets.mine.map((m) => m.facts);
    const profile = this.o.profile();
    // The orphans' CLBs too: a release must see who else keeps a shared CLB's VIP bound (shared-clb.ts).
    const ignoreSkipOf = policy.cluster?.skipAnnotation === 'Ignore' ? policy.owner : undefined;
    const shared = sharedWith([...mine, ...targets.orphans.map((o) => o.facts)], this.o.caches, new Set(targets.namespaces.keys()), targets.index, ignoreSkipOf);
    const run = await this.runByMode(policy, targets, shared, signal);
    if (run.skipped > 0) {
      // Shutdown began mid-round: a status of the targets reached so far would drop the others. The last full
      // status stays; the log line and Event say where the round stopped.
      await this.reportStopped(policy, run.stopped, false, run.skipped);
      return;
    }

    const outcomes: TargetOutcome[] = [...run.outcomes, ...targets.conflicts.map((assessment) => ({ assessment }))];
    const common = {
      generation: policy.metadata.generation ?? 0,
      profile,
      outcomes,
      releases: run.releases,
      previousConditions: previous?.conditions,
      ...(run.policyError ? { policyError: run.policyError } : {}),
      now: new Date(),
    };
    const published = await this.publishReports(policy, outcomes, targets);
    const reports = published?.names;
    const status =
      policy.namespace === undefined
        ? buildClusterPolicyStatus({ ...common, namespaces: targets.namespaces, excluded: targets.excluded, ...(reports ? { reports } : {}) })
        : buildPolicyStatus({ ...common, mode: spec.mode });
    if (!sameStatus(previous, status)) await this.o.statusWriter.apply(policy.namespace, policy.name, status);
    await this.report(policy, outcomes, targets);
    // Shutdown began during the round: the status shows the steps left; this says why they were left.
    if (run.stopped.length > 0) await this.reportStopped(policy, run.stopped, false);
    const clbs = boundClbs(mine);
    const next = this.requeue(key, clbs, outcomes, run);
    if (converged(run, outcomes, this.building.get(key) ?? 0)) {
      // The reports' part as of this round's own publish: the report names in its status are up to date with that,
      // and a later change (another policy's first write, a retry that got through) makes the next round full.
      const inputs = cluster && published ? withReportsVersion(stamp, published.version) : stamp;
      this.quiet.set(key, { stamp: inputs, at: startedAt, clbs, status: expectedStatus(status, previous, last), built: statusKey(status) });
    }
    return next;
  }

  /**
   * The inputs of a round besides the policy's own targets' objects, all as cheap versions (quiet.ts); a cluster
   * policy's with the namespaces' reports version, since its status names the reports (a LoopbackPolicy's does not).
   */
  private stamp(cluster: boolean): string {
    const capabilities = JSON.stringify(this.o.capabilities.snapshot());
    const inputs = `${this.o.caches.version()}|${this.o.observer.generation}|${this.o.tkeServiceConfigsSynced()}|${JSON.stringify(this.o.profile())}|${capabilities}`;
    return cluster ? withReportsVersion(inputs, this.o.reports?.version ?? 0) : inputs;
  }

  /**
   * The round, once per mode: a LoopbackPolicy has one; a cluster policy's namespaces may be in Enforce or Audit
   * (modeOverrides), and a namespace that left it releases by the mode its labels give now.
   */
  private async runByMode(policy: PolicySubject, targets: PolicyTargets, shared: ReturnType<typeof sharedWith>, signal: AbortSignal): Promise<RoundResult> {
    const result: RoundResult = { outcomes: [], releases: [], waiting: false, stopped: [], skipped: 0 };
    const mine = targets.mine.map((m) => m.facts);
    const due = this.driftDue(policy.owner, boundClbs(mine));
    let drift: string[] | undefined = due.full;
    let driftSignal: string[] | undefined = due.signal;
    for (const mode of ['Enforce', 'Audit'] as const satisfies readonly PolicyMode[]) {
      const own = targets.mine.filter((m) => m.mode === mode).map((m) => m.facts);
      const orphans = targets.orphans.filter((o) => o.mode === mode);
      if (own.length === 0 && orphans.length === 0) continue;
      const enforcing = mode === 'Enforce' && this.o.executor !== undefined;
      const run = await this.round.run(
        { spec: { ...policy.spec, mode }, profile: this.o.profile(), owner: policy.owner, targets: own, orphans, enforcing, ...(drift ? { drift } : {}), ...(driftSignal ? { driftSignal } : {}), shared, ...(policy.cluster?.skipAnnotation === 'Ignore' ? { ignoreSkipAnnotation: true } : {}) },
        signal,
      );
      drift = undefined;
      driftSignal = undefined;
      result.outcomes.push(...run.outcomes);
      result.releases.push(...run.releases);
      result.waiting ||= run.waiting;
      if (run.graceEndsAt !== undefined) result.graceEndsAt = Math.min(result.graceEndsAt ?? Infinity, run.graceEndsAt);
      result.stopped.push(...run.stopped);
      result.skipped += run.skipped;
      if (run.policyError) result.policyError ??= run.policyError;
    }
    return result;
  }

  /**
   * The policy's results where each namespace's users read them: its part of the OpenReports Report of every
   * namespace it governs (namespace-reports.ts). Returns the namespaces' report names, for a cluster policy's status.
   */
  private async publishReports(policy: PolicySubject, outcomes: readonly TargetOutcome[], targets: PolicyTargets): Promise<{ names: Map<string, string>; version: number } | undefined> {
    // Without OpenReports nothing is built: a round over 12,000 targets would make as many results for nobody.
    if (!this.o.reports || !(await this.o.reports.enabled())) return undefined;
    const byNs = new Map<string, ReportTarget[]>([...targets.namespaces.keys()].map((ns) => [ns, []]));
    const uid = new Map(targets.mine.map((m) => [targetKey(m.facts), m.facts.uid]));
    for (const o of outcomes) {
      const a = o.assessment;
      const t = a.target;
      const id = uid.get(targetKey(t));
      byNs.get(t.namespace)?.push({
        apiVersion: involvedObject(t).apiVersion,
        kind: t.kind,
        name: t.name,
        ...(id ? { uid: id } : {}),
        verdict: a.verdict,
        rootCause: a.rootCause.id,
        message: a.rootCause.message,
        mode: targets.namespaces.get(t.namespace) ?? policy.spec.mode,
        policy: policy.namespace === undefined ? policy.owner : `LoopbackPolicy/${policy.name}`,
        plan: o.plan ?? [],
        ...(a.loadBalancerId ? { loadBalancerId: a.loadBalancerId } : {}),
      });
    }
    return this.o.reports.publish(policy.owner, byNs);
  }

  /** A new generation: Ready=Unknown + Reconciling first, so kstatus/Flux never see the old status as current. */
  private async markReconciling(policy: PolicySubject): Promise<LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined> {
    const generation = policy.metadata.generation ?? 0;
    const current = policy.object.status;
    if (current?.observedGeneration === generation) return current;
    const initial = { ...initialPolicyStatus(generation, current?.conditions, new Date()) };
    await this.o.statusWriter.apply(policy.namespace, policy.name, initial);
    return initial;
  }

  /** The cached CLBs of the policy's targets whose drift check is due this round: in full, or their health signal (drift-signal.ts). */
  private driftDue(key: string, clbs: readonly string[]): { full: string[]; signal: string[] } {
    const readAt = new Map<string, number>();
    for (const id of clbs) {
      const at = this.o.observer.observedAt(id);
      if (at !== undefined) readAt.set(id, at);
    }
    const { scheduler, signal } = this.o.driftTiers;
    return scheduler.plan(key, readAt, signalled(readAt, this.o.observer, signal), Date.now());
  }

  /** When to come back (requeue.ts), keeping the waiting streak and dropping the reads of CLBs being built. */
  private requeue(key: string, clbs: readonly string[], outcomes: readonly TargetOutcome[], run: RoundResult): ReconcileOutcome {
    const cached = new Set(clbs.filter((id) => this.o.observer.observedAt(id) !== undefined));
    const next = nextReconcile({
      outcomes,
      releases: run.releases,
      waiting: run.waiting,
      ...(run.graceEndsAt !== undefined ? { graceEndsAt: run.graceEndsAt } : {}),
      streak: this.building.get(key) ?? 0,
      driftCheckIntervalMs: this.o.driftCheckIntervalMs,
      driftRoundMs: this.o.driftTiers.scheduler.roundMs(cached.size),
      now: Date.now(),
      jitter,
    });
    for (const id of next.invalidate) this.o.observer.invalidate(id);
    if (next.streak > 0) this.building.set(key, next.streak);
    else this.building.delete(key);
    return next.outcome;
  }

  /** Events on targets when their verdict changes, and the per-target risk and error gauges. */
  private async report(policy: PolicySubject, outcomes: readonly TargetOutcome[], targets: PolicyTargets): Promise<void> {
    const enforcingIn = (ns: string) => this.o.executor !== undefined && (targets.namespaces.get(ns) ?? policy.spec.mode) === 'Enforce';
    const mine = new Map(targets.mine.map((m) => [targetKey(m.facts), m.facts]));
    this.o.metrics.reportTargets(
      policy.namespace ?? '',
      policy.namespace === undefined ? policy.owner : policy.name,
      outcomes.map((o) => {
        const t = o.assessment.target;
        const problem = targetProblem(o, enforcingIn(t.namespace));
        return { namespace: t.namespace, kind: t.kind, name: t.name, verdict: o.assessment.verdict, ...(problem ? { error: problem } : {}) };
      }),
    );
    const by = `(${describeSubject(policy)})`;
    const ignoresSkip = policy.cluster?.skipAnnotation === 'Ignore';
    const before = this.lastVerdicts.get(policy.owner) ?? new Map<string, string>();
    const after = new Map<string, string>();
    this.lastVerdicts.set(policy.owner, after);
    for (const { assessment: a } of outcomes) {
      const t = a.target;
      const involved = involvedObject(t);
      // True in every round until someone fixes it: one Event per problem, not one write per round.
      for (const w of a.warnings) await this.o.events.recordStanding(involved, 'Warning', EventReason.InvalidAnnotation, w);
      if (ignoresSkip && a.verdict !== 'Conflict') {
        const own = mine.get(targetKey(t));
        if (own?.annotations?.[LoopguardAnnotation.Skip] !== undefined && readSkip(own.annotations, t.kind, { ignoreOwn: true }).skipped === undefined) {
          await this.o.events.recordStanding(involved, 'Normal', EventReason.SkipAnnotationIgnored, `${LoopguardAnnotation.Skip} has no effect: ${describeSubject(policy)} sets skipAnnotation: Ignore, so the platform team's policy manages this ${t.kind} whatever the annotation says`);
        }
      }
      const memo = targetKey(t);
      // A Mitigated target whose cause is refined (the first read after Enforce learns that kube-proxy now binds
      // the VIP) had its Event at the transition: one per change of verdict. A problem's Event names its cause. Kept per
      // target: a flat string (see targetKey).
      const seen = a.verdict === 'Mitigated' ? a.verdict : [a.verdict, a.rootCause.id].join('/');
      after.set(memo, seen);
      if (before.get(memo) === seen) continue;
      if (a.verdict === 'AtRisk') {
        await this.o.events.record(involved, 'Warning', EventReason.TargetAtRisk, `${a.rootCause.id}: ${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Conflict') {
        const reason =
          a.rootCause.id === 'ForeignClb' ? EventReason.ForeignClb : a.rootCause.id === 'SharedConfig' ? EventReason.SharedConfig : a.rootCause.id === 'SharedClb' ? EventReason.SharedClb : a.rootCause.id === 'PolicyPrecedence' ? EventReason.PolicyPrecedence : EventReason.PolicyConflict;
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
  async reportStopped(policy: PolicySubject, stopped: readonly Execution[], graceOver: boolean, notReached = 0): Promise<void> {
    const stepOf = (e: Execution) => (e.stopped ? `"${describeStep(e.stopped.step)}" (${e.stopped.inFlight ? 'in flight' : 'not started'})` : 'its next step');
    const at = stopped.map((e) => `${e.plan.target.kind} ${e.plan.target.namespace}/${e.plan.target.name} at ${stepOf(e)}`);
    this.o.logger.warn('Round stopped by shutdown', {
      policy: policy.owner,
      graceOver,
      targets: stopped.map((e) => `${e.plan.target.kind}/${e.plan.target.namespace}/${e.plan.target.name}`),
      at,
      ...(notReached > 0 ? { notReached } : {}),
    });
    // A cluster policy's Event counts the targets (subject.ts targetsForPolicyEvent); each stopped target's own Event says where.
    const shown =
      (policy.namespace === undefined
        ? stopped.length > 0
          ? targetsForPolicyEvent(policy, stopped.map((e) => e.plan.target))
          : ''
        : at.slice(0, MAX_STOPPED_SHOWN).join('; ') + (at.length > MAX_STOPPED_SHOWN ? `; and ${at.length - MAX_STOPPED_SHOWN} more target(s)` : '')) +
      (notReached > 0 ? `${stopped.length > 0 ? '; ' : ''}${notReached} target(s) not reached yet` : '');
    const what = graceOver
      ? `Shutdown ended this round when its grace period ran out: ${shown || 'no step was in flight (it was reading or reporting)'}. A CLB task in flight may still finish; the next leader reads the CLB again and resumes the round.`
      : `Shutdown stopped this round before its next steps: ${shown}. The next leader resumes the round.`;
    await this.o.events.record(subjectRef(policy), 'Normal', EventReason.RoundInterrupted, what);
    if (policy.namespace === undefined) {
      for (const e of stopped) {
        await this.o.events.record(involvedObject(e.plan.target), 'Normal', EventReason.RoundInterrupted, `Shutdown stopped ${describeSubject(policy)}'s round on this ${e.plan.target.kind} at ${stepOf(e)}; the next leader resumes it.`);
      }
    }
  }

  private async forgetPolicy(key: string): Promise<void> {
    await this.o.reports?.forget(key);
    this.building.delete(key);
    this.o.driftTiers.scheduler.forget(key);
    const [first = '', name = ''] = key.split('/');
    this.o.metrics.forgetTargets(first === CLUSTER_KIND ? '' : first, first === CLUSTER_KIND ? key : name);
    this.lastVerdicts.delete(key);
    this.quiet.delete(key);
  }
}
