// One policy round: observe → assess → plan → (Enforce) execute, in chunks of CHUNK targets with CHUNKS_IN_FLIGHT
// chunks at a time, then the releases of targets the policy changed but no longer manages. Reading one chunk's
// CLBs overlaps with writing another's (reads and writes have separate per-action quotas). Every target ends
// with an outcome: a failed CLB read marks only its own chunk, a failed step only its own target.
import type { LoopbackPolicy, ResolvedPolicySpec } from '../../api/loopbackpolicy.js';
import { describeCloudError } from '../../cloud/index.js';
import { assessTarget, type Assessment } from '../../model/assessment.js';
import type { ClusterProfile } from '../../model/cluster-profile.js';
import { targetKey, type ClbObservation, type TargetFacts, type TargetRef } from '../../model/facts.js';
import type { ReleaseOutcome, TargetError, TargetOutcome } from '../../model/status.js';
import type { LearnedCapabilities } from '../../mitigation/capabilities.js';
import { ExecutionInterrupted, type Execution, type Executor } from '../../mitigation/executor.js';
import { governingConfigName, type ConfigView } from '../../plan/l7.js';
import { ownershipOf, sameObject, type Ownership } from '../../plan/ownership.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { planOrphan, planTarget, type ManagedTarget, type OrphanTarget } from '../../plan/policy-plan.js';
import { describeStep, type Step, type TargetPlan } from '../../plan/steps.js';
import type { Logger } from '../../runtime/logger.js';
import { settleAll } from '../../runtime/settle.js';
import type { ClbObserver } from '../../cloud/clb-observer.js';

/** Targets per observe/plan/execute step: one DescribeLoadBalancers batch. */
const CHUNK = 20;
const CHUNKS_IN_FLIGHT = 3;

export interface RoundDeps {
  observer: ClbObserver;
  capabilities: LearnedCapabilities;
  tkeServiceConfigs(namespace: string): readonly { metadata?: { name?: string }; spec?: unknown }[];
  /**
   * Whether the TkeServiceConfig cache has synced. Until it has, an absent config means "not known yet", not
   * "gone": no L7 step is planned (a release that took it for gone would drop originals it never restored).
   */
  tkeServiceConfigsSynced(): boolean;
  /** The target's LoopbackRecord from the informer cache (the executor re-reads it before every write). */
  record(target: TargetRef): LoopbackRecord | undefined;
  logger: Logger;
  driftCheckIntervalMs: number;
  /** How long TKE gets to apply a declared TkeServiceConfig. */
  tkeGraceMs: number;
  executor?: Executor;
  /** Aborts when shutdown begins: no further chunk or release is started (the chunks under way finish). */
  stopping?: AbortSignal;
}

export interface RoundInput {
  policy: LoopbackPolicy;
  spec: ResolvedPolicySpec;
  profile: ClusterProfile;
  owner: string;
  targets: readonly TargetFacts[];
  /** Targets whose record belongs to this policy but that it does not manage now, with their records. */
  orphans: readonly Orphan[];
  enforcing: boolean;
  /** Cached CLBs whose drift check is due this round (drift.ts): read again before the chunks, in full batches. */
  drift?: readonly string[];
}

/** A target the policy changed but no longer manages, and its registry entry. */
export interface Orphan {
  facts: TargetFacts;
  entry: LoopbackRecord;
  /** The object the record was made for is gone (see OrphanTarget.stale). */
  stale?: boolean;
}

/** The target's ownership, from a record made for it; a record of an earlier object counts as none. */
function recordFor(entry: LoopbackRecord | undefined, t: TargetFacts): Ownership {
  return entry && sameObject(entry, t) ? ownershipOf(entry) : {};
}

export interface RoundResult {
  outcomes: TargetOutcome[];
  releases: ReleaseOutcome[];
  policyError?: { reason: string; message: string };
  /** Some target waits for TKE (an auto config, a declared config): read again soon. */
  waiting: boolean;
  /** The earliest end of a grace period a wait for TKE is counting (ms): the read that decides comes right after. */
  graceEndsAt?: number;
  /** Targets whose plan shutdown stopped before its next step (see Execution.stopped). */
  stopped: Execution[];
  /** Targets and releases the round did not reach because shutdown began: the outcomes are partial. */
  skipped: number;
}

function configView(deps: RoundDeps, t: TargetFacts): ConfigView | undefined {
  if (t.kind !== 'Ingress') return undefined;
  const name = governingConfigName(t.name, t.annotations);
  if (!name) return undefined;
  const found = deps.tkeServiceConfigs(t.namespace).find((c) => c.metadata?.name === name);
  return found ? { name, spec: found.spec, exists: true } : { name, exists: false };
}

/** The steps not carried out yet; a wait stays on the list until TKE has done what it waits for. */
export function remainingSteps(e: Execution): Step[] {
  const rest = e.plan.steps.slice(e.executed.length);
  return e.waiting ? [e.plan.steps[e.executed.length - 1] as Step, ...rest] : rest;
}

/** Notes a waiting execution: the round waits, and a wait with a start counts TKE's grace period from it. */
function noteWait(result: RoundResult, e: Execution, graceMs: number): void {
  if (!e.waiting) return;
  result.waiting = true;
  const step = e.executed.at(-1);
  const since = step?.kind === 'AwaitTke' && step.since ? Date.parse(step.since) : NaN;
  if (Number.isNaN(since)) return;
  const ends = since + graceMs;
  if (ends > Date.now()) result.graceEndsAt = Math.min(result.graceEndsAt ?? Infinity, ends);
}

/** The target's annotations after the executed steps (for assessing it again without a read). */
function annotationsAfter(annotations: Readonly<Record<string, string>> | undefined, executed: readonly Step[]): Record<string, string> {
  const out: Record<string, string> = { ...(annotations ?? {}) };
  for (const s of executed) {
    if (s.kind !== 'AnnotateTarget') continue;
    for (const [k, v] of Object.entries(s.set)) {
      if (v === null) delete out[k];
      else out[k] = v;
    }
  }
  return out;
}

export class PolicyRound {
  constructor(private readonly d: RoundDeps) {}

  async run(input: RoundInput, signal: AbortSignal): Promise<RoundResult> {
    const chunks: TargetFacts[][] = [];
    for (let i = 0; i < input.targets.length; i += CHUNK) chunks.push(input.targets.slice(i, i + CHUNK));
    const result: RoundResult = { outcomes: [], releases: [], waiting: false, stopped: [], skipped: 0 };
    await this.driftChecks(input.drift ?? [], signal);
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

  /**
   * The drift checks due, read before the chunks so that they go out in full DescribeLoadBalancers batches (spread
   * over the chunks, each chunk would read its few in a call of its own). A failure leaves the cached facts: the
   * CLBs stay due and the next round tries again.
   */
  private async driftChecks(ids: readonly string[], signal: AbortSignal): Promise<void> {
    if (ids.length === 0 || this.d.stopping?.aborted) return;
    try {
      await this.d.observer.reread(ids, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const info = describeCloudError(err);
      this.d.logger.warn('Drift checks failed; the CLBs stay due', { clbs: ids.length, code: info.code, reason: info.reason });
    }
  }

  private async observe(ids: readonly string[], signal: AbortSignal): Promise<{ observations: Map<string, ClbObservation>; error?: TargetError }> {
    try {
      return { observations: await this.d.observer.observe(ids, this.d.driftCheckIntervalMs, signal) };
    } catch (err) {
      if (signal.aborted) throw err;
      const info = describeCloudError(err);
      this.d.logger.warn('Reading CLBs failed', { code: info.code, reason: info.reason, retryable: info.retryable });
      return { observations: new Map(), error: { reason: info.retryable ? 'RetryingAfterError' : info.reason, message: info.message, permanent: !info.retryable } };
    }
  }

  private assess(input: RoundInput, target: TargetFacts, clb: ClbObservation): Assessment {
    return assessTarget(target, { policy: input.spec, profile: input.profile, clb, capabilities: this.d.capabilities.snapshot() });
  }

  private async chunk(input: RoundInput, chunk: readonly TargetFacts[], result: RoundResult, signal: AbortSignal): Promise<void> {
    // Reading a chunk's CLBs during the drain only delays the process's exit: what it would find, the next leader reads.
    if (this.d.stopping?.aborted) {
      result.skipped += chunk.length;
      return;
    }
    const ids = chunk.map((t) => t.loadBalancerId).filter((id): id is string => !!id);
    const { observations, error } = await this.observe(ids, signal);
    const observed = (t: TargetFacts): ClbObservation => (t.loadBalancerId ? (observations.get(t.loadBalancerId) ?? { state: 'NotObserved' }) : { state: 'NotObserved' });
    const managed: ManagedTarget[] = chunk.map((t) => {
      const clb = observed(t);
      const config = configView(this.d, t);
      const at = t.loadBalancerId ? this.d.observer.observedAt(t.loadBalancerId) : undefined;
      return {
        assessment: this.assess(input, t, clb),
        annotations: t.annotations,
        ownership: this.ownership(t),
        ...(clb.state === 'Found' ? { clb: clb.clb } : {}),
        ...(at !== undefined ? { observedAt: at } : {}),
        ...(config ? { config } : {}),
      };
    });
    if (error) {
      // Nothing is planned on facts that could not be read; a permanent failure (CAM) is the policy's.
      if (error.permanent) result.policyError ??= { reason: error.reason, message: error.message };
      result.outcomes.push(...managed.map((m) => ({ assessment: m.assessment, ...(error.permanent ? {} : { error }) })));
      return;
    }
    const caps = this.d.capabilities.snapshot();
    const planInput = { owner: input.owner, rejected: { keepalive: caps.keepaliveRejected !== undefined, range100_64: caps.range100_64Rejected !== undefined }, now: new Date(), graceMs: this.d.tkeGraceMs };
    const configsKnown = this.d.tkeServiceConfigsSynced();
    const plans = managed.map((m) => (m.assessment.target.kind === 'Ingress' && !configsKnown ? { target: m.assessment.target, layer: 'L7' as const, purpose: 'Mitigate' as const, steps: [] } : planTarget(planInput, m)));
    if (!configsKnown && managed.some((m) => m.assessment.target.kind === 'Ingress')) result.waiting = true;
    this.unlearn(managed);
    if (!input.enforcing || !this.d.executor) {
      // Audit: the plan as it is, reported. A problem only a human can fix shows in the message, without Stalled.
      await this.maintainHeld(input, managed, plans, result, signal);
      return;
    }
    const executions = await this.d.executor.execute(input.owner, plans, signal);
    executions.forEach((e, i) => {
      const m = managed[i] as ManagedTarget;
      const t = chunk[i] as TargetFacts;
      noteWait(result, e, this.d.tkeGraceMs);
      if (e.stopped) result.stopped.push(e);
      let assessment = m.assessment;
      if (e.executed.length > 0 && !e.gone) {
        // The executed steps' effects are in the observer's cache and the annotations; no read-back needed.
        const clb = t.loadBalancerId ? (this.d.observer.cached(t.loadBalancerId) ?? observed(t)) : observed(t);
        const after = this.assess(input, { ...t, annotations: annotationsAfter(t.annotations, e.executed) } as TargetFacts, clb);
        // What was wrong with the target as read is still news when a step replaced it (an invalid prevent-loopback
        // overwritten with "true" comes back on revert): its warnings are reported with those of the result.
        assessment = { ...after, warnings: [...new Set([...m.assessment.warnings, ...after.warnings])] };
      }
      result.outcomes.push({ assessment, plan: remainingSteps(e).map(describeStep), ...(e.error ? { error: e.error } : {}) });
    });
  }

  /**
   * Audit after Enforce (docs/execution.md "Mode switch"): a target whose record this policy holds keeps the
   * changes made in Enforce. Leaving them unmaintained could hurt (prevent-loopback kept while the source drifts
   * back to the VIP drops every health check), so Audit carries out the plan's drift corrections of those fields,
   * and nothing else: no new change, no release. Everything else of the plan is reported as Enforce would do it.
   */
  private async maintainHeld(input: RoundInput, managed: readonly ManagedTarget[], plans: TargetPlan[], result: RoundResult, signal: AbortSignal): Promise<void> {
    const held = managed.map((m) => m.ownership?.owner === input.owner && m.ownership.record !== undefined);
    // Only a listener source put back on the VIP is a harm of loopguard's own making (prevent-loopback stays); it
    // needs no record step first. Everything else waits for Enforce.
    const corrections = plans.map((p, i) => ({ ...p, steps: held[i] ? p.steps.filter((s) => s.kind === 'SetListenerHealthCheckSource' && s.drift === true) : [] }));
    const todo = corrections.flatMap((p, i) => (p.steps.length > 0 ? [i] : []));
    const executions = new Map<number, Execution>();
    if (todo.length > 0 && this.d.executor) {
      (await this.d.executor.execute(input.owner, todo.map((i) => corrections[i] as TargetPlan), signal)).forEach((e, k) => executions.set(todo[k] as number, e));
    }
    plans.forEach((p, i) => {
      const e = executions.get(i);
      if (e?.stopped) result.stopped.push(e);
      const done = new Set(e?.executed ?? []);
      result.outcomes.push({
        assessment: (managed[i] as ManagedTarget).assessment,
        plan: p.steps.filter((s) => !done.has(s)).map(describeStep),
        ...(held[i] ? { held: true } : {}),
        ...(e?.error ? { error: e.error } : {}),
      });
    });
  }

  /** The target's ownership; a record that fails validation is left alone (never acted on) and reported. */
  private ownership(t: TargetFacts): Ownership {
    const o = recordFor(this.d.record(t), t);
    if (o.problem) this.d.logger.warn('Ignoring an invalid LoopbackRecord', { target: targetKey(t), problem: o.problem });
    return o;
  }

  /** Proof that a learned refusal no longer holds: keepalive seen on where it was wanted. */
  private unlearn(managed: readonly ManagedTarget[]): void {
    for (const m of managed) {
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
      plans = await planReleases(this.d, input.owner, input.orphans, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // The orphans' CLBs could not be read: each release reports it, the round goes on.
      const info = describeCloudError(err);
      const error: TargetError = { reason: info.retryable ? 'RetryingAfterError' : info.reason, message: info.message, permanent: !info.retryable && info.reason === 'PermissionDenied' };
      result.releases.push(...input.orphans.map((o) => ({ kind: o.facts.kind, name: o.facts.name, plan: [], error })));
      return;
    }
    if (plans.length === 0) return;
    if (!input.enforcing || !this.d.executor) {
      result.releases.push(...plans.map((p) => ({ kind: p.target.kind, name: p.target.name, plan: p.steps.map(describeStep) })));
      return;
    }
    for (const e of await this.d.executor.execute(input.owner, plans, signal)) {
      noteWait(result, e, this.d.tkeGraceMs);
      if (e.stopped) result.stopped.push(e);
      const rest = remainingSteps(e);
      if (rest.length > 0 || e.error) result.releases.push({ kind: e.plan.target.kind, name: e.plan.target.name, plan: rest.map(describeStep), ...(e.error ? { error: e.error } : {}) });
    }
  }
}

/** Plans the release of each orphan; Ingresses need their CLB (what TKE has restored), Services do not. */
export async function planReleases(d: RoundDeps, owner: string, orphans: readonly Orphan[], signal: AbortSignal): Promise<TargetPlan[]> {
  // Ingresses wait for the TkeServiceConfig cache (see RoundDeps.tkeServiceConfigsSynced).
  if (!d.tkeServiceConfigsSynced()) orphans = orphans.filter((o) => o.facts.kind !== 'Ingress');
  const ids = orphans.filter((o) => o.facts.kind === 'Ingress' && o.facts.loadBalancerId).map((o) => o.facts.loadBalancerId as string);
  const observations = ids.length > 0 ? await d.observer.observe(ids, d.driftCheckIntervalMs, signal) : new Map<string, ClbObservation>();
  return orphans
    .map(({ facts: o, entry, stale }) => {
      const obs = o.loadBalancerId ? observations.get(o.loadBalancerId) : undefined;
      const at = o.loadBalancerId ? d.observer.observedAt(o.loadBalancerId) : undefined;
      const config = configView(d, o);
      const target: TargetRef = { kind: o.kind, namespace: o.namespace, name: o.name };
      const orphan: OrphanTarget = {
        target,
        annotations: o.annotations,
        ownership: ownershipOf(entry),
        ...(stale ? { stale: true } : {}),
        ...(o.loadBalancerId ? { loadBalancerId: o.loadBalancerId } : {}),
        ...(obs?.state === 'Found' ? { clb: obs.clb } : {}),
        ...(obs?.state === 'Found' && at !== undefined ? { observedAt: at } : {}),
        ...(config ? { config } : {}),
      };
      return planOrphan({ owner, now: new Date(), graceMs: d.tkeGraceMs }, orphan);
    })
    .filter((p) => p.steps.length > 0);
}
