// Reconciles one LoopbackPolicy: observe (caches + CLB API) → assess (pure model) → act (Enforce only, through
// the mitigation hooks) → report (status by SSA, Events on targets, metrics). Level-triggered: every run
// recomputes everything from current state, so a restart at any point converges.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Ingress, type V1Service } from '@kubernetes/client-node';
import {
  FINALIZER,
  GROUP,
  PLURAL,
  VERSION,
  withSpecDefaults,
  type LoopbackPolicy,
  type LoopbackPolicyStatus,
  type ResolvedPolicySpec,
} from '../../api/loopbackpolicy.js';
import { EventReason } from '../../api/reasons.js';
import { describeCloudError } from '../../cloud/index.js';
import type { EventRecorder } from '../../kube/events.js';
import type { PolicyStatusWriter } from '../../kube/status-writer.js';
import { assessTarget, conflictAssessment, type Assessment } from '../../model/assessment.js';
import type { ClusterProfile } from '../../model/cluster-profile.js';
import { targetKey, type AccountCapabilities, type ClbObservation, type TargetFacts } from '../../model/facts.js';
import { buildPolicyStatus, initialPolicyStatus, targetProblem, type TargetOutcome } from '../../model/status.js';
import type { Logger } from '../../runtime/logger.js';
import type { Metrics } from '../../runtime/metrics.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import type { LayerMitigator } from '../../mitigation/context.js';
import type { ClbObserver } from '../clb-observer.js';
import { loadBalancerIdOf, namespaceView, policyIdentity } from './targets.js';

/** What the policy controller reads: informer caches, never the API server directly. */
export interface PolicyCaches {
  policy(namespace: string, name: string): LoopbackPolicy | undefined;
  policies(namespace: string): readonly LoopbackPolicy[];
  services(namespace: string): readonly V1Service[];
  ingresses(namespace: string): readonly V1Ingress[];
}

/**
 * Enforce-mode effects (L4: CLB health-check source + prevent-loopback; L7: TkeServiceConfig): the composed
 * layers of src/mitigation, with the same contract as one layer.
 */
export type Mitigator = LayerMitigator;

export interface PolicyControllerOptions {
  kc: KubeConfig;
  caches: PolicyCaches;
  observer: ClbObserver;
  statusWriter: PolicyStatusWriter;
  events: EventRecorder;
  metrics: Metrics;
  logger: Logger;
  profile: () => ClusterProfile;
  capabilities: AccountCapabilities;
  driftCheckIntervalMs: number;
  mitigator?: Mitigator;
}

/**
 * Root causes that mean "TKE is still building this CLB": nothing changes on the Service when TKE finishes
 * (listeners appear only in the CLB API), so such CLBs are re-read soon instead of at the drift interval.
 */
const CLB_IN_PROGRESS = new Set(['ClbCreating', 'ListenersNotReady', 'ClbNotFound', 'ClbNotObserved']);
const IN_PROGRESS_RECHECK_MS = 3_000;
/** Targets per observe/apply step: one DescribeLoadBalancers batch. */
const CHUNK = 20;
const CHUNKS_IN_FLIGHT = 3;

function jitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}

/** Status equality for "is a write needed": the evaluation time alone changing is not news. */
function sameStatus(a: LoopbackPolicyStatus | undefined, b: LoopbackPolicyStatus): boolean {
  if (!a) return false;
  const strip = (s: LoopbackPolicyStatus) => JSON.stringify({ ...s, lastEvaluatedTime: undefined });
  return strip(a) === strip(b);
}

export class PolicyController {
  private readonly custom: CustomObjectsApi;
  /** Last verdict per target and policy, so Events fire on changes, not on every reconcile. */
  private readonly lastVerdicts = new Map<string, string>();

  constructor(private readonly o: PolicyControllerOptions) {
    this.custom = o.kc.makeApiClient(CustomObjectsApi);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    const [namespace = '', name = ''] = key.split('/');
    const policy = this.o.caches.policy(namespace, name);
    if (!policy) {
      this.forgetPolicy(namespace, name);
      return;
    }
    if (policy.metadata.deletionTimestamp) {
      await this.finalize(policy, signal);
      return;
    }
    const spec = withSpecDefaults(policy.spec);
    await this.ensureFinalizer(policy, spec.mode === 'Enforce' && spec.revertOnDelete);
    const generation = policy.metadata.generation ?? 0;
    let previous = policy.status;
    if (previous?.observedGeneration !== generation) {
      // Ready=Unknown + Reconciling first, so kstatus/Flux never see the old status as current.
      previous = { ...initialPolicyStatus(generation, previous?.conditions, new Date()) };
      await this.o.statusWriter.apply(namespace, name, previous);
    }

    const profile = this.o.profile();
    const view = namespaceView(namespace, this.o.caches.services(namespace), this.o.caches.ingresses(namespace), this.o.caches.policies(namespace));
    const me = policyIdentity(policy);
    const mine: TargetFacts[] = [];
    const conflicts: Assessment[] = [];
    for (const target of view.candidates) {
      const owner = view.ownership.get(targetKey(target));
      if (!owner) continue;
      if (owner.winner.namespace === me.namespace && owner.winner.name === me.name) mine.push(target);
      else if (owner.losers.some((l) => l.name === me.name)) conflicts.push(conflictAssessment(target, owner.winner));
    }

    const enforcing = spec.mode === 'Enforce' && this.o.mitigator !== undefined;
    const run = await this.evaluate(policy, spec, profile, mine, enforcing, signal);
    const { assessments, policyError, transient } = run;
    const byKey = new Map(run.acted.map((o) => [targetKey(o.assessment.target), o]));
    const outcomes: TargetOutcome[] = [...assessments, ...conflicts].map((assessment) => byKey.get(targetKey(assessment.target)) ?? { assessment });

    const status = buildPolicyStatus({
      generation,
      mode: spec.mode,
      profile,
      // A transient failure marks the targets without an error of their own; a permanent one (Stalled) stays.
      outcomes: transient
        ? outcomes.map((o) => (o.error ? o : { ...o, error: { reason: 'RetryingAfterError', message: transient.message, permanent: false } }))
        : outcomes,
      previousConditions: previous?.conditions,
      ...(policyError ? { policyError } : {}),
      now: new Date(),
    });
    if (!sameStatus(previous, status)) await this.o.statusWriter.apply(namespace, name, status);
    await this.report(policy, outcomes, enforcing);
    if (transient) throw transient;
    const building = assessments.filter((a) => a.loadBalancerId && CLB_IN_PROGRESS.has(a.rootCause.id));
    for (const a of building) this.o.observer.invalidate(a.loadBalancerId!);
    const next = building.length > 0 ? Math.min(IN_PROGRESS_RECHECK_MS, this.o.driftCheckIntervalMs) : this.o.driftCheckIntervalMs;
    return { requeueAfterMs: jitter(next) };
  }

  /**
   * Observe → assess → (Enforce) apply, in chunks of CHUNK targets with CHUNKS_IN_FLIGHT chunks at a time.
   * Reading one chunk's CLBs overlaps with writing another's (reads and writes have separate per-action
   * quotas), so a policy over hundreds of Services starts writing after the first chunk is read, not after
   * all of them. Orphans (targets this policy changed but no longer manages) are released once, at the end.
   */
  private async evaluate(
    policy: LoopbackPolicy,
    spec: ResolvedPolicySpec,
    profile: ClusterProfile,
    targets: readonly TargetFacts[],
    enforcing: boolean,
    signal: AbortSignal,
  ): Promise<{ assessments: Assessment[]; acted: TargetOutcome[]; policyError?: { reason: string; message: string }; transient?: Error }> {
    const key = `${policy.metadata.namespace}/${policy.metadata.name}`;
    const managed = new Set(targets.map(targetKey));
    const assessments: Assessment[] = [];
    const acted: TargetOutcome[] = [];
    let policyError: { reason: string; message: string } | undefined;
    let transient: Error | undefined;
    const chunks: TargetFacts[][] = [];
    for (let i = 0; i < targets.length; i += CHUNK) chunks.push(targets.slice(i, i + CHUNK));
    const one = async (chunk: readonly TargetFacts[]) => {
      let observations = new Map<string, ClbObservation>();
      let observed = true;
      try {
        const ids = chunk.map(loadBalancerIdOf).filter((id): id is string => !!id);
        observations = await this.o.observer.observe(ids, this.o.driftCheckIntervalMs, signal);
      } catch (err) {
        observed = false;
        const info = describeCloudError(err);
        if (info.retryable) transient ??= err instanceof Error ? err : new Error(String(err));
        else policyError ??= { reason: info.reason, message: info.message };
        this.o.logger.warn('Reading CLBs failed', { policy: key, code: info.code, reason: info.reason, retryable: info.retryable });
      }
      const assessed = chunk.map((target) => {
        const id = loadBalancerIdOf(target);
        const clb: ClbObservation = id ? (observations.get(id) ?? { state: 'NotObserved' }) : { state: 'NotObserved' };
        return assessTarget(target, { policy: spec, profile, clb, capabilities: this.o.capabilities });
      });
      assessments.push(...assessed);
      if (!enforcing || !observed || policyError) return;
      try {
        acted.push(...(await this.o.mitigator!.apply(policy, spec, assessed, signal, { managed, releaseOrphans: false })));
      } catch (err) {
        if (signal.aborted) throw err;
        transient ??= err instanceof Error ? err : new Error(String(err));
      }
    };
    // A sliding window: a slow chunk (CLB busy, retries) does not hold the others back.
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) await one(chunks[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, worker));
    if (enforcing && !policyError) {
      try {
        acted.push(...(await this.o.mitigator!.apply(policy, spec, [], signal, { managed, releaseOrphans: true })));
      } catch (err) {
        if (signal.aborted) throw err;
        transient ??= err instanceof Error ? err : new Error(String(err));
      }
    }
    return { assessments, acted, ...(policyError ? { policyError } : {}), ...(transient ? { transient } : {}) };
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
      const involved = {
        apiVersion: t.kind === 'Service' ? 'v1' : 'networking.k8s.io/v1',
        kind: t.kind,
        namespace: t.namespace,
        name: t.name,
      };
      for (const w of a.warnings) await this.o.events.record(involved, 'Warning', EventReason.InvalidAnnotation, w);
      const memo = `${namespace}/${policyName}/${targetKey(t)}`;
      const seen = `${a.verdict}/${a.rootCause.id}`;
      if (this.lastVerdicts.get(memo) === seen) continue;
      this.lastVerdicts.set(memo, seen);
      const by = `(LoopbackPolicy ${namespace}/${policyName})`;
      if (a.verdict === 'AtRisk') {
        await this.o.events.record(involved, 'Warning', EventReason.TargetAtRisk, `${a.rootCause.id}: ${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Conflict') {
        await this.o.events.record(involved, 'Warning', EventReason.PolicyConflict, `${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Mitigated') {
        await this.o.events.record(involved, 'Normal', EventReason.TargetMitigated, `${a.rootCause.message} ${by}`);
      }
    }
  }

  private forgetPolicy(namespace: string, name: string): void {
    this.o.metrics.forgetTargets(namespace, name);
    for (const k of [...this.lastVerdicts.keys()]) if (k.startsWith(`${namespace}/${name}/`)) this.lastVerdicts.delete(k);
  }

  private async finalize(policy: LoopbackPolicy, signal: AbortSignal): Promise<void> {
    if (!policy.metadata.finalizers?.includes(FINALIZER)) return;
    const spec = withSpecDefaults(policy.spec);
    if (spec.revertOnDelete && this.o.mitigator) await this.o.mitigator.revert(policy, signal);
    await this.setFinalizers(policy, (policy.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
    this.forgetPolicy(policy.metadata.namespace ?? '', policy.metadata.name ?? '');
  }

  private async ensureFinalizer(policy: LoopbackPolicy, wanted: boolean): Promise<void> {
    const finalizers = policy.metadata.finalizers ?? [];
    const has = finalizers.includes(FINALIZER);
    if (wanted && !has) await this.setFinalizers(policy, [...finalizers, FINALIZER]);
  }

  /** Merge patch guarded by resourceVersion: another writer's finalizer is never dropped (409 → retry). */
  private async setFinalizers(policy: LoopbackPolicy, finalizers: string[]): Promise<void> {
    await this.custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace: policy.metadata.namespace ?? '',
        name: policy.metadata.name ?? '',
        body: { metadata: { finalizers, resourceVersion: policy.metadata.resourceVersion } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}
