// TKE's service-controller, simulated: a LoadBalancer Service gets a CLB with one listener per port, the
// read-only `service.kubernetes.io/loadbalance-id` annotation, the status IP, its TkeServiceConfig applied,
// and — when kube-proxy would bind the VIP (prevent-loopback) — the VIP marked bound in the emulator.
import type { V1Service } from '@kubernetes/client-node';
import { LB_CLEANUP_FINALIZER, SERVICE, SERVICE_CONTROLLER } from './annotations.js';
import { syncConfig, warn } from './config-sync.js';
import type { SimulatorContext } from './context.js';
import { bindsVip, kubeProxyProfile } from './kube-proxy.js';
import type { OwnerKind } from './lifecycle.js';
import { listenerPrefix, publishLoadBalancer, reconcileOwner, recordedLoadBalancerId } from './lifecycle.js';
import { ensureL4Listeners, ensureLoadBalancer } from './load-balancer.js';
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
  const listeners = await ensureL4Listeners(ctx, lb, plan.listeners, force ?? 0, listenerPrefix(svc));
  await publishLoadBalancer(ctx, SERVICE_KIND, svc, lb);

  const profile = kubeProxyProfile(await ctx.kube.getKubeProxy());
  await ctx.vips.setVipBound(lb.id, bindsVip(profile, plan.preventLoopback));

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
  });
}
