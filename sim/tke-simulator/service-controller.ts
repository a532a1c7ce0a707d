// TKE's service-controller, simulated: a LoadBalancer Service gets a CLB with one listener per port, the
// read-only `service.kubernetes.io/loadbalance-id` annotation, the status IP, `pass-to-target`, its
// TkeServiceConfig applied (with sync scope `all`, its listeners' health checks put back to TKE's view), and —
// when kube-proxy would bind the VIP (prevent-loopback) — the VIP marked bound in the emulator.
import type { V1Service } from '@kubernetes/client-node';
import type { Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { LB_CLEANUP_FINALIZER, SERVICE, SERVICE_CONTROLLER, annotationIsTrue } from './annotations.js';
import type { ConfigSyncInput } from './config-sync.js';
import { syncConfig, warn } from './config-sync.js';
import type { SimulatorContext } from './context.js';
import { bindsVip, kubeProxyProfile } from './kube-proxy.js';
import type { OwnerKind } from './lifecycle.js';
import { listenerPrefix, publishLoadBalancer, reconcileOwner, recordedLoadBalancerId } from './lifecycle.js';
import type { ClbHandle } from './load-balancer.js';
import { ensureL4Listeners, ensureLoadBalancer, isOurs, sameL4 } from './load-balancer.js';
import { syncPassToTarget } from './pass-to-target.js';
import type { L4ListenerPlan } from './service-plan.js';
import { isLoadBalancerService, planService } from './service-plan.js';
import { chooseConfig } from './tke-service-config.js';

export const SERVICE_KIND: OwnerKind = {
  kind: 'Service',
  component: SERVICE_CONTROLLER,
  finalizer: LB_CLEANUP_FINALIZER,
  lbIdAnnotation: SERVICE.loadBalancerId,
  existingLbAnnotation: SERVICE.existedLbId,
};

export async function reconcileService(ctx: SimulatorContext, namespace: string, name: string): Promise<void> {
  await reconcileOwner(ctx, SERVICE_KIND, await ctx.kube.getService(namespace, name), isLoadBalancerService, (svc) => syncService(ctx, svc));
}

async function syncService(ctx: SimulatorContext, svc: V1Service): Promise<void> {
  const plan = planService(svc, ctx.clusterId);
  const who = { kind: 'Service' as const, owner: svc, component: SERVICE_CONTROLLER };
  for (const problem of plan.problems) await warn(ctx, who, 'InvalidAnnotation', problem);

  const recorded = recordedLoadBalancerId(SERVICE_KIND, svc);
  const lb = await ensureLoadBalancer(ctx, plan.loadBalancer, recorded, async (id) => {
    await ctx.kube.patchMetadata('Service', svc, { annotations: { [SERVICE.loadBalancerId]: id } });
  });
  // Newer TKE switches the health-check source itself on prevent-loopback; IPv6 CLBs cannot use 100.64.
  const force = ctx.switchHealthCheckSourceOnPreventLoopback && plan.preventLoopback && !lb.ipv6 ? 1 : undefined;
  const prefix = listenerPrefix(svc);
  const listeners = await ensureL4Listeners(ctx, lb, plan.listeners, force === 1, prefix);
  await publishLoadBalancer(ctx, SERVICE_KIND, svc, lb);
  await syncPassToTarget(ctx, who, lb, SERVICE.passToTarget);

  const profile = kubeProxyProfile(await ctx.kube.getKubeProxy());
  // kube-proxy binds the VIP (one address on kube-ipvs0) while any Service with it asks: on a CLB shared by several
  // Services (tke-existed-lbid), one Service dropping prevent-loopback leaves it bound for the others. Only a
  // user-brought CLB can be shared, so only then are the other Services listed (a list per sync of every Service
  // would cost the scale benches O(n²) reads and widen the window of a sync that started from a stale read).
  const asked = plan.preventLoopback || (plan.loadBalancer.existingId !== undefined && (await otherServiceAsks(ctx, lb.id)));
  await ctx.vips.setVipBound(lb.id, bindsVip(profile, asked));

  const annotations = svc.metadata?.annotations ?? {};
  await syncConfig(ctx, {
    ...who,
    choice: chooseConfig('Service', svc.metadata?.name ?? '', annotations[SERVICE.tkeServiceConfigAuto], annotations[SERVICE.tkeServiceConfig], {
      auto: SERVICE.tkeServiceConfigAuto,
      manual: SERVICE.tkeServiceConfig,
    }),
    lb,
    listeners,
    ...(force !== undefined ? { forceL4SourceIpType: force } : {}),
    ...(ctx.syncScope === 'all' ? { ownL4: await ownL4Listeners(ctx, lb, plan.listeners, listeners, prefix, force !== undefined) } : {}),
  });
}

async function otherServiceAsks(ctx: SimulatorContext, loadBalancerId: string): Promise<boolean> {
  return (await ctx.kube.listServices()).some((s) => s.metadata?.annotations?.[SERVICE.loadBalancerId] === loadBalancerId && !s.metadata.deletionTimestamp && annotationIsTrue(s.metadata.annotations[SERVICE.preventLoopback]));
}

/**
 * Sync scope `all`: the listeners TKE made for this Service (planned ports, on its own CLB or named with its
 * prefix on a user's CLB), and the source the account gives them. The account is asked only when it matters:
 * there are such listeners, and TKE does not choose the source itself (`sourceChosen`, prevent-loopback).
 */
async function ownL4Listeners(
  ctx: SimulatorContext,
  lb: ClbHandle,
  planned: L4ListenerPlan[],
  listeners: Listener[],
  prefix: string,
  sourceChosen: boolean,
): Promise<NonNullable<ConfigSyncInput['ownL4']>> {
  const own = listeners.filter((l) => planned.some((d) => sameL4(d, l)) && isOurs(lb, l, prefix));
  const accountSourceIpType = own.length === 0 || lb.ipv6 || sourceChosen ? 0 : await ctx.account.defaultSourceIpType();
  return { listenerIds: new Set(own.map((l) => l.ListenerId ?? '')), accountSourceIpType };
}
