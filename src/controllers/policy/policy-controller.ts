// Reconciles one policy, a LoopbackPolicy or a ClusterLoopbackPolicy (subject.ts; the queue key is its owner key), as
// a pipeline: gather (the selection, from the caches, and what changed since the last round: pending.ts) → plan and
// execute the targets the changes concern, and no other (round.ts, per chunk and mode) → outcomes (those targets'
// new ones with the others' last) → status (pure, buildPolicyStatus), reports and Events, each written only when
// it differs → requeue (pure, requeue.ts).
// Work follows change: informer events and CLB reads that differ from the cached observation (routing.ts,
// drift-checks.ts) name the units of planning they concern, one CLB with its targets or one target without a CLB. A
// target that has not settled (waiting on TKE, failed, a grace period counting) stays pending and is planned again in
// each round until it settles. A restart, leadership gained or a policy-wide change (the spec, the claims, the
// cluster profile) plans every target: the level is what is planned, never a memo of an earlier round.
// A target's failure is its outcome: the round reports every target, then a transient failure anywhere asks the
// queue for a backoff retry, and a permanent one makes the policy Stalled in that same round.
import { FINALIZER, type LoopbackPolicyStatus } from '../../api/loopbackpolicy.js';
import { CLUSTER_KIND, type ClusterLoopbackPolicyStatus } from '../../api/clusterloopbackpolicy.js';
import { readSkip, LoopguardAnnotation } from '../../api/annotations.js';
import { buildClusterPolicyStatus } from '../../model/cluster-status.js';
import type { ReportTarget } from '../../model/namespace-report.js';
import { EventReason } from '../../api/reasons.js';
import { targetKey, type TargetFacts } from '../../model/facts.js';
import { buildPolicyStatus, initialPolicyStatus, targetProblem, type TargetOutcome } from '../../model/status.js';
import { ExecutionInterrupted, involvedObject, type Execution } from '../../mitigation/executor.js';
import { describeStep } from '../../plan/steps.js';
import { holderOf, policyRefOf, type OwnerKey } from '../../model/record-registry.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import { PolicyDeletion } from './deletion.js';
import type { PolicyControllerOptions } from './deps.js';
import { nextReconcile, settled } from './requeue.js';
import { EVERYTHING, PendingChanges, targetsToPlan, type Change } from './pending.js';
import { sameStatus } from '../../kube/status-writer.js';
import { PolicyRound, type RoundResult } from './round.js';
import { clusterSubjectOf, describeSubject, subjectOf, subjectRef, targetsForPolicyEvent, type PolicySubject } from './subject.js';
import { policyTargets, sharedWith, type PolicyTargets } from './targets.js';
import { withMeasuredCondition } from '../../probe/probe-control.js';

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
  /** Per policy, each target it manages as last planned (by targetKey): the others' part of a round's outcomes. */
  private readonly planned = new Map<OwnerKey, Map<string, TargetOutcome>>();
  /** Per policy, the CLBs its managed targets are bound to (a CLB read that differs concerns these policies). */
  private readonly clbs = new Map<OwnerKey, ReadonlySet<string>>();
  /** Per policy, what changed since its last round (pending.ts). */
  private readonly pending = new Map<OwnerKey, PendingChanges>();

  private readonly deletion: PolicyDeletion;

  constructor(private readonly o: PolicyControllerOptions) {
    this.round = new PolicyRound(o);
    this.deletion = new PolicyDeletion(o, this.round, (policy, stopped, notReached) => this.reportStopped(policy, stopped, false, notReached));
  }

  /** A change that concerns the policy (routing.ts): its next round plans the targets the change concerns. */
  touch(key: OwnerKey, change: Change): void {
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = new PendingChanges()));
    p.add(change);
  }

  /** The policies whose managed targets are bound to the CLB. */
  policiesOn(clb: string): OwnerKey[] {
    return [...this.clbs].flatMap(([key, ids]) => (ids.has(clb) ? [key] : []));
  }

  /** Every CLB a policy's managed targets are bound to (what the drift checks read). */
  clbsInUse(): Set<string> {
    const all = new Set<string>();
    for (const ids of this.clbs.values()) for (const id of ids) all.add(id);
    return all;
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
      // What this round took from the pending changes is not done: the retry plans every target again.
      this.touch(key, EVERYTHING);
      // The shutdown grace period ended mid-round: say where it stopped before the process goes.
      if (signal.aborted) await this.reportStopped(subject, err instanceof ExecutionInterrupted ? err.stopped : [], true);
      throw err;
    }
  }

  private subject(key: OwnerKey): PolicySubject | undefined {
    const ref = policyRefOf(key);
    if (ref.kind === CLUSTER_KIND) {
      const cluster = this.o.caches.clusterPolicy(ref.name);
      return cluster ? clusterSubjectOf(cluster) : undefined;
    }
    const policy = this.o.caches.policy(ref.namespace, ref.name);
    return policy ? subjectOf(policy) : undefined;
  }

  /** One reconcile: the pipeline of the header. */
  private async evaluate(policy: PolicySubject, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const key = policy.owner;
    if (policy.metadata.deletionTimestamp) {
      const outcome = await this.deletion.finalize(policy, signal);
      if (outcome) return outcome;
      await this.forgetPolicy(key);
      return;
    }
    const all = policyTargets(policy, this.o.caches, (t) => holderOf(this.o.record(t)));
    const targets = this.changedTargets(key, all);
    await this.ensureFinalizer(policy, all);
    const previous = await this.markReconciling(policy);
    const run = await this.runRound(policy, targets, signal);
    if (run.skipped > 0) {
      // Shutdown began mid-round: a status of the targets reached so far would drop the others. The last full
      // status stays; the log line and Event say where the round stopped.
      this.touch(key, EVERYTHING);
      await this.reportStopped(policy, run.stopped, false, run.skipped);
      return;
    }
    const outcomes: TargetOutcome[] = [...this.remember(policy, all, targets, run), ...all.conflicts.map((assessment) => ({ assessment }))];
    this.o.probe?.select(key, policy.spec.probe, all.mine.map((m) => m.facts));
    await this.publish(policy, previous, all, outcomes, run);
    // Shutdown began during the round: the status shows the steps left; this says why they were left.
    if (run.stopped.length > 0) await this.reportStopped(policy, run.stopped, false);
    return this.requeue(key, outcomes, run);
  }

  /** The policy's targets narrowed to those the changes since its last round concern (pending.ts); its orphans all. */
  private changedTargets(key: OwnerKey, all: PolicyTargets): PolicyTargets {
    const changes = this.pending.get(key) ?? new PendingChanges();
    this.pending.delete(key);
    const known = this.planned.get(key);
    const plan = new Set(targetsToPlan(all.mine.map((m) => m.facts), changes, (k) => known?.has(k) ?? false).map(targetKey));
    this.o.metrics.targetsPlanned?.inc(plan.size);
    return { ...all, mine: all.mine.filter((m) => plan.has(targetKey(m.facts))) };
  }

  /** With revertOnDelete, a policy that enforces anywhere keeps its finalizer until its changes are reverted. */
  private async ensureFinalizer(policy: PolicySubject, targets: PolicyTargets): Promise<void> {
    const enforces = [...targets.namespaces.values(), ...targets.orphans.map((o) => o.mode)].includes('Enforce');
    if (enforces && policy.spec.revertOnDelete && !policy.metadata.finalizers?.includes(FINALIZER)) {
      await this.o.writer.setFinalizers({ kind: policy.kind, metadata: policy.metadata }, [...(policy.metadata.finalizers ?? []), FINALIZER]);
    }
  }

  /**
   * Every managed target's outcome: this round's for those it planned, the last one for the others. A target that has
   * not settled stays pending; so does every target of a round that failed for the policy or was stopped.
   */
  private remember(policy: PolicySubject, all: PolicyTargets, planned: PolicyTargets, run: RoundResult): TargetOutcome[] {
    const key = policy.owner;
    const fresh = new Map(run.outcomes.map((o) => [targetKey(o.assessment.target), o]));
    const before = this.planned.get(key);
    const now = new Map<string, TargetOutcome>();
    for (const m of all.mine) {
      const k = targetKey(m.facts);
      const o = fresh.get(k) ?? before?.get(k);
      if (o) now.set(k, o);
    }
    this.planned.set(key, now);
    this.clbs.set(key, new Set(boundClbs(all.mine.map((m) => m.facts))));
    // A target that has not settled (requeue.ts) stays pending, as does one whose verdict a time decides (`due`, at the
    // requeue's graceEndsAt); shutdown's stop leaves everything the round planned pending.
    const configsKnown = this.o.tkeServiceConfigsSynced();
    for (const m of planned.mine) {
      const k = targetKey(m.facts);
      const o = now.get(k);
      if (!o || !settled(o, this.o.executor !== undefined && m.mode === 'Enforce', configsKnown) || run.stopped.length > 0) this.touch(key, { target: k });
    }
    for (const k of run.due ?? []) this.touch(key, { target: k });
    return [...now.values()];
  }

  /** Status, reports and Events from the outcomes, each written only when it differs from what is there. */
  private async publish(policy: PolicySubject, previous: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined, targets: PolicyTargets, outcomes: TargetOutcome[], run: RoundResult): Promise<void> {
    // What the probe measured, next to each verdict (src/probe/probe-control.ts): words only, decided nothing above.
    const measured = await this.o.probe?.annotate(policy.spec.probe.enabled, outcomes, (ns) => (targets.namespaces.get(ns) ?? policy.spec.mode) === 'Enforce');
    if (measured) outcomes = measured.outcomes;
    const common = {
      generation: policy.metadata.generation ?? 0,
      profile: this.o.profile(),
      outcomes,
      releases: run.releases,
      previousConditions: previous?.conditions,
      now: new Date(),
    };
    const reports = await this.publishReports(policy, outcomes, targets);
    const status =
      policy.namespace === undefined
        ? buildClusterPolicyStatus({ ...common, namespaces: targets.namespaces, excluded: targets.excluded, ...(reports ? { reports } : {}) })
        : buildPolicyStatus({ ...common, mode: policy.spec.mode });
    if (measured) status.conditions = withMeasuredCondition(status.conditions ?? [], measured.condition, common.now, common.generation);
    if (!sameStatus(previous, status)) await this.o.statusWriter.apply(policy.namespace, policy.name, status);
    await this.report(policy, outcomes, targets);
  }

  /**
   * One round over the targets the changes concern and the orphans, each carried out by its own mode: a cluster
   * policy's namespaces may be in Enforce or Audit (modeOverrides), and a namespace that left it releases by the mode
   * its labels give now (targets.ts).
   */
  private async runRound(policy: PolicySubject, targets: PolicyTargets, signal: AbortSignal): Promise<RoundResult> {
    if (targets.mine.length === 0 && targets.orphans.length === 0) return { outcomes: [], releases: [], waitsOnTke: false, stopped: [], skipped: 0 };
    const modes = new Map([...targets.mine, ...targets.orphans].map((t) => [targetKey(t.facts), t.mode]));
    // The orphans' CLBs too: a release must see who else keeps a shared CLB's VIP bound (shared-clb.ts).
    const ignoreSkipOf = policy.cluster?.skipAnnotation === 'Ignore' ? policy.owner : undefined;
    const shared = sharedWith([...targets.mine, ...targets.orphans].map((t) => t.facts), this.o.caches, new Set(targets.namespaces.keys()), targets.index, ignoreSkipOf);
    return this.round.run(
      { spec: policy.spec, profile: this.o.profile(), owner: policy.owner, targets: targets.mine.map((m) => m.facts), orphans: targets.orphans, enforcing: (t) => modes.get(targetKey(t)) === 'Enforce', shared, ...(ignoreSkipOf ? { ignoreSkipAnnotation: true } : {}) },
      signal,
    );
  }

  /**
   * The policy's results where each namespace's users read them: its part of the OpenReports Report of every
   * namespace it governs (namespace-reports.ts). Returns the namespaces' report names, for a cluster policy's status.
   */
  private async publishReports(policy: PolicySubject, outcomes: readonly TargetOutcome[], targets: PolicyTargets): Promise<Map<string, string> | undefined> {
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
        ...(o.measured ? { measured: o.measured } : {}),
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

  /** When to come back (requeue.ts), keeping the waiting streak and dropping the reads of CLBs being built. */
  private requeue(key: string, outcomes: readonly TargetOutcome[], run: RoundResult): ReconcileOutcome {
    const next = nextReconcile({
      outcomes,
      releases: run.releases,
      waitsOnTke: run.waitsOnTke,
      ...(run.graceEndsAt !== undefined ? { graceEndsAt: run.graceEndsAt } : {}),
      streak: this.building.get(key) ?? 0,
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
    this.o.reports?.forget(key);
    this.o.probe?.forget(key);
    this.building.delete(key);
    this.planned.delete(key);
    this.clbs.delete(key);
    this.pending.delete(key);
    const ref = policyRefOf(key);
    this.o.metrics.forgetTargets(ref.namespace, ref.kind === CLUSTER_KIND ? key : ref.name);
    this.lastVerdicts.delete(key);
  }
}
