// L4 mitigation (Enforce, Services): CLB listener health-check source → 100.64.0.0/10 through ModifyListener,
// then `service.cloud.tencent.com/prevent-loopback: "true"`; drift correction; revert from recorded originals.
// Per target, every run: originals recorded on the Service first (merge patch, resourceVersion-guarded), then
// each listener written with its full current HealthCheck and only SourceIpType changed (the client serializes
// writes per CLB and waits for the task), then a fresh read confirms, then the annotation, then the target is
// re-assessed on the fresh facts. Level-triggered: a restart between any two steps resumes from what is observed.
import { ApiException, type V1Service } from '@kubernetes/client-node';
import { LoopguardAnnotation, ServiceAnnotation, serializeOriginals, type SourceIpType } from '../../api/annotations.js';
import type { LoopbackPolicy, ResolvedPolicySpec } from '../../api/loopbackpolicy.js';
import { EventReason } from '../../api/reasons.js';
import { describeCloudError, type ListenerInfo } from '../../cloud/index.js';
import { assessTarget, type Assessment } from '../../model/assessment.js';
import { targetKey, type ClbObservation } from '../../model/facts.js';
import type { TargetError, TargetOutcome } from '../../model/status.js';
import { serviceFacts } from '../../model/target-facts.js';
import { isPermanent, type ApplyScope, type LayerMitigator, type MitigationContext } from '../context.js';
import {
  PREVENT_LOOPBACK,
  convergedBefore,
  healthCheckFor,
  keptBy,
  mergeOriginals,
  originalsOf,
  ownedBy,
  ownerOf,
  planEnforce,
  planRelease,
  type EnforcePlan,
  type ReleaseOptions,
} from './plan.js';
import { ServiceWriter } from './service-writer.js';

export * from './plan.js';

/** Targets worked on at once; the CLB client's budgets and write gate do the real pacing. */
const TARGET_CONCURRENCY = 256;

class TransientError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

function involved(svc: { namespace: string; name: string; uid?: string | undefined }) {
  return { apiVersion: 'v1', kind: 'Service', namespace: svc.namespace, name: svc.name, ...(svc.uid ? { uid: svc.uid } : {}) };
}

/** Runs `fn` over `items` with at most `limit` in flight; every item settles. */
async function settleAll<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      try {
        results[i] = { status: 'fulfilled', value: await fn(items[i] as T) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function sourceOf(l: ListenerInfo | undefined): SourceIpType {
  return l?.healthCheck?.SourceIpType === 1 ? 1 : 0;
}

export class L4Mitigator implements LayerMitigator {
  private readonly writer: ServiceWriter;
  /** `<lbId>/<listenerId>` seen (or written) at SourceIpType 1 while recorded: a later 0 there is drift. */
  private readonly converged = new Set<string>();

  constructor(private readonly ctx: MitigationContext) {
    this.writer = new ServiceWriter(ctx.kc);
  }

  async apply(
    policy: LoopbackPolicy,
    spec: ResolvedPolicySpec,
    assessments: readonly Assessment[],
    signal: AbortSignal,
    scope?: ApplyScope,
  ): Promise<TargetOutcome[]> {
    const namespace = policy.metadata.namespace ?? '';
    const owner = ownerOf(namespace, policy.metadata.name ?? '');
    const services = this.ctx.caches.services(namespace);
    const byName = new Map(services.map((s) => [s.metadata?.name ?? '', s]));
    const managed = scope?.managed ?? new Set(assessments.map((a) => targetKey(a.target)));
    const isManaged = (name: string) => managed.has(targetKey({ kind: 'Service', namespace, name }));
    // Targets this policy changed earlier that it no longer manages (deselected, or taken by another policy).
    const orphans =
      (scope?.releaseOrphans ?? true) ? services.filter((s) => !isManaged(s.metadata?.name ?? '') && ownedBy(s.metadata?.annotations, owner)) : [];

    const work: Array<() => Promise<TargetOutcome | undefined>> = [
      ...assessments.map((a) => () => this.target(owner, spec, a, byName.get(a.target.name), signal)),
      ...orphans.map((s) => async () => {
        await this.release(s, {}, signal);
        return undefined;
      }),
    ];
    const settled = await settleAll(work, TARGET_CONCURRENCY, (w) => w());
    const outcomes: TargetOutcome[] = [];
    const transient: string[] = [];
    for (const r of settled) {
      if (r.status === 'fulfilled') {
        if (r.value) outcomes.push(r.value);
        if (r.value?.error && !r.value.error.permanent) transient.push(r.value.error.message);
      } else {
        if (signal.aborted) throw r.reason;
        transient.push(r.reason instanceof Error ? r.reason.message : String(r.reason));
      }
    }
    if (transient.length > 0) {
      // The work queue retries with per-key backoff; the rest of this run's work is done and stays done.
      this.ctx.logger.warn('L4 mitigation will retry', { policy: owner, failures: transient.length, first: transient[0] });
      throw new Error(`L4 mitigation: ${transient.length} target(s) failed transiently, retrying: ${transient[0] ?? ''}`);
    }
    return outcomes;
  }

  async revert(policy: LoopbackPolicy, signal: AbortSignal): Promise<void> {
    const namespace = policy.metadata.namespace ?? '';
    const owner = ownerOf(namespace, policy.metadata.name ?? '');
    // From the API server: the informer cache may not show originals written moments before the deletion.
    const mine = (await this.writer.list(namespace)).filter((s) => ownedBy(s.metadata?.annotations, owner));
    const settled = await settleAll(mine, TARGET_CONCURRENCY, (s) => this.release(s, {}, signal));
    const failed = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) {
      const first = failed[0]?.reason as unknown;
      throw new Error(`L4 revert: ${failed.length} Service(s) not restored yet: ${first instanceof Error ? first.message : String(first)}`);
    }
  }

  /** One managed target: release what is no longer wanted, carry out the plan, re-assess. */
  private async target(
    owner: string,
    spec: ResolvedPolicySpec,
    a: Assessment,
    cached: V1Service | undefined,
    signal: AbortSignal,
  ): Promise<TargetOutcome | undefined> {
    if (!cached) return undefined;
    const annotations = cached.metadata?.annotations;
    const record = originalsOf(annotations);
    const desired = a.desired?.layer === 'L4' ? a.desired : undefined;
    try {
      if (!desired) {
        // Skipped / not applicable / unsupported: give back what loopguard changed. Pending (CLB not read yet,
        // listeners missing) says nothing about what is wanted: leave everything as it is.
        if (record && a.verdict !== 'Pending' && annotations?.[LoopguardAnnotation.Policy] === owner) {
          await this.release(cached, {}, signal);
        }
        return undefined;
      }
      if (record) {
        for (const l of desired.listeners) {
          if (l.currentSourceIpType === 1 && record.listeners?.[l.listenerId]?.sourceIpType !== undefined) {
            this.converged.add(`${desired.loadBalancerId}/${l.listenerId}`);
          }
        }
      }
      let released = false;
      if (record && annotations?.[LoopguardAnnotation.Policy] === owner && planRelease(record, annotations, keptBy(desired)).length > 0) {
        await this.release(cached, keptBy(desired), signal);
        released = true;
      }
      const plan = planEnforce(a);
      if (!plan && !released) return undefined;
      const svc = plan ? await this.enforce(owner, cached, plan, signal) : await this.writer.get(a.target.namespace, a.target.name);
      if (!svc) return undefined;
      return { assessment: await this.reassess(spec, a, svc, signal) };
    } catch (err) {
      if (signal.aborted) throw err;
      return this.failed(spec, a, cached, err, signal);
    }
  }

  private async enforce(owner: string, cached: V1Service, plan: EnforcePlan, signal: AbortSignal): Promise<V1Service | undefined> {
    const namespace = cached.metadata?.namespace ?? '';
    const name = cached.metadata?.name ?? '';
    const lbId = plan.loadBalancerId;
    const priorRecord = originalsOf(cached.metadata?.annotations);
    // Converged before this run (possibly before a restart): a VIP source found now is drift, not a first switch.
    const wasConverged = convergedBefore(priorRecord, cached.metadata?.annotations);

    // 1. Originals first, so a crash after any later step can still restore them.
    let svc = await this.writer.patchAnnotations(namespace, name, (fresh) => {
      const current = fresh.metadata?.annotations;
      const merged = mergeOriginals(originalsOf(current), plan, current);
      if (!merged && current?.[LoopguardAnnotation.Policy] === owner) return undefined;
      return {
        [LoopguardAnnotation.Originals]: serializeOriginals(merged ?? originalsOf(current) ?? { v: 1 }),
        [LoopguardAnnotation.Policy]: owner,
      };
    });
    if (!svc) return undefined;
    const ref = { namespace, name, uid: svc.metadata?.uid };

    // 2. Health-check sources, each with the listener's full current HealthCheck.
    if (plan.switches.length > 0) {
      let raw = this.ctx.observer.rawListeners(lbId) ?? (await this.ctx.clb.describeListeners(lbId, { signal }));
      for (const s of plan.switches) {
        let listener = raw.find((l) => l.listenerId === s.listenerId);
        if (!listener) {
          raw = await this.ctx.clb.describeListeners(lbId, { signal });
          listener = raw.find((l) => l.listenerId === s.listenerId);
          if (!listener) throw new TransientError('ListenerNotFound', `listener ${s.listenerId} of CLB ${lbId} is gone; re-reading`);
        }
        if (sourceOf(listener) === s.to) continue;
        await this.ctx.clb.modifyListenerHealthCheck(lbId, s.listenerId, healthCheckFor(listener, s.to), { signal });
        const key = `${lbId}/${s.listenerId}`;
        const what = `listener ${s.listenerId} (${s.protocol}:${s.port}) of CLB ${lbId}: health-check source VIP -> 100.64.0.0/10`;
        if ((this.converged.has(key) || wasConverged) && priorRecord?.listeners?.[s.listenerId]?.sourceIpType !== undefined) {
          this.ctx.metrics.driftCorrections.inc({ kind: 'ListenerHealthCheckSource' });
          await this.ctx.events.record(involved(ref), 'Warning', EventReason.DriftCorrected, `${what} (it had been put back to the VIP outside loopguard)`);
        } else {
          await this.ctx.events.record(involved(ref), 'Normal', EventReason.HealthCheckSourceSwitched, what);
        }
        this.converged.add(key);
      }
      this.ctx.observer.invalidate(lbId);
    }

    // 3. Read back (one fresh read that also feeds the re-assessment); the annotation only once every listener
    // it depends on is off the VIP.
    if (plan.switches.length > 0 || plan.addAnnotation) {
      if (plan.switches.length > 0) await this.ctx.observer.refreshListeners(lbId, signal);
      else await this.ctx.observer.observe([lbId], Number.MAX_SAFE_INTEGER, signal);
      const fresh = this.ctx.observer.rawListeners(lbId) ?? [];
      const check = plan.addAnnotation ? plan.requiredOnRange : plan.switches.map((s) => s.listenerId);
      const stillVip = check.filter((id) => sourceOf(fresh.find((l) => l.listenerId === id)) !== 1);
      if (stillVip.length > 0) {
        throw new TransientError(
          'HealthCheckSourceNotConfirmed',
          `CLB ${lbId} still reports the VIP health-check source on ${stillVip.join(', ')} after the switch; retrying${plan.addAnnotation ? ' before prevent-loopback' : ''}`,
        );
      }
    }
    if (plan.addAnnotation) {
      const before = svc.metadata?.annotations?.[PREVENT_LOOPBACK];
      svc = await this.writer.patchAnnotations(namespace, name, (s) =>
        s.metadata?.annotations?.[PREVENT_LOOPBACK] === 'true' ? undefined : { [PREVENT_LOOPBACK]: 'true' },
      );
      if (svc && before !== 'true') {
        await this.ctx.events.record(involved(ref), 'Normal', EventReason.PreventLoopbackAnnotated, `service.cloud.tencent.com/prevent-loopback: "true" set (every listener of CLB ${lbId} health-checks from 100.64.0.0/10)`);
      }
    }
    return svc;
  }

  /**
   * Gives back what the Service's originals record says loopguard changed, except what `keep` still wants:
   * annotation first, then listener sources (full HealthCheck), then the record. Throws on failure.
   */
  private async release(cached: V1Service, keep: ReleaseOptions, signal: AbortSignal): Promise<void> {
    const namespace = cached.metadata?.namespace ?? '';
    const name = cached.metadata?.name ?? '';
    const svc = await this.writer.get(namespace, name);
    if (!svc) return;
    const record = originalsOf(svc.metadata?.annotations);
    if (!record) return;
    const steps = planRelease(record, svc.metadata?.annotations, keep);
    if (steps.length === 0) return;
    const ref = { namespace, name, uid: svc.metadata?.uid };
    const lbId = svc.metadata?.annotations?.[ServiceAnnotation.LoadBalancerId]?.trim();
    const restored: string[] = [];

    const annotationPatch: Record<string, string | null> = {};
    for (const s of steps) if (s.step === 'RestoreAnnotation') annotationPatch[s.key] = s.value;
    if (Object.keys(annotationPatch).length > 0) {
      await this.writer.patchAnnotations(namespace, name, () => annotationPatch);
      restored.push(...Object.entries(annotationPatch).map(([k, v]) => (v === null ? `removed ${k}` : `${k}: ${JSON.stringify(v)}`)));
    }

    const listenerSteps = steps.filter((s) => s.step === 'RestoreListener');
    if (listenerSteps.length > 0 && lbId) {
      let raw: readonly ListenerInfo[] = [];
      try {
        raw = await this.ctx.clb.describeListeners(lbId, { signal });
      } catch (err) {
        if (describeCloudError(err).reason !== 'ClbNotFound') throw err;
      }
      for (const s of listenerSteps) {
        const listener = raw.find((l) => l.listenerId === s.listenerId);
        this.converged.delete(`${lbId}/${s.listenerId}`);
        if (!listener || sourceOf(listener) === s.sourceIpType) continue;
        await this.ctx.clb.modifyListenerHealthCheck(lbId, s.listenerId, healthCheckFor(listener, s.sourceIpType), { signal });
        restored.push(`listener ${s.listenerId} health-check source ${s.sourceIpType === 0 ? 'VIP' : '100.64.0.0/10'}`);
      }
      this.ctx.observer.invalidate(lbId);
    }

    const last = steps.find((s) => s.step === 'WriteRecord');
    if (last?.step === 'WriteRecord') {
      const patch: Record<string, string | null> = last.record
        ? { [LoopguardAnnotation.Originals]: serializeOriginals(last.record) }
        : { [LoopguardAnnotation.Originals]: null, [LoopguardAnnotation.Policy]: null };
      await this.writer.patchAnnotations(namespace, name, () => patch);
    }
    if (restored.length > 0) {
      await this.ctx.events.record(involved(ref), 'Normal', EventReason.OriginalsRestored, `restored: ${restored.join('; ')}`);
    }
  }

  /** The target assessed again on fresh facts (the Service as written, the CLB read now). */
  private async reassess(spec: ResolvedPolicySpec, a: Assessment, svc: V1Service, signal: AbortSignal): Promise<Assessment> {
    const profile = this.ctx.profile?.();
    if (!profile) return a;
    const lbId = svc.metadata?.annotations?.[ServiceAnnotation.LoadBalancerId]?.trim();
    let clb: ClbObservation = { state: 'NotObserved' };
    // Fresh from the read-back above (a write invalidates the CLB, so nothing stale is used).
    // The controller's observation is at most one drift interval old, and a write just refreshed it.
    if (lbId) clb = (await this.ctx.observer.observe([lbId], Number.MAX_SAFE_INTEGER, signal)).get(lbId) ?? clb;
    return assessTarget(serviceFacts(svc), { policy: spec, profile, clb, capabilities: this.ctx.capabilities });
  }

  private async failed(spec: ResolvedPolicySpec, a: Assessment, cached: V1Service, err: unknown, signal: AbortSignal): Promise<TargetOutcome | undefined> {
    const ref = { namespace: a.target.namespace, name: a.target.name, uid: cached.metadata?.uid };
    let error: TargetError;
    if (err instanceof TransientError) error = { reason: err.reason, message: err.message, permanent: false };
    else if (err instanceof ApiException) {
      if (err.code === 404) return undefined;
      const permanent = err.code === 403 || err.code === 422;
      error = {
        reason: err.code === 403 ? 'PermissionDenied' : 'TargetUpdateFailed',
        message: `patching Service ${a.target.namespace}/${a.target.name} failed (HTTP ${err.code})${err.code === 403 ? ': grant the loopguard ServiceAccount patch on services' : ''}`,
        permanent,
      };
      if (permanent) await this.ctx.events.record(involved(ref), 'Warning', EventReason.TargetUpdateFailed, error.message);
    } else {
      const info = describeCloudError(err);
      error = { reason: info.reason, message: info.message, permanent: isPermanent(info) };
      if (error.permanent) {
        if (info.reason === 'HealthCheckSourceCapabilityMissing') {
          this.ctx.capabilities.range100_64Rejected ??= info.message;
          await this.ctx.events.record(involved(ref), 'Warning', EventReason.CapabilityMissing, info.message);
        } else {
          const reason = info.reason === 'PermissionDenied' ? EventReason.PermissionDenied : EventReason.ClbWriteFailed;
          await this.ctx.events.record(involved(ref), 'Warning', reason, info.message);
        }
      }
    }
    if (!error.permanent) return { assessment: a, error };
    // Re-assess so the capability now known (if any) shows as the blocker; keep the error for Stalled.
    let assessment = a;
    try {
      const svc = await this.writer.get(a.target.namespace, a.target.name);
      if (svc) assessment = await this.reassess(spec, a, svc, signal);
    } catch {
      // the original assessment still says what was planned
    }
    return { assessment, error };
  }
}

export function createL4Mitigator(ctx: MitigationContext): LayerMitigator {
  const m = new L4Mitigator(ctx);
  return {
    apply: (policy, spec, assessments, signal, scope) => m.apply(policy, spec, assessments, signal, scope),
    revert: (policy, signal) => m.revert(policy, signal),
  };
}
