// Reconciles one policy, a LoopbackPolicy or a ClusterLoopbackPolicy (subject.ts; the queue key is its owner key): the
// pipeline and stages of docs/architecture.md §3 and §7. Only the targets the changes since its last round concern are
// planned (pending.ts); the level is what is planned, never a memo of an earlier round.
import { FINALIZER, type LoopbackPolicyStatus } from '../../api/loopbackpolicy.js';
import { CLUSTER_KIND, type ClusterLoopbackPolicyStatus } from '../../api/clusterloopbackpolicy.js';
import { targetKey } from '../../model/facts.js';
import { initialPolicyStatus, type TargetOutcome } from '../../model/status.js';
import type { Assessment } from '../../model/assessment-result.js';
import { ExecutionInterrupted } from '../../mitigation/executor.js';
import { policyRefOf, type OwnerKey } from '../../model/record-registry.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import { PolicyDeletion } from './deletion.js';
import { PolicyPublisher } from './publish.js';
import type { MeasuredCondition } from '../../probe/evidence.js';
import type { PolicyControllerOptions, RoundInput } from './deps.js';
import { nextReconcile, settled } from './requeue.js';
import { EVERYTHING, PendingChanges, targetsToPlan, type Change } from './pending.js';
import { PolicyRound, type RoundResult } from './round.js';
import { asksForDns, liveSubject, type PolicySubject } from './subject.js';
import { policyTargets, sharedWith, type ManagedFacts, type PolicyTargets } from './targets.js';

/**
 * What a round's start leaves for its end (PolicyController.begin): the round's input when there is something to plan
 * or release, else the selection it was chosen from.
 */
type Begun = { previous: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined; planned: ManagedFacts[]; covering?: Iterable<string> } & ({ round: RoundInput } | { all: PolicyTargets });

/** A round with nothing to plan or release. */
const NOTHING_PLANNED: RoundResult = { outcomes: [], releases: [], waitsOnTke: false, stopped: [], skipped: 0 };

const jitter = (ms: number): number => Math.round(ms * (0.9 + Math.random() * 0.2));

/** What the controller keeps of one policy between its rounds (forgotten with it). */
interface PolicyState {
  /** Consecutive rounds it waited on TKE (CLBs being built, configs to apply), for the recheck backoff. */
  building: number;
  /** Each target it manages as last planned (by targetKey): the others' part of a round's outcomes. */
  planned?: Map<string, TargetOutcome>;
  /** The CLBs its managed targets are bound to (a CLB read that differs concerns the policy). */
  clbs: ReadonlySet<string>;
  /** What changed since its last round (pending.ts). */
  pending: PendingChanges;
  /** The assessments its Events last reported, by targetKey (publish.ts). */
  verdicts?: Map<string, Assessment>;
}

export class PolicyController {
  private readonly round: PolicyRound;
  private readonly policies = new Map<OwnerKey, PolicyState>();

  private readonly deletion: PolicyDeletion;
  private readonly publisher: PolicyPublisher;

  constructor(private readonly o: PolicyControllerOptions) {
    this.round = new PolicyRound(o);
    this.publisher = new PolicyPublisher(o);
    this.deletion = new PolicyDeletion(o, this.round, this.publisher);
  }

  /** A change that concerns the policy (routing.ts): its next round plans the targets the change concerns. */
  touch(key: OwnerKey, change: Change): void {
    this.stateOf(key).pending.add(change);
  }

  private stateOf(key: OwnerKey): PolicyState {
    let s = this.policies.get(key);
    if (!s) this.policies.set(key, (s = { building: 0, clbs: new Set(), pending: new PendingChanges() }));
    return s;
  }

  /** The policies whose managed targets are bound to the CLB. */
  policiesOn(clb: string): OwnerKey[] {
    return [...this.policies].flatMap(([key, s]) => (s.clbs.has(clb) ? [key] : []));
  }

  /** Every CLB a policy's managed targets are bound to (what the drift checks read). */
  clbsInUse(): Set<string> {
    return new Set([...this.policies.values()].flatMap((s) => [...s.clbs]));
  }

  /** The policy's targets' last outcomes, by targetKey; undefined until a round of it remembered them. */
  outcomes(key: OwnerKey): ReadonlyMap<string, TargetOutcome> | undefined {
    return this.policies.get(key)?.planned;
  }

  /** `key`: the policy's owner key, `<namespace>/<name>` or `ClusterLoopbackPolicy/<name>` (record-registry.ts). */
  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const subject = liveSubject(this.o.caches, key);
    if (!subject) {
      this.forgetPolicy(key);
      return;
    }
    try {
      return await this.evaluate(subject, signal);
    } catch (err) {
      // What this round took from the pending changes is not done: the retry plans every target again.
      this.touch(key, EVERYTHING);
      // The shutdown grace period ended mid-round: say where it stopped before the process goes.
      if (signal.aborted) await this.publisher.reportStopped(subject, err instanceof ExecutionInterrupted ? err.stopped : [], true);
      throw err;
    }
  }

  /** One reconcile: the pipeline of the header. */
  private async evaluate(policy: PolicySubject, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    if (policy.metadata.deletionTimestamp) {
      const outcome = await this.deletion.finalize(policy, signal);
      if (outcome) return outcome;
      this.forgetPolicy(policy.owner);
      return;
    }
    const begun = await this.begin(policy);
    const run = 'round' in begun ? await this.round.run(begun.round, signal) : NOTHING_PLANNED;
    if (run.skipped > 0) {
      // Shutdown began mid-round: a status of the targets reached so far would drop the others. The last full
      // status stays; the log line and Event say where the round stopped.
      this.touch(policy.owner, EVERYTHING);
      await this.publisher.reportStopped(policy, run.stopped, false, run.skipped);
      return;
    }
    // After a round, the targets as the caches show them now: under Enforce a round runs for minutes, and holding what
    // `begin` gathered until here kept every target's facts alive through it, to meet the next round's in the old
    // generation (bench/scale's peaks at the rounds' ends: docs/benchmarks.md, "Gathered twice").
    const all = 'all' in begun ? begun.all : policyTargets(policy, this.o.caches);
    const { outcomes, measured } = await this.remember(policy, all, begun.planned, run, begun.covering);
    await this.publisher.publish(policy, begun.previous, all, outcomes, run.releases, this.stateOf(policy.owner), measured);
    // Shutdown began during the round: the status shows the steps left; this says why they were left.
    if (run.stopped.length > 0) await this.publisher.reportStopped(policy, run.stopped, false);
    return this.requeue(policy.owner, outcomes, run);
  }

  /**
   * A round's start: the targets the changes concern, the finalizer, Reconciling. With something to plan or release,
   * what the round runs on and only that (what was gathered to choose it is let go here); with nothing, the selection
   * itself, still current, for the status.
   */
  private async begin(policy: PolicySubject): Promise<Begun> {
    const all = policyTargets(policy, this.o.caches);
    // Whatever brought this round may change what the probe plan measures (it reads the caches, not this round).
    this.o.probe?.changed(policy.spec.probe.enabled);
    const { targets, covering } = this.changedTargets(policy.owner, all);
    await this.ensureFinalizer(policy, all);
    const previous = await this.markReconciling(policy);
    const round = this.roundInput(policy, targets);
    return { previous, planned: targets.mine, ...(covering ? { covering } : {}), ...(round ? { round } : { all }) };
  }

  /**
   * The policy's targets narrowed to those the changes since its last round concern (pending.ts); its orphans all.
   * `covering`: the namespaces whose coverage may have changed (every one on its first round or a policy-wide change).
   */
  private changedTargets(key: OwnerKey, all: PolicyTargets): { targets: PolicyTargets; covering?: Iterable<string> } {
    const state = this.stateOf(key);
    const changes = state.pending;
    state.pending = new PendingChanges();
    const plan = new Set(targetsToPlan(all.mine.map((m) => m.facts), changes, (k) => state.planned?.has(k) ?? false).map(targetKey));
    this.o.metrics.targetsPlanned?.inc(plan.size);
    const covering = !state.planned || changes.all ? all.namespaces.keys() : changes.namespaces.size > 0 ? changes.namespaces : undefined;
    return { targets: { ...all, mine: all.mine.filter((m) => plan.has(targetKey(m.facts))) }, ...(covering ? { covering } : {}) };
  }

  /** With revertOnDelete, a policy that enforces anywhere keeps its finalizer until its changes are reverted. */
  private async ensureFinalizer(policy: PolicySubject, targets: PolicyTargets): Promise<void> {
    const enforces = [...targets.namespaces.values(), ...targets.orphans.map((o) => o.mode)].includes('Enforce');
    if (enforces && policy.spec.revertOnDelete && !policy.metadata.finalizers?.includes(FINALIZER)) {
      await this.o.writer.setFinalizers({ kind: policy.kind, metadata: policy.metadata }, [...(policy.metadata.finalizers ?? []), FINALIZER]);
    }
  }

  /**
   * Every target's outcome, this round's or its last, the conflicts, with the probe's figures (docs/architecture.md §7
   * `remember`); a target not settled stays pending; the reports of the namespaces whose outcomes changed are queued.
   */
  private async remember(policy: PolicySubject, all: PolicyTargets, planned: readonly ManagedFacts[], run: RoundResult, covering?: Iterable<string>): Promise<{ outcomes: TargetOutcome[]; measured?: MeasuredCondition }> {
    const state = this.stateOf(policy.owner);
    const fresh = new Map(run.outcomes.map((o) => [targetKey(o.assessment.target), o]));
    const before = state.planned;
    const now = new Map<string, TargetOutcome>();
    for (const m of all.mine) {
      const k = targetKey(m.facts);
      const o = fresh.get(k) ?? before?.get(k);
      if (o) now.set(k, o);
    }
    const outcomes: TargetOutcome[] = [...now.values(), ...all.conflicts.map((assessment) => ({ assessment }))];
    const measured = await this.o.probe?.annotate(policy.spec.probe.enabled, outcomes, (ns) => (all.namespaces.get(ns) ?? policy.spec.mode) === 'Enforce');
    for (const o of measured?.outcomes ?? []) if (now.has(targetKey(o.assessment.target))) now.set(targetKey(o.assessment.target), o);
    const touched = new Set(covering);
    for (const [k, o] of now) if (fresh.has(k) || o.measured !== before?.get(k)?.measured) touched.add(o.assessment.target.namespace);
    for (const [k, o] of before ?? []) if (!now.has(k)) touched.add(o.assessment.target.namespace);
    state.planned = now;
    state.clbs = new Set(all.mine.flatMap((m) => (m.facts.loadBalancerId ? [m.facts.loadBalancerId] : [])));
    // A target that has not settled (requeue.ts) stays pending, as does one whose verdict a time decides (`due`, at the
    // requeue's graceEndsAt); shutdown's stop leaves everything the round planned pending.
    const configsKnown = this.o.tkeServiceConfigsSynced();
    for (const m of planned) {
      const k = targetKey(m.facts);
      const o = now.get(k);
      if (!o || !settled(o, this.o.executor !== undefined && m.mode === 'Enforce', configsKnown) || run.stopped.length > 0) this.touch(policy.owner, { target: k });
    }
    for (const k of run.due ?? []) this.touch(policy.owner, { target: k });
    this.o.reports?.changed(touched, covering !== undefined);
    // The DNS rules' unit reads the names from these outcomes when its key runs (dns-rules.ts).
    this.o.dns?.changed(policy.owner, asksForDns(policy), touched.size > 0);
    return { outcomes: measured?.outcomes ?? outcomes, ...(measured?.condition ? { measured: measured.condition } : {}) };
  }

  /**
   * One round over the targets the changes concern and the orphans, each carried out by its own mode: a cluster
   * policy's namespaces may be in Enforce or Audit (modeOverrides), and a namespace that left it releases by the mode
   * its labels give now (targets.ts). None when there is nothing to plan or release.
   */
  private roundInput(policy: PolicySubject, targets: PolicyTargets): RoundInput | undefined {
    if (targets.mine.length === 0 && targets.orphans.length === 0) return undefined;
    const modes = new Map([...targets.mine, ...targets.orphans].map((t) => [targetKey(t.facts), t.mode]));
    // The orphans' CLBs too: a release must see who else keeps a shared CLB's VIP bound (shared-clb.ts).
    const ignoreSkipOf = policy.cluster?.skipAnnotation === 'Ignore' ? policy.owner : undefined;
    const shared = sharedWith([...targets.mine, ...targets.orphans].map((t) => t.facts), this.o.caches, new Set(targets.namespaces.keys()), targets.index, ignoreSkipOf);
    return { spec: policy.spec, profile: this.o.profile(), owner: policy.owner, targets: targets.mine.map((m) => m.facts), orphans: targets.orphans, enforcing: (t) => this.o.executor !== undefined && modes.get(targetKey(t)) === 'Enforce', shared, ...(ignoreSkipOf ? { ignoreSkipAnnotation: true } : {}) };
  }

  /** A new generation: Ready=Unknown + Reconciling first, so kstatus/Flux never see the old status as current. */
  private async markReconciling(policy: PolicySubject): Promise<LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined> {
    const generation = policy.metadata.generation ?? 0;
    const current = policy.object.status;
    if (current?.observedGeneration === generation) return current;
    const initial = initialPolicyStatus(generation, current?.conditions, new Date());
    await this.o.statusWriter.apply(policy.namespace, policy.name, initial);
    return initial;
  }

  /** When to come back (requeue.ts), keeping the waiting streak and dropping the reads of CLBs being built. */
  private requeue(key: OwnerKey, outcomes: readonly TargetOutcome[], run: RoundResult): ReconcileOutcome {
    const state = this.stateOf(key);
    const next = nextReconcile({ ...run, outcomes, streak: state.building, driftCheckIntervalMs: this.o.driftScheduler.intervalMs, now: Date.now(), jitter });
    for (const id of next.invalidate) this.o.observer.invalidate(id);
    state.building = next.streak;
    return next.outcome;
  }

  private forgetPolicy(key: OwnerKey): void {
    // Its results leave the reports of the namespaces it had targets in; the prune removes those nobody covers now.
    this.o.reports?.changed(new Set([...(this.policies.get(key)?.planned?.values() ?? [])].map((o) => o.assessment.target.namespace)), true);
    // Its probe plan entries, gauges and DNS rules.
    this.o.dns?.changed(key, false, true);
    this.o.probe?.forget(key);
    const ref = policyRefOf(key);
    this.o.metrics.forgetTargets(ref.namespace, ref.kind === CLUSTER_KIND ? key : ref.name);
    this.policies.delete(key);
  }
}
