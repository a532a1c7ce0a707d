// The Service/Ingress side of a CLB's life, shared by both controllers: the cleanup finalizer, the read-only
// CLB-ID annotation and status IP, cleanup, and turning failures into Warning Events.
//
// Deletion design: a finalizer (not a sweep of emulator state). The apiserver itself holds a finalizing object
// until we remove the finalizer, so this works on the test apiserver, which runs no controllers (no GC, no
// namespace controller). A Service whose type changes away from LoadBalancer is cleaned up the same way.
import { ClbError } from './clb-api.js';
import { REASON_SYNC_FAILED, deleteAutoConfig, warn } from './config-sync.js';
import type { SimulatorContext } from './context.js';
import type { Owner } from './kube-api.js';
import type { ClbHandle } from './load-balancer.js';
import { SyncError, releaseLoadBalancer } from './load-balancer.js';
import type { ConfigOwnerKind } from './tke-service-config.js';

export interface OwnerKind {
  kind: ConfigOwnerKind;
  component: string;
  finalizer: string;
  lbIdAnnotation: string;
  /** Annotation naming a user's CLB that must never be deleted. */
  existingLbAnnotation?: string;
}

/** Listener names TKE's simulator gives, so its listeners on a user's CLB can be told apart. */
export function listenerPrefix(obj: Owner): string {
  return `tke_${obj.metadata?.namespace ?? ''}_${obj.metadata?.name ?? ''}_`;
}

export async function ensureFinalizer(ctx: SimulatorContext, k: OwnerKind, obj: Owner): Promise<Owner> {
  const finalizers = obj.metadata?.finalizers ?? [];
  if (finalizers.includes(k.finalizer)) return obj;
  return ctx.kube.patchMetadata(k.kind, obj, { finalizers: [...finalizers, k.finalizer] });
}

export function recordedLoadBalancerId(k: OwnerKind, obj: Owner): string | undefined {
  return obj.metadata?.annotations?.[k.lbIdAnnotation]?.trim() || undefined;
}

export function statusIp(obj: Owner): string | undefined {
  const ingress = obj.status?.loadBalancer?.ingress ?? [];
  return ingress.length === 1 ? ingress[0]?.ip : ingress.length === 0 ? undefined : '(several)';
}

/** Writes the CLB ID annotation and the status IP, each only if it differs. */
export async function publishLoadBalancer(ctx: SimulatorContext, k: OwnerKind, obj: Owner, lb: ClbHandle): Promise<void> {
  if (recordedLoadBalancerId(k, obj) !== lb.id) {
    await ctx.kube.patchMetadata(k.kind, obj, { annotations: { [k.lbIdAnnotation]: lb.id } });
  }
  if (statusIp(obj) !== lb.vip) await ctx.kube.patchStatusIp(k.kind, obj, lb.vip);
}

/** Releases the CLB, the auto config, the annotation and status, and finally the finalizer. */
export async function cleanup(ctx: SimulatorContext, k: OwnerKind, obj: Owner): Promise<void> {
  const id = recordedLoadBalancerId(k, obj);
  if (id) {
    const userOwned = k.existingLbAnnotation !== undefined && obj.metadata?.annotations?.[k.existingLbAnnotation]?.trim() === id;
    await releaseLoadBalancer(ctx, id, listenerPrefix(obj), userOwned);
    ctx.log(`${k.kind} ${obj.metadata?.namespace}/${obj.metadata?.name}: released CLB ${id}`);
  }
  await deleteAutoConfig(ctx, k.kind, obj);
  let current = obj;
  if (statusIp(current) !== undefined && !current.metadata?.deletionTimestamp) {
    current = await ctx.kube.patchStatusIp(k.kind, current, undefined);
  }
  const finalizers = current.metadata?.finalizers ?? [];
  const patch: { annotations?: Record<string, string | null>; finalizers?: string[] } = {};
  if (id && !current.metadata?.deletionTimestamp) patch.annotations = { [k.lbIdAnnotation]: null };
  if (finalizers.includes(k.finalizer)) patch.finalizers = finalizers.filter((f) => f !== k.finalizer);
  if (patch.annotations || patch.finalizers) await ctx.kube.patchMetadata(k.kind, current, patch);
}

/**
 * One reconcile of a Service or Ingress, the same for both controllers: objects this controller does not (or no
 * longer) manage get their CLB released if we still hold one; managed ones get the finalizer, then `sync`.
 */
export async function reconcileOwner<T extends Owner>(
  ctx: SimulatorContext,
  k: OwnerKind,
  found: T | undefined,
  managed: (obj: T) => boolean,
  sync: (obj: T) => Promise<void>,
): Promise<void> {
  if (!found) return;
  if (!managed(found)) {
    const ours = recordedLoadBalancerId(k, found) || (found.metadata?.finalizers ?? []).includes(k.finalizer);
    if (ours) await reportingFailures(ctx, k, found, () => cleanup(ctx, k, found));
    return;
  }
  const obj = (await ensureFinalizer(ctx, k, found)) as T;
  await reportingFailures(ctx, k, obj, () => sync(obj));
}

/**
 * Runs a reconcile step; a CLB rejection or a sync problem becomes a Warning Event on the object (then the
 * error propagates, so the queue retries with backoff).
 */
export async function reportingFailures(ctx: SimulatorContext, k: OwnerKind, obj: Owner, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    const who = { kind: k.kind, owner: obj, component: k.component };
    if (err instanceof SyncError) await warn(ctx, who, err.reason, err.message);
    else if (err instanceof ClbError) await warn(ctx, who, REASON_SYNC_FAILED, `${err.action} failed: Code=${err.code}, Message=${err.detail}`);
    throw err;
  }
}
