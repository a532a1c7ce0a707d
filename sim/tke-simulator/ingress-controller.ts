// TKE's l7-lb-controller, simulated: a qcloud Ingress gets a CLB with HTTP:80 (and HTTPS:443 with TLS), one
// rule per host/path with the health check TKE sets, the read-only `kubernetes.io/ingress.qcloud-loadbalance-id`
// annotation, the status IP, `pass-to-target` and its TkeServiceConfig applied.
import type { V1Ingress } from '@kubernetes/client-node';
import { INGRESS, INGRESS_CLEANUP_FINALIZER, INGRESS_CONTROLLER } from './annotations.js';
import { syncConfig, warn } from './config-sync.js';
import type { SimulatorContext } from './context.js';
import { isManagedIngress, planIngress } from './ingress-plan.js';
import type { OwnerKind } from './lifecycle.js';
import { listenerPrefix, publishLoadBalancer, reconcileOwner, recordedLoadBalancerId } from './lifecycle.js';
import { ensureL7Listeners, ensureLoadBalancer } from './load-balancer.js';
import { syncPassToTarget } from './pass-to-target.js';
import { chooseConfig } from './tke-service-config.js';

export const INGRESS_KIND: OwnerKind = {
  kind: 'Ingress',
  component: INGRESS_CONTROLLER,
  finalizer: INGRESS_CLEANUP_FINALIZER,
  lbIdAnnotation: INGRESS.loadBalancerId,
};

export async function reconcileIngress(ctx: SimulatorContext, namespace: string, name: string): Promise<void> {
  await reconcileOwner(ctx, INGRESS_KIND, await ctx.kube.getIngress(namespace, name), isManagedIngress, (ing) => syncIngress(ctx, ing));
}

async function syncIngress(ctx: SimulatorContext, ing: V1Ingress): Promise<void> {
  const plan = planIngress(ing, ctx.clusterId);
  for (const problem of plan.problems) await warn(ctx, { kind: 'Ingress', owner: ing, component: INGRESS_CONTROLLER }, 'InvalidAnnotation', problem);
  const lb = await ensureLoadBalancer(ctx, plan.loadBalancer, recordedLoadBalancerId(INGRESS_KIND, ing), async (id) => {
    await ctx.kube.patchMetadata('Ingress', ing, { annotations: { [INGRESS.loadBalancerId]: id } });
  });
  const listeners = await ensureL7Listeners(ctx, lb, plan.listeners, listenerPrefix(ing));
  await publishLoadBalancer(ctx, INGRESS_KIND, ing, lb);
  await syncPassToTarget(ctx, { kind: 'Ingress', owner: ing, component: INGRESS_CONTROLLER }, lb, INGRESS.passToTarget);
  const annotations = ing.metadata?.annotations ?? {};
  await syncConfig(ctx, {
    kind: 'Ingress',
    owner: ing,
    component: INGRESS_CONTROLLER,
    choice: chooseConfig('Ingress', ing.metadata?.name ?? '', annotations[INGRESS.tkeServiceConfigAuto], annotations[INGRESS.tkeServiceConfig], {
      auto: INGRESS.tkeServiceConfigAuto,
      manual: INGRESS.tkeServiceConfig,
    }),
    lb,
    listeners,
  });
}
