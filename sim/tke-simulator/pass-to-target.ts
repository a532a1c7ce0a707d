// `service.cloud.tencent.com/pass-to-target` / `ingress.cloud.tencent.com/pass-to-target` (tencent-cloud.md §9 #5, §2):
// TKE sets the CLB's `LoadBalancerPassToTarget` ("allow traffic from CLB by default") to the annotation's value.
import { annotationIsTrue } from './annotations.js';
import type { ClbError } from './clb-api.js';
import { isTransient } from './clb-api.js';
import { REASON_SYNC_FAILED, describeFailure, warn } from './config-sync.js';
import type { SimulatorContext } from './context.js';
import type { Owner } from './kube-api.js';
import type { ClbHandle } from './load-balancer.js';
import type { ConfigOwnerKind } from './tke-service-config.js';

export type PassToTargetWish = { kind: 'none' } | { kind: 'set'; value: boolean } | { kind: 'invalid'; problem: string };

/**
 * What the annotation asks for. Absent: nothing — TKE does not know the attribute's value before the annotation,
 * so removing it leaves the CLB as it is (as removing a tke-service-config annotation does, §1). Pure.
 */
export function passToTargetWish(key: string, value: string | undefined): PassToTargetWish {
  if (value === undefined) return { kind: 'none' };
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === 'false') return { kind: 'set', value: annotationIsTrue(v) };
  return { kind: 'invalid', problem: `${key} must be "true" or "false", got ${JSON.stringify(value)}` };
}

/**
 * Writes `LoadBalancerPassToTarget` only when it differs from the CLB (resyncs stay free). CLB's refusal (an IPv6
 * CLB, §9 #4) becomes a Warning Event, retried at every resync, and does not stop the rest of the sync;
 * transient failures are thrown so the queue retries soon.
 */
export async function syncPassToTarget(
  ctx: SimulatorContext,
  who: { kind: ConfigOwnerKind; owner: Owner; component: string },
  lb: ClbHandle,
  key: string,
): Promise<void> {
  const wish = passToTargetWish(key, who.owner.metadata?.annotations?.[key]);
  if (wish.kind === 'invalid') return warn(ctx, who, 'InvalidAnnotation', wish.problem);
  if (wish.kind === 'none' || wish.value === lb.passToTarget) return;
  try {
    await ctx.clb.modifyLoadBalancerAttributes({ LoadBalancerId: lb.id, LoadBalancerPassToTarget: wish.value });
    ctx.log(`ModifyLoadBalancerAttributes ${lb.id} LoadBalancerPassToTarget=${wish.value} applied`);
  } catch (err) {
    if (isTransient(err)) throw err;
    await warn(ctx, who, REASON_SYNC_FAILED, describeFailure('ModifyLoadBalancerAttributes', lb.id, 'LoadBalancerPassToTarget', err as ClbError));
  }
}
