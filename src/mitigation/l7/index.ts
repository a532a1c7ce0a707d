// L7 mitigation (Ingresses): keepalive (and with it SNAT) per l7Listener and the rule health-check source,
// declared in the Ingress's TkeServiceConfig so TKE's ingress controller applies them and its resync keeps
// them (tke-clb.md §1). Steps per target, each idempotent so a restart at any point converges:
//   1. find the governing TkeServiceConfig, or add `tke-service-config-auto: "true"` and wait for TKE's
//      `<ingress>-auto-ingress-config` (recording that loopguard added the annotation);
//   2. record originals (CLB values) on the Ingress, then set only loopguard's fields in the config with
//      resourceVersion-guarded JSON patches (config-patch.ts);
//   3. verify in the CLB; when TKE does not apply them within a grace period, report a permanent error:
//      TKE's Warning Event quoted, and a missing keepalive capability learned for the account;
//   4. optionally turn on LoadBalancerPassToTarget (policy opt-in), original recorded;
//   5. revert (policy deleted, target deselected or skipped): restore config fields, wait for TKE to apply
//      them, take out of the config the declarations loopguard added (fields a hand-made config did not
//      declare, fragments it lacked: TKE leaves undeclared attributes alone, so this comes only once the CLB
//      shows the originals), restore PassToTarget, drop an auto annotation loopguard added, then the record.
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Ingress,
} from '@kubernetes/client-node';
import {
  IngressAnnotation,
  LoopguardAnnotation,
  readOriginals,
  readSkip,
  serializeOriginals,
  TKE_SERVICE_CONFIG,
} from '../../api/annotations.js';
import type { LoopbackPolicy, ResolvedPolicySpec } from '../../api/loopbackpolicy.js';
import { EventReason, StalledReason } from '../../api/reasons.js';
import { describeCloudError } from '../../cloud/index.js';
import type { Assessment } from '../../model/assessment.js';
import { KEEPALIVE_TICKET } from '../../model/assess-ingress.js';
import type { L7DesiredState } from '../../model/desired-state.js';
import { targetKey, type ClbFacts } from '../../model/facts.js';
import type { TargetError, TargetOutcome } from '../../model/status.js';
import { isPermanent, type ApplyScope, type LayerMitigator, type MitigationContext } from '../context.js';
import { buildConfigPatch, buildRemovalPatch, guardedPatch, type FieldEdit, type JsonPatchOp, type Removal } from './config-patch.js';
import {
  autoAnnotationAddedByLoopguard,
  clbRestored,
  mergeOriginals,
  revertPlan,
  sameOriginals,
  type ClbListenerView,
  type OriginalsAdditions,
} from './originals.js';
import { desiredEdits, originalsFor } from './plan.js';
import { isKeepaliveCapabilityError, latestTkeWarning, type EventView } from './tke-events.js';

export { buildConfigPatch, buildRemovalPatch, guardedPatch, pendingEdits, applyJsonPatch, addedLevel } from './config-patch.js';
export type { FieldEdit, JsonPatchOp, Removal } from './config-patch.js';
export { mergeOriginals, revertPlan, clbRestored } from './originals.js';
export { desiredEdits, originalsFor } from './plan.js';

export interface L7MitigatorOptions {
  /**
   * Verifications (reconciles with a fresh CLB read) after which a declared change that TKE has not applied
   * is a permanent error. A TKE Warning Event about the change ends the grace period at once.
   */
  graceChecks?: number;
  /** And at least this long since the config was written (TKE applies edits within seconds). */
  graceMs?: number;
}

const DEFAULT_GRACE_CHECKS = 2;
const DEFAULT_GRACE_MS = 5_000;
/** Event timestamps have second precision. */
const EVENT_SLACK_MS = 2_000;
const KEEPALIVE_CAPABILITY = 'CLB layer-7 SNAT + keepalive, by ticket';

/** Reason for a TKE-reported failure that is not the keepalive capability (Stalled reason, API). */
export const TKE_SYNC_FAILED = 'TkeSyncFailed';

interface Verification {
  /** When loopguard last wrote the config (or first saw it pending after a restart). */
  since: number;
  /** Reconciles that saw the CLB still not matching after a fresh read. */
  misses: number;
  error?: TargetError;
}

type Ingress = V1Ingress & { metadata: NonNullable<V1Ingress['metadata']> };

function policyRef(policy: LoopbackPolicy): string {
  return `${policy.metadata.namespace ?? ''}/${policy.metadata.name ?? ''}`;
}

function statusCode(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
    const m = /"message":\s*"([^"]*)"/.exec(body ?? '');
    return `HTTP ${err.code}: ${m?.[1] ?? body ?? err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Kubernetes and CLB failures as a target outcome error. */
function targetError(err: unknown, what: string): TargetError {
  if (err instanceof ApiException) {
    const permanent = err.code === 403 || err.code === 404 || err.code === 400;
    return { reason: permanent ? (err.code === 403 ? StalledReason.PermissionDenied : StalledReason.InvalidRequest) : 'RetryingAfterError', message: `${what}: ${errorText(err)}`, permanent };
  }
  const info = describeCloudError(err);
  // As in L4: a vanished CLB/listener/rule or a task timeout is re-observed next run, not Stalled.
  return { reason: info.retryable ? 'RetryingAfterError' : info.reason, message: `${what}: ${info.message}`, permanent: isPermanent(info) };
}

/** The CLB's listeners in the shape the pure planners take. */
function listenerViews(clb: ClbFacts | undefined): ClbListenerView[] {
  return (clb?.listeners ?? [])
    .filter((l) => l.protocol === 'HTTP' || l.protocol === 'HTTPS')
    .map((l) => ({
      listenerId: l.listenerId,
      protocol: l.protocol,
      port: l.port,
      ...(l.keepaliveEnable !== undefined ? { keepaliveEnable: l.keepaliveEnable } : {}),
      rules: (l.rules ?? []).map((r) => ({ locationId: r.locationId, domain: r.domain, url: r.url, ...(r.healthCheck ? { healthCheck: r.healthCheck } : {}) })),
    }));
}

class L7Mitigator implements LayerMitigator {
  private readonly core: CoreV1Api;
  private readonly net: NetworkingV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly verifications = new Map<string, Verification>();
  private readonly graceChecks: number;
  private readonly graceMs: number;

  constructor(
    private readonly ctx: MitigationContext,
    options: L7MitigatorOptions,
  ) {
    this.core = ctx.kc.makeApiClient(CoreV1Api);
    this.net = ctx.kc.makeApiClient(NetworkingV1Api);
    this.custom = ctx.kc.makeApiClient(CustomObjectsApi);
    this.graceChecks = options.graceChecks ?? DEFAULT_GRACE_CHECKS;
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  }

  async apply(
    policy: LoopbackPolicy,
    spec: ResolvedPolicySpec,
    assessments: readonly Assessment[],
    signal: AbortSignal,
    scope?: ApplyScope,
  ): Promise<TargetOutcome[]> {
    const namespace = policy.metadata.namespace ?? '';
    const me = policyRef(policy);
    const outcomes: TargetOutcome[] = [];
    const managed = new Set<string>();
    for (const key of scope?.managed ?? []) if (key.startsWith(`Ingress/${namespace}/`)) managed.add(key.slice(`Ingress/${namespace}/`.length));
    for (const a of assessments) {
      if (a.target.kind !== 'Ingress') continue;
      managed.add(a.target.name);
      try {
        const o = await this.applyOne(me, spec, a, signal);
        if (o) outcomes.push(o);
      } catch (err) {
        if (signal.aborted) throw err;
        this.ctx.logger.warn('L7 mitigation failed', { ingress: `${a.target.namespace}/${a.target.name}`, error: errorText(err) });
        outcomes.push({ assessment: a, error: targetError(err, `Ingress ${a.target.name}`) });
      }
    }
    // Targets this policy changed that it no longer manages (deselected, class changed, conflict lost).
    for (const ing of (scope?.releaseOrphans ?? true) ? this.ctx.caches.ingresses(namespace) : []) {
      const name = ing.metadata?.name ?? '';
      if (managed.has(name) || ing.metadata?.annotations?.[LoopguardAnnotation.Policy] !== me) continue;
      try {
        await this.revertIngress(ing as Ingress, signal);
      } catch (err) {
        if (signal.aborted) throw err;
        this.ctx.logger.warn('Reverting a deselected Ingress failed', { ingress: `${namespace}/${name}`, error: errorText(err) });
      }
    }
    return outcomes;
  }

  async revert(policy: LoopbackPolicy, signal: AbortSignal): Promise<void> {
    const namespace = policy.metadata.namespace ?? '';
    const me = policyRef(policy);
    const pending: string[] = [];
    for (const ing of this.ctx.caches.ingresses(namespace)) {
      if (ing.metadata?.annotations?.[LoopguardAnnotation.Policy] !== me) continue;
      const done = await this.revertIngress(ing as Ingress, signal);
      if (!done) pending.push(ing.metadata?.name ?? '');
    }
    // The finalizer stays until TKE has applied the originals: the queue retries with backoff.
    if (pending.length > 0) throw new Error(`waiting for TKE to restore the originals of Ingress(es) ${pending.join(', ')}`);
  }

  // ---- apply ------------------------------------------------------------------------------------------

  private async applyOne(me: string, _spec: ResolvedPolicySpec, a: Assessment, signal: AbortSignal): Promise<TargetOutcome | undefined> {
    const key = targetKey(a.target);
    const ing = this.ctx.caches.ingresses(a.target.namespace).find((i) => i.metadata?.name === a.target.name) as Ingress | undefined;
    if (!ing) return undefined;
    const owner = ing.metadata.annotations?.[LoopguardAnnotation.Policy];
    if (a.verdict === 'Skipped') {
      this.verifications.delete(key);
      if (owner !== undefined) await this.revertIngress(ing, signal);
      return undefined;
    }
    const desired = a.desired?.layer === 'L7' ? a.desired : undefined;
    // Public/IPv6 CLBs, no CLB or listeners yet, not a CLB Ingress, contradictory annotations: the model's verdict stands.
    if (!desired || a.blockers.some((b) => b.reason === StalledReason.TargetMisconfigured)) return undefined;
    // A record of another policy (deleted without revert): this policy won the target (losers get Conflict and
    // never reach here), so it takes the record over (annotateIngress rewrites the owner); its originals stay.

    const originals = readOriginals(ing.metadata.annotations);
    const record = originals.kind === 'value' ? originals.value : undefined;
    const caps = this.ctx.capabilities;
    const edits = desiredEdits(desired, record, { keepalive: caps.keepaliveRejected !== undefined, range100_64: caps.range100_64Rejected !== undefined });
    const passWanted = desired.passToTarget.desired === true && desired.passToTarget.current === false;
    if (edits.length === 0 && !passWanted) return undefined;

    // 1. "Allow by default" (policy opt-in) first, as the model orders it: keepalive makes the CLB reach nodes
    // from 100.127/16, which the security group must already let in. Original recorded first.
    let written = false;
    if (passWanted) {
      await this.annotateIngress(ing, me, { passToTarget: false }, {});
      try {
        await this.ctx.clb.modifyLoadBalancerPassToTarget(desired.loadBalancerId, true, { signal });
      } finally {
        this.ctx.observer.invalidate(desired.loadBalancerId);
      }
      await this.ctx.events.record(involved(a), 'Normal', EventReason.ClbTrafficAllowedByDefault, `LoadBalancerPassToTarget turned on for CLB ${desired.loadBalancerId} (l7.allowCLBTrafficByDefault)`);
      written = true;
    }

    // 2. The governing config; create the auto one through TKE when there is none.
    const ref = desired.tkeServiceConfig;
    if (ref.source === 'ToBeCreated') {
      if (edits.length > 0) {
        await this.annotateIngress(ing, me, { annotations: { [IngressAnnotation.TkeServiceConfigAuto]: ing.metadata.annotations?.[IngressAnnotation.TkeServiceConfigAuto] ?? null } }, {
          [IngressAnnotation.TkeServiceConfigAuto]: 'true',
        });
        this.ctx.logger.info('Asked TKE for an auto TkeServiceConfig', { ingress: key, config: ref.name });
      }
      return { assessment: a };
    }
    if (edits.length > 0) {
      const config = this.ctx.caches.tkeServiceConfigs(a.target.namespace).find((c) => c.metadata?.name === ref.name);
      if (!config) {
        if (ref.source === 'Auto') return { assessment: a }; // TKE has not created it yet; its informer event brings us back
        return {
          assessment: a,
          error: {
            reason: StalledReason.TargetMisconfigured,
            message: `TkeServiceConfig ${ref.name} named by ${IngressAnnotation.TkeServiceConfig} does not exist: create it or remove the annotation`,
            permanent: true,
          },
        };
      }
      const vip = await this.vipOf(desired.loadBalancerId, signal);
      if (buildConfigPatch((config as { spec?: unknown }).spec, edits, vip).length > 0) {
        // 3. Originals first, then the config.
        const hadRecord = record !== undefined && (Object.keys(record.listeners ?? {}).length > 0 || Object.keys(record.rules ?? {}).length > 0);
        await this.annotateIngress(ing, me, originalsFor(desired, edits, { spec: (config as { spec?: unknown }).spec, vip }), {});
        written = await this.patchConfig(a.target.namespace, ref.name, edits, vip, signal);
        if (written && hadRecord) {
          // loopguard had declared these before: someone edited the config back.
          this.ctx.metrics.driftCorrections.inc({ kind: 'Ingress' });
          await this.ctx.events.record(involved(a), 'Warning', EventReason.DriftCorrected, `TkeServiceConfig ${ref.name} no longer declared loopguard's fields; declared them again`);
        }
        if (written) {
          this.verifications.set(key, { since: Date.now(), misses: 0 });
          this.ctx.observer.invalidate(desired.loadBalancerId);
          const keepalive = edits.filter((e) => e.kind === 'keepalive' && e.value === 1).map((e) => `${e.protocol}:${e.port}`);
          if (keepalive.length > 0) {
            await this.ctx.events.record(involved(a), 'Normal', EventReason.KeepaliveEnabled, `keepaliveEnable: 1 declared for listener(s) ${keepalive.join(', ')} in TkeServiceConfig ${ref.name}; TKE applies it to CLB ${desired.loadBalancerId}`);
          }
        }
      }
    }

    if (written) return { assessment: a };

    // 4. Nothing left to declare: verify that TKE applied it.
    return this.verify(a, desired, ing, signal);
  }

  private async verify(a: Assessment, desired: L7DesiredState, ing: Ingress, signal: AbortSignal): Promise<TargetOutcome | undefined> {
    const key = targetKey(a.target);
    const pending = a.changes.filter((c) => c.action === 'SetListenerKeepalive' || c.action === 'SetRuleHealthCheckSource');
    const keepaliveOn = desired.listeners.length > 0 && desired.listeners.every((l) => l.currentKeepalive === 1);
    if (keepaliveOn && this.ctx.capabilities.keepaliveRejected !== undefined && desired.listeners.some((l) => l.desiredKeepalive === 1)) {
      // TKE applied keepalive after all: the ticket was granted.
      this.ctx.logger.info('Keepalive took effect; forgetting the missing-capability verdict', { ingress: key });
      delete this.ctx.capabilities.keepaliveRejected;
    }
    if (pending.length === 0) {
      this.verifications.delete(key);
      return undefined;
    }
    const now = Date.now();
    const v = this.verifications.get(key) ?? { since: now, misses: 0 };
    this.verifications.set(key, v);
    if (v.error) return { assessment: a, error: v.error };
    v.misses++;
    // Read the CLB again at the next reconcile (the drift interval): each miss is a fresh observation.
    this.ctx.observer.invalidate(desired.loadBalancerId);

    const warning = latestTkeWarning(await this.tkeEvents(ing, signal), v.since - EVENT_SLACK_MS);
    const graceOver = v.misses > this.graceChecks && now - v.since >= this.graceMs;
    if (!warning && !graceOver) return { assessment: a };

    const wantsKeepalive = pending.some((c) => c.action === 'SetListenerKeepalive');
    let error: TargetError;
    if (warning && isKeepaliveCapabilityError(warning.message)) {
      this.ctx.capabilities.keepaliveRejected = warning.message ?? 'keepalive rejected';
      error = {
        reason: StalledReason.KeepaliveCapabilityMissing,
        message: `TKE could not enable keepalive on CLB ${desired.loadBalancerId}: the account lacks the ${KEEPALIVE_CAPABILITY} capability (TKE: "${warning.message ?? ''}"); ${KEEPALIVE_TICKET}`,
        permanent: true,
      };
    } else if (warning) {
      error = {
        reason: TKE_SYNC_FAILED,
        message: `TKE did not apply TkeServiceConfig ${desired.tkeServiceConfig.name} to CLB ${desired.loadBalancerId}; its latest Warning Event (${warning.reason ?? 'unknown'}): "${warning.message ?? ''}"`,
        permanent: true,
      };
    } else if (wantsKeepalive) {
      error = {
        reason: StalledReason.KeepaliveCapabilityMissing,
        message: `keepaliveEnable: 1 is declared in TkeServiceConfig ${desired.tkeServiceConfig.name} but CLB ${desired.loadBalancerId} still has keepalive off after ${v.misses} checks and no TKE Warning Event explains it; most likely the account lacks the ${KEEPALIVE_CAPABILITY} capability: ${KEEPALIVE_TICKET}`,
        permanent: true,
      };
    } else {
      error = {
        reason: TKE_SYNC_FAILED,
        message: `the rule health-check source declared in TkeServiceConfig ${desired.tkeServiceConfig.name} has not reached CLB ${desired.loadBalancerId} after ${v.misses} checks; check TKE's ingress controller (kubectl describe ingress ${a.target.name})`,
        permanent: true,
      };
    }
    v.error = error;
    this.ctx.logger.warn('L7 mitigation did not take', { ingress: key, reason: error.reason, message: error.message });
    await this.ctx.events.record(involved(a), 'Warning', wantsKeepalive ? EventReason.CapabilityMissing : EventReason.TargetUpdateFailed, error.message);
    return { assessment: a, error };
  }

  private async tkeEvents(ing: Ingress, signal: AbortSignal): Promise<EventView[]> {
    if (signal.aborted) return [];
    try {
      const list = await this.core.listNamespacedEvent({
        namespace: ing.metadata.namespace ?? '',
        fieldSelector: `involvedObject.kind=Ingress,involvedObject.name=${ing.metadata.name ?? ''}`,
      });
      return list.items as EventView[];
    } catch (err) {
      this.ctx.logger.warn('Reading TKE events failed', { ingress: ing.metadata.name, error: errorText(err) });
      return [];
    }
  }

  /** The CLB's VIP (config domain "" stands for it), from the observer's cache: no CLB call when it is there. */
  private async vipOf(loadBalancerId: string, signal: AbortSignal): Promise<string | undefined> {
    return (await this.observe(loadBalancerId, Number.MAX_SAFE_INTEGER, signal))?.vips?.[0];
  }

  private async observe(loadBalancerId: string, maxAgeMs: number, signal: AbortSignal): Promise<ClbFacts | undefined> {
    const obs = (await this.ctx.observer.observe([loadBalancerId], maxAgeMs, signal)).get(loadBalancerId);
    return obs?.state === 'Found' ? obs.clb : undefined;
  }

  // ---- writes -------------------------------------------------------------------------------------------

  /**
   * Merges `add` into the originals record and sets `set` annotations, in one merge patch guarded by the
   * Ingress's resourceVersion (read fresh). No write when nothing changes.
   */
  private async annotateIngress(cached: Ingress, me: string, add: OriginalsAdditions, set: Record<string, string | null>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const ing = attempt === 0 ? cached : ((await this.net.readNamespacedIngress({ namespace: cached.metadata.namespace ?? '', name: cached.metadata.name ?? '' })) as Ingress);
      const annotations = ing.metadata.annotations ?? {};
      const existing = readOriginals(annotations);
      const current = existing.kind === 'value' ? existing.value : undefined;
      const merged = mergeOriginals(current, add);
      const patch: Record<string, string | null> = {};
      if (!sameOriginals(current, merged) || existing.kind !== 'value') patch[LoopguardAnnotation.Originals] = serializeOriginals(merged);
      if (annotations[LoopguardAnnotation.Policy] !== me) patch[LoopguardAnnotation.Policy] = me;
      for (const [k, v] of Object.entries(set)) if ((annotations[k] ?? null) !== v) patch[k] = v;
      if (Object.keys(patch).length === 0) return;
      try {
        await this.patchIngressAnnotations(ing, patch);
        return;
      } catch (err) {
        if (statusCode(err) !== 409 || attempt >= 2) throw err;
      }
    }
  }

  private async patchIngressAnnotations(ing: Ingress, annotations: Record<string, string | null>): Promise<void> {
    await this.net.patchNamespacedIngress(
      {
        namespace: ing.metadata.namespace ?? '',
        name: ing.metadata.name ?? '',
        body: { metadata: { resourceVersion: ing.metadata.resourceVersion, annotations } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** Reads the config fresh and patches the fields that differ; a lost race (TKE's resync) is retried. Returns whether it wrote. */
  private async patchConfig(namespace: string, name: string, edits: readonly FieldEdit[], vip: string | undefined, signal: AbortSignal): Promise<boolean> {
    return this.patchConfigWith(namespace, name, (spec) => buildConfigPatch(spec, edits, vip), signal);
  }

  /** Takes the declarations loopguard added out of the config (revert, after the CLB shows the originals). */
  private async removeAdded(namespace: string, name: string, removals: readonly Removal[], vip: string | undefined, signal: AbortSignal): Promise<boolean> {
    return this.patchConfigWith(namespace, name, (spec) => buildRemovalPatch(spec, removals, vip), signal);
  }

  private async patchConfigWith(namespace: string, name: string, plan: (spec: unknown) => JsonPatchOp[], signal: AbortSignal): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) return false;
      const config = (await this.custom.getNamespacedCustomObject({ ...TKE_SERVICE_CONFIG, namespace, name })) as KubernetesObject & { spec?: unknown };
      const ops: JsonPatchOp[] = plan(config.spec);
      if (ops.length === 0) return false;
      try {
        await this.custom.patchNamespacedCustomObject(
          { ...TKE_SERVICE_CONFIG, namespace, name, body: guardedPatch(config.metadata?.resourceVersion ?? '', ops) },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
        this.ctx.logger.info('Patched TkeServiceConfig', { config: `${namespace}/${name}`, ops: ops.filter((o) => o.op !== 'test').length });
        return true;
      } catch (err) {
        // A failed `test` (someone wrote in between) is 422 or 409; read again and re-plan.
        const code = statusCode(err);
        if ((code !== 409 && code !== 422) || attempt >= 2) throw err;
      }
    }
  }

  // ---- revert -------------------------------------------------------------------------------------------

  /**
   * Restores one Ingress's recorded originals. Returns true when done (record removed), false when TKE has
   * not applied the restored config yet (call again later).
   */
  private async revertIngress(ing: Ingress, signal: AbortSignal): Promise<boolean> {
    const namespace = ing.metadata.namespace ?? '';
    const key = `Ingress/${namespace}/${ing.metadata.name ?? ''}`;
    this.verifications.delete(key);
    const annotations = ing.metadata.annotations ?? {};
    const originals = readOriginals(annotations);
    const record = originals.kind === 'value' ? originals.value : undefined;
    const lbId = annotations[IngressAnnotation.LoadBalancerId]?.trim();
    if (record && lbId) {
      // Fresh CLB read: reverting is rare, and it must see what TKE has applied.
      this.ctx.observer.invalidate(lbId);
      const clb = await this.observe(lbId, 0, signal);
      const views = listenerViews(clb);
      const plan = revertPlan(record, views);
      const configName = this.configNameOf(ing);
      const configExists = configName !== undefined && this.ctx.caches.tkeServiceConfigs(namespace).some((c) => c.metadata?.name === configName);
      if (plan.edits.length > 0 && configName) {
        if (configExists) {
          try {
            const wrote = await this.patchConfig(namespace, configName, plan.edits, clb?.vips?.[0], signal);
            if (wrote) this.ctx.observer.invalidate(lbId);
          } catch (err) {
            if (statusCode(err) !== 404) throw err;
          }
        }
      }
      if (plan.passToTarget !== undefined && clb && clb.passToTarget !== plan.passToTarget) {
        await this.ctx.clb.modifyLoadBalancerPassToTarget(lbId, plan.passToTarget, { signal });
        this.ctx.observer.invalidate(lbId);
      }
      // With TKE not syncing the Ingress (mode: skip) the config cannot reach the CLB: do not wait for it.
      const tkeSkips = readSkip(annotations, 'Ingress').skipped === 'tke';
      if (clb && !tkeSkips && !clbRestored(record, views)) return false;
      // The CLB shows the originals: declarations loopguard added go (TKE leaves undeclared attributes as they are).
      if (plan.removals.length > 0 && configName && configExists) {
        try {
          await this.removeAdded(namespace, configName, plan.removals, clb?.vips?.[0], signal);
        } catch (err) {
          if (statusCode(err) !== 404) throw err;
        }
      }
      // Keep the record (and so the plan) while the removal may not have been written.
      if (signal.aborted) return false;
    }
    // Done with the CLB: drop the auto annotation if loopguard added it, and loopguard's own annotations.
    const patch: Record<string, string | null> = {};
    if (record && autoAnnotationAddedByLoopguard(record)) {
      patch[IngressAnnotation.TkeServiceConfigAuto] = record.annotations?.[IngressAnnotation.TkeServiceConfigAuto] ?? null;
    }
    if (annotations[LoopguardAnnotation.Originals] !== undefined) patch[LoopguardAnnotation.Originals] = null;
    if (annotations[LoopguardAnnotation.Policy] !== undefined) patch[LoopguardAnnotation.Policy] = null;
    if (Object.keys(patch).length > 0) {
      try {
        await this.patchIngressAnnotations(ing, patch);
      } catch (err) {
        if (statusCode(err) === 404) return true;
        if (statusCode(err) === 409) return false; // stale cache; the informer brings the next version
        throw err;
      }
      await this.ctx.events.record(
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace, name: ing.metadata.name ?? '' },
        'Normal',
        EventReason.OriginalsRestored,
        `loopguard restored the recorded originals${lbId ? ` of CLB ${lbId}` : ''}${patch[IngressAnnotation.TkeServiceConfigAuto] === null ? ' and removed the tke-service-config-auto annotation it had added' : ''}`,
      );
    }
    return true;
  }

  /** The config governing the Ingress now (named, or the auto one when the auto annotation is on). */
  private configNameOf(ing: Ingress): string | undefined {
    const a = ing.metadata.annotations ?? {};
    const named = a[IngressAnnotation.TkeServiceConfig]?.trim();
    if (named) return named;
    if (a[IngressAnnotation.TkeServiceConfigAuto]?.trim().toLowerCase() === 'true') return `${ing.metadata.name ?? ''}-auto-ingress-config`;
    return undefined;
  }
}

function involved(a: Assessment): { apiVersion: string; kind: string; namespace: string; name: string } {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: a.target.namespace, name: a.target.name };
}

export function createL7Mitigator(ctx: MitigationContext, options: L7MitigatorOptions = {}): LayerMitigator {
  return new L7Mitigator(ctx, options);
}
