// One policy round, per chunk of CHUNK targets, CHUNKS_IN_FLIGHT at a time (docs/execution.md "The round"): gather →
// planPolicy → (Enforce) execute, then the releases. Chunks overlap because reads and writes have separate per-action
// quotas. Every target ends with an outcome: a failed CLB read marks only its chunk, a failed step only its target.
import { setByLoopguardOf, targetKey, type ClbObservation, type TargetFacts, type TargetRef } from '../../model/facts.js';
import { lostRecordDueAt } from '../../model/lost-record.js';
import type { ReleaseOutcome, TargetError, TargetOutcome } from '../../model/status.js';
import { classifyError } from '../../mitigation/errors.js';
import { ExecutionInterrupted, remainingSteps, type Execution } from '../../mitigation/executor.js';
import { assessSnapshot, planPolicy, sharedVerdict, type PlannedTarget } from '../../plan/policy-plan.js';
import { keptForStatus, list } from '../../model/assessment-result.js';
import type { Snapshot, TargetSnapshot } from '../../plan/snapshot.js';
import { annotationsAfter, describeStep, maintainedInAudit, waitSince, type TargetPlan } from '../../plan/steps.js';
import { settleAll } from '../../runtime/settle.js';
import type { ClbObserver } from '../../cloud/clb-observer.js';
import { FRESH_BEFORE_WRITE_MS } from '../../mitigation/steps/effect.js';
import type { RoundDeps, RoundInput } from './deps.js';
import { gatherOrphans, gatherTargets, snapshotBase } from './gather.js';

/** Targets per observe/plan/execute step: one DescribeLoadBalancers batch. */
const CHUNK = 20;
const CHUNKS_IN_FLIGHT = 3;

export interface RoundResult {
  outcomes: TargetOutcome[];
  releases: ReleaseOutcome[];
  /** Some target waits for TKE (an auto config, a declared config): read again soon. */
  waitsOnTke: boolean;
  /** The earliest end of a grace period a wait for TKE is counting (ms): the read that decides comes right after. */
  graceEndsAt?: number;
  /** Targets (targetKey) whose verdict a time decides (a record that may only be late): planned again at graceEndsAt. */
  due?: string[];
  /** Targets whose plan shutdown stopped before its next step (see Execution.stopped). */
  stopped: Execution[];
  /** Targets and releases the round did not reach because shutdown began: the outcomes are partial. */
  skipped: number;
}

/** Notes a waiting execution: the round waits, and a wait with a start counts TKE's grace period from it. */
function noteWait(result: RoundResult, e: Execution, graceMs: number): void {
  if (!e.waiting) return;
  result.waitsOnTke = true;
  const planned = waitSince(e.executed.at(-1));
  const since = e.waitSince ?? (planned ? Date.parse(planned) : NaN);
  if (Number.isNaN(since)) return;
  const ends = since + graceMs;
  if (ends > Date.now()) result.graceEndsAt = Math.min(result.graceEndsAt ?? Infinity, ends);
}

const released = ({ kind, namespace, name }: TargetRef, rest: Omit<ReleaseOutcome, 'kind' | 'namespace' | 'name'>): ReleaseOutcome => ({ kind, namespace, name, ...rest });

/** Whether the policy holds the target's record with its originals: what Audit keeps maintained (maintainHeld). */
const holds = (input: Pick<RoundInput, 'owner'>, t: TargetSnapshot): boolean => t.ownership?.owner === input.owner && t.ownership.originals !== undefined;

/**
 * The round's chunks: targets bound to a CLB first, CHUNK to a chunk, so that each chunk's read is one full
 * DescribeLoadBalancers batch; then the targets with no CLB (ClusterIP Services, CLBs not built yet), which read
 * nothing. In the targets' own order, a cluster policy's chunks mixed them namespace by namespace (bench:scale
 * --policy cluster: 2 LoadBalancer Services and 4 Ingresses among 24 targets per namespace), and each chunk read its
 * few CLBs in batches of their own: 14 DescribeLoadBalancers and 13 DescribeTargetHealth for 60 CLBs instead of 5
 * and 4. Within the bound ones, those whose CLB is not cached come first (`known`).
 */
export function chunkTargets<T extends Pick<TargetFacts, 'loadBalancerId'>>(targets: readonly T[], size = CHUNK, known: (clb: string) => boolean = () => true): T[][] {
  // Targets whose CLB this process has no observation of (new Services, CLBs being built) first: after a restart the
  // converged ones are judged from the checkpoint, and a new Service need not wait behind them.
  const bound = targets.filter((t) => t.loadBalancerId);
  const ordered = [...bound.filter((t) => !known(t.loadBalancerId as string)), ...bound.filter((t) => known(t.loadBalancerId as string)), ...targets.filter((t) => !t.loadBalancerId)];
  const chunks: T[][] = [];
  for (let i = 0; i < ordered.length; i += size) chunks.push(ordered.slice(i, i + size));
  return chunks;
}

export class PolicyRound {
  constructor(private readonly d: RoundDeps) {}

  async run(input: RoundInput, signal: AbortSignal): Promise<RoundResult> {
    const chunks = chunkTargets(input.targets, CHUNK, (id) => this.d.observer.observedAt(id) !== undefined);
    const result: RoundResult = { outcomes: [], releases: [], waitsOnTke: false, stopped: [], skipped: 0 };
    const settled = await settleAll(chunks, CHUNKS_IN_FLIGHT, (chunk) => this.chunk(input, chunk, result, signal));
    const rejected = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    // Aborted, every chunk tells where its targets stopped; the report needs all of them, not the first.
    if (rejected.length > 0) throw signal.aborted ? ExecutionInterrupted.merge(rejected, result.stopped) : rejected[0];
    try {
      await this.releases(input, result, signal);
    } catch (err) {
      throw signal.aborted ? ExecutionInterrupted.merge([err], result.stopped) : err;
    }
    return result;
  }

  /** The chunk's observations; `fresh`: these CLBs are read again first, however recently they were read. */
  private async observe(ids: readonly string[], signal: AbortSignal, fresh?: readonly string[]): Promise<{ observations: Map<string, ClbObservation>; error?: TargetError }> {
    try {
      if (fresh) await this.d.observer.reread(fresh, signal);
      return { observations: await this.d.observer.observe(ids, this.d.driftScheduler.fullIntervalMs(), signal) };
    } catch (err) {
      if (signal.aborted) throw err;
      const error = classifyError(err, 'reading CLBs');
      this.d.logger.warn('Reading CLBs failed', { reason: error.reason, permanent: error.permanent });
      return { observations: new Map(), error };
    }
  }

  private async chunk(input: RoundInput, chunk: readonly TargetFacts[], result: RoundResult, signal: AbortSignal): Promise<void> {
    // Reading a chunk's CLBs during the drain only delays the process's exit: what it would find, the next leader reads.
    if (this.d.stopping?.aborted) {
      result.skipped += chunk.length;
      return;
    }
    const ids = chunk.map((t) => t.loadBalancerId).filter((id): id is string => !!id);
    const plan = async (fresh?: readonly string[]) => {
      const { observations, error } = await this.observe(ids, signal, fresh);
      const snapshot: Snapshot = { ...snapshotBase(this.d, input), targets: gatherTargets(this.d, chunk, observations), orphans: [] };
      return { snapshot, error, planned: error ? [] : planPolicy(snapshot).targets };
    };
    const { snapshot, error, planned } = await planOnFreshReads(this.d.observer, plan, (p) => readsBehindWrites(input, this.d.executor !== undefined, p.snapshot.targets, p.planned));
    if (error) {
      // Nothing is planned on facts that could not be read: each target reports the failure (a permanent one, CAM, stalls).
      result.outcomes.push(...snapshot.targets.map((t) => ({ assessment: keptForStatus(assessSnapshot(snapshot, t), false), error })));
      return;
    }
    // A record missing right after loopguard's annotation may only be late; the round comes back when it would be lost.
    for (const t of snapshot.targets) {
      const f = t.facts;
      const due = lostRecordDueAt({ kind: f.kind, namespace: f.namespace, name: f.name, annotations: f.annotations, setByLoopguard: setByLoopguardOf(f), hasRecord: t.ownership?.owner !== undefined, now: snapshot.now });
      if (due === undefined) continue;
      result.graceEndsAt = Math.min(result.graceEndsAt ?? Infinity, due);
      (result.due ??= []).push(targetKey(f));
    }
    if (!snapshot.configsKnown && chunk.some((t) => t.kind === 'Ingress')) result.waitsOnTke = true;
    this.unlearn(planned);
    // Each target by its mode: Audit reports the plan as it is (a problem only a human can fix shows in the message,
    // without Stalled) and carries out only maintainHeld's corrections; Enforce carries it out.
    const enforced = chunk.flatMap((t, i) => (input.enforcing(t) ? [i] : []));
    const audited = chunk.flatMap((t, i) => (input.enforcing(t) ? [] : [i]));
    await this.maintainHeld(input, audited.map((i) => snapshot.targets[i] as TargetSnapshot), audited.map((i) => planned[i] as PlannedTarget), result, signal);
    if (enforced.length === 0) return;
    const executions = await this.d.executor!.execute(input.owner, enforced.map((i) => (planned[i] as PlannedTarget).plan), signal);
    executions.forEach((e, k) => {
      const i = enforced[k] as number;
      const m = planned[i] as PlannedTarget;
      const { facts: t, clb: observed } = snapshot.targets[i] as TargetSnapshot;
      noteWait(result, e, this.d.tkeGraceMs);
      if (e.stopped) result.stopped.push(e);
      let assessment = m.assessment;
      if (e.executed.length > 0 && !e.gone) {
        // The executed steps' effects are in the observer's cache and the annotations; no read-back needed.
        const clb = t.loadBalancerId ? (this.d.observer.cached(t.loadBalancerId) ?? observed) : observed;
        const facts = { ...t, annotations: annotationsAfter(t.annotations, e.executed) } as TargetFacts;
        // A shared CLB's or config's verdict (SharedClb after switching the own listeners) stays what the status says.
        const after = sharedVerdict(snapshot, { ...(snapshot.targets[i] as TargetSnapshot), facts, clb }, assessSnapshot(snapshotBase(this.d, input), { facts, clb }));
        // What was wrong with the target as read is still news when a step replaced it (an invalid prevent-loopback
        // overwritten with "true" comes back on revert): its warnings are reported with those of the result.
        assessment = { ...after, warnings: [...new Set([...m.assessment.warnings, ...after.warnings])] };
      }
      result.outcomes.push({ assessment: keptForStatus(assessment, true), plan: list(remainingSteps(e).map(describeStep)), ...(e.error ? { error: e.error } : {}) });
    });
  }

  /**
   * Audit after Enforce (docs/execution.md "Mode switch", where the harm is): a target whose record this policy holds
   * gets the corrections that cannot wait (StepKindPlan.maintainedInAudit); the rest of the plan is only reported.
   */
  private async maintainHeld(input: RoundInput, targets: readonly TargetSnapshot[], planned: readonly PlannedTarget[], result: RoundResult, signal: AbortSignal): Promise<void> {
    const held = targets.map((t) => holds(input, t));
    const plans = planned.map((p) => p.plan);
    const corrections = plans.map((p, i) => ({ ...p, steps: held[i] ? p.steps.filter(maintainedInAudit) : [] }));
    const todo = corrections.flatMap((p, i) => (p.steps.length > 0 ? [i] : []));
    const ran = todo.length > 0 && this.d.executor ? await this.d.executor.execute(input.owner, todo.map((i) => corrections[i] as TargetPlan), signal) : [];
    const executions = new Map(ran.map((e, k) => [todo[k] as number, e]));
    plans.forEach((p, i) => {
      const e = executions.get(i);
      if (e?.stopped) result.stopped.push(e);
      const done = new Set(e?.executed ?? []);
      result.outcomes.push({
        assessment: keptForStatus((planned[i] as PlannedTarget).assessment, true),
        plan: list(p.steps.filter((s) => !done.has(s)).map(describeStep)),
        ...(held[i] ? { held: true } : {}),
        ...(e?.error ? { error: e.error } : {}),
      });
    });
  }

  /** Proof that a learned refusal no longer holds: keepalive seen on where it was wanted. */
  private unlearn(planned: readonly PlannedTarget[]): void {
    for (const m of planned) {
      const d = m.assessment.desired;
      if (d?.layer === 'L7' && d.listeners.some((l) => l.desiredKeepalive === 1) && d.listeners.every((l) => l.currentKeepalive === 1)) {
        if (this.d.capabilities.forget('keepaliveRejected')) this.d.logger.info('Keepalive took effect; forgetting the missing-capability verdict', { target: targetKey(m.assessment.target) });
      }
    }
  }

  private async releases(input: RoundInput, result: RoundResult, signal: AbortSignal): Promise<void> {
    if (input.orphans.length === 0) return;
    if (this.d.stopping?.aborted) {
      result.skipped += input.orphans.length;
      return;
    }
    let plans: TargetPlan[];
    try {
      plans = await planReleases(this.d, input, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // The orphans' CLBs could not be read: each release reports it, the round goes on.
      const error = classifyError(err, "reading the orphans' CLBs");
      result.releases.push(...input.orphans.map((o) => released(o.facts, { plan: [], error })));
      return;
    }
    // Audit: the release as it would be done, reported; Enforce carries it out.
    const enforced = plans.filter((p) => input.enforcing(p.target));
    const audited = plans.filter((p) => !input.enforcing(p.target));
    result.releases.push(...audited.map((p) => released(p.target, { plan: p.steps.map(describeStep) })));
    if (enforced.length === 0) return;
    for (const e of await this.d.executor!.execute(input.owner, enforced, signal)) {
      noteWait(result, e, this.d.tkeGraceMs);
      if (e.stopped) result.stopped.push(e);
      const rest = remainingSteps(e);
      if (!e.gone && (rest.length > 0 || e.error)) result.releases.push(released(e.plan.target, { plan: rest.map(describeStep), ...(e.error ? { error: e.error } : {}), ...(e.waiting ? { waiting: e.waiting } : {}) }));
    }
  }
}

/** The CLB a plan to be carried out writes, and when the read it was planned on was made (undefined: not cached). */
type ReadBehind = [clb: string | undefined, readAt: number | undefined];

/** The reads behind the plans a round carries out (`executor`: it has one): Enforce any step, Audit maintainHeld's corrections. */
export function readsBehindWrites(input: Pick<RoundInput, 'owner' | 'enforcing'>, executor: boolean, targets: readonly TargetSnapshot[], planned: readonly Pick<PlannedTarget, 'plan'>[]): ReadBehind[] {
  return targets.flatMap((t, i): ReadBehind[] => {
    const steps = planned[i]?.plan.steps ?? [];
    const executes = executor && (input.enforcing(t.facts) ? steps.length > 0 : holds(input, t) && steps.some(maintainedInAudit));
    return executes ? [[t.facts.loadBalancerId, t.observedAt]] : [];
  });
}

/**
 * Plans; then reads again the CLBs of the plans about to be carried out that rest on a read by a previous leader
 * (seeded) or one older than FRESH_BEFORE_WRITE_MS once planning is done (docs/execution.md "Writes read first"), and
 * plans once more. The read judged is the plan's own, never a newer one in the cache; a CLB not cached was just tried.
 */
export async function planOnFreshReads<P>(observer: Pick<ClbObserver, 'seeded'>, plan: (fresh?: readonly string[]) => Promise<P>, writes: (planned: P) => ReadBehind[], now = Date.now): Promise<P> {
  const planned = await plan();
  const stale = (id: string | undefined, at: number | undefined): id is string => !!id && at !== undefined && (observer.seeded(id) || now() - at > FRESH_BEFORE_WRITE_MS);
  const fresh = new Set(writes(planned).flatMap(([id, at]) => (stale(id, at) ? [id] : [])));
  return fresh.size > 0 ? plan([...fresh]) : planned;
}

/** Plans the release of each orphan: gathered (Ingresses need their CLB, what TKE has restored), then planned. */
function planReleases(d: RoundDeps, input: RoundInput, signal: AbortSignal): Promise<TargetPlan[]> {
  const plan = async (fresh?: readonly string[]) => {
    if (fresh) await d.observer.reread(fresh, signal);
    return planPolicy({ ...snapshotBase(d, input), targets: [], orphans: await gatherOrphans(d, input.orphans, signal) }).releases;
  };
  return planOnFreshReads(d.observer, plan, (releases) => {
    // A release is planned only with steps (planPolicy).
    const withSteps = new Set(releases.map((p) => targetKey(p.target)));
    return input.orphans.flatMap(({ facts }): ReadBehind[] => {
      const id = facts.loadBalancerId;
      return input.enforcing(facts) && withSteps.has(targetKey(facts)) ? [[id, id ? d.observer.observedAt(id) : undefined]] : [];
    });
  });
}
