// Wiring: informers → keyed queue → reconcilers, plus the periodic resync TKE runs (default 30 s).
import type { KubeConfig, KubernetesObject, V1DaemonSet, V1Ingress, V1Service } from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import { ClbAdminClient } from '../clb-emulator/admin-client.js';
import { INGRESS, LB_CLEANUP_FINALIZER, SERVICE } from './annotations.js';
import type { ClbConnection } from './clb-api.js';
import { ClbApi } from './clb-api.js';
import type { AccountDefaults, SimulatorContext, SyncScope, VipBinder } from './context.js';
import type { MissingEnableReading } from './health-check-enable.js';
import { EventRecorder } from './events.js';
import type { ResilientInformer } from './informer.js';
import { startInformer } from './informer.js';
import { reconcileIngress } from './ingress-controller.js';
import { KubeApi } from './kube-api.js';
import { reconcileService } from './service-controller.js';
import type { TkeServiceConfig } from './tke-service-config.js';
import { TKE_SERVICE_CONFIG, autoConfigOwner } from './tke-service-config.js';
import { WorkQueue } from './work-queue.js';

export interface TkeSimulatorOptions {
  kubeConfig: KubeConfig;
  /** The CLB API (normally the emulator: `{ endpoint, region, credentials }` of a `ClbEmulator`). */
  clb: ClbConnection;
  /** Where VIP bindings go; default: the emulator admin API on `clb.endpoint`. */
  vips?: VipBinder;
  /** Written into CLB tags; default `cls-sim00001`. */
  clusterId?: string;
  /** VPC of the cluster's CLBs; default `vpc-sim00001`. */
  vpcId?: string;
  /** Periodic re-application of TkeServiceConfigs; default 30 s. 0 disables (use `resyncNow()`). */
  resyncIntervalMs?: number;
  /** TKE switches L4 health-check sources to 1 on prevent-loopback, as documented (tencent-cloud.md §9 #1). Default true; false models a controller that does not. */
  switchHealthCheckSourceOnPreventLoopback?: boolean;
  /**
   * What each sync re-applies (tencent-cloud.md §9 #2): `all` (default) also puts the whole health check of TKE's own L4
   * listeners back to TKE's view; `declared` re-applies only TkeServiceConfig-declared fields.
   */
  syncScope?: SyncScope;
  /**
   * How a TkeServiceConfig `healthCheck` without its required `enable` is read (docs/tencent-cloud.md §1; not
   * documented, both readings are assumptions): `refused` (default) — the config is not applied, Warning Event
   * SyncLoadBalancerFailed; `switchOff` — the check is switched off. See health-check-enable.ts.
   */
  missingHealthCheckEnable?: MissingEnableReading;
  /** The CLB account's default health-check source; default: read from the emulator admin API on `clb.endpoint`. */
  account?: AccountDefaults;
  /** Only objects in namespaces passing this filter are handled (tests share one apiserver). Default: all. */
  namespaceFilter?: (namespace: string) => boolean;
  /** Client-side pacing of CLB calls, per action; default 10 requests/s (CLB allows 20). */
  clbRequestsPerSecond?: number;
  /** Parallel reconciles (distinct keys); default 4. */
  concurrency?: number;
  log?: (line: string) => void;
}

export interface TkeSimulator {
  /** Re-applies every Service/Ingress now and resolves when each has been reconciled once. */
  resyncNow(): Promise<void>;
  stop(): Promise<void>;
}

const SERVICE_KEY = 'Service/';
const INGRESS_KEY = 'Ingress/';
const keyOf = (prefix: string, obj: KubernetesObject): string => `${prefix}${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;

/** Services worth a reconcile: LoadBalancer ones, and ones we still hold a CLB or finalizer for. */
function serviceMatters(svc: V1Service): boolean {
  return (
    svc.spec?.type === 'LoadBalancer' ||
    svc.metadata?.annotations?.[SERVICE.loadBalancerId] !== undefined ||
    (svc.metadata?.finalizers ?? []).includes(LB_CLEANUP_FINALIZER)
  );
}

export async function startTkeSimulator(options: TkeSimulatorOptions): Promise<TkeSimulator> {
  const log = options.log ?? (() => undefined);
  const kc = options.kubeConfig;
  const kube = new KubeApi(kc);
  const admin = new ClbAdminClient(`${options.clb.protocol ?? 'http://'}${options.clb.endpoint}`);
  const ctx: SimulatorContext = {
    clb: new ClbApi(options.clb, options.clbRequestsPerSecond !== undefined ? { rps: options.clbRequestsPerSecond } : {}),
    vips: options.vips ?? { setVipBound: async (id, bound) => void (await admin.setVipBound(id, bound)) },
    kube,
    events: new EventRecorder(kube.core, log),
    clusterId: options.clusterId ?? 'cls-sim00001',
    vpcId: options.vpcId ?? 'vpc-sim00001',
    switchHealthCheckSourceOnPreventLoopback: options.switchHealthCheckSourceOnPreventLoopback ?? true,
    syncScope: options.syncScope ?? 'all',
    missingHealthCheckEnable: options.missingHealthCheckEnable ?? 'refused',
    // The account profile is a CLB property the emulator's admin API reports (`since2023` → 100.64 by default).
    account: options.account ?? { defaultSourceIpType: async () => ((await admin.getCapabilities()).account === 'since2023' ? 1 : 0) },
    log,
  };
  const inScope = (obj: KubernetesObject): boolean => !options.namespaceFilter || options.namespaceFilter(obj.metadata?.namespace ?? '');

  const queue = new WorkQueue(
    async (key) => {
      const [kind, namespace = '', name = ''] = key.split('/');
      if (kind === 'Service') await reconcileService(ctx, namespace, name);
      else await reconcileIngress(ctx, namespace, name);
    },
    {
      concurrency: options.concurrency ?? 4,
      onError: (key, err, attempt) => log(`reconcile ${key} failed (attempt ${attempt}): ${(err as Error)?.message ?? String(err)}`),
    },
  );

  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);

  const services: ResilientInformer<V1Service> = startInformer<V1Service>({
    kc,
    path: '/api/v1/services',
    list: () => core.listServiceForAllNamespaces(),
    onChange: (svc) => {
      if (inScope(svc) && serviceMatters(svc)) queue.add(keyOf(SERVICE_KEY, svc));
    },
    log,
  });
  const ingresses: ResilientInformer<V1Ingress> = startInformer<V1Ingress>({
    kc,
    path: '/apis/networking.k8s.io/v1/ingresses',
    list: () => net.listIngressForAllNamespaces(),
    onChange: (ing) => {
      if (inScope(ing)) queue.add(keyOf(INGRESS_KEY, ing));
    },
    log,
  });
  const allKeys = (): string[] => [
    ...services.list().filter((s) => inScope(s) && serviceMatters(s)).map((s) => keyOf(SERVICE_KEY, s)),
    ...ingresses.list().filter(inScope).map((i) => keyOf(INGRESS_KEY, i)),
  ];

  // A config edit re-syncs its owner: by name for auto configs, by annotation for hand-made ones.
  const configs: ResilientInformer<TkeServiceConfig & KubernetesObject> = startInformer({
    kc,
    path: `/apis/${TKE_SERVICE_CONFIG.group}/${TKE_SERVICE_CONFIG.version}/${TKE_SERVICE_CONFIG.plural}`,
    list: async () =>
      (await custom.listClusterCustomObject({
        group: TKE_SERVICE_CONFIG.group,
        version: TKE_SERVICE_CONFIG.version,
        plural: TKE_SERVICE_CONFIG.plural,
      })) as { items: Array<TkeServiceConfig & KubernetesObject> },
    onChange: (cfg) => {
      if (!inScope(cfg)) return;
      const ns = cfg.metadata?.namespace ?? '';
      const name = cfg.metadata?.name ?? '';
      const owner = autoConfigOwner(name);
      if (owner) queue.add(`${owner.kind}/${ns}/${owner.name}`);
      for (const svc of services.list(ns)) {
        if (svc.metadata?.annotations?.[SERVICE.tkeServiceConfig] === name) queue.add(keyOf(SERVICE_KEY, svc));
      }
      for (const ing of ingresses.list(ns)) {
        if (ing.metadata?.annotations?.[INGRESS.tkeServiceConfig] === name) queue.add(keyOf(INGRESS_KEY, ing));
      }
    },
    log,
  });
  // kube-proxy decides VIP binding for every Service: a profile change re-syncs them all.
  const daemonSets: ResilientInformer<V1DaemonSet> = startInformer<V1DaemonSet>({
    kc,
    path: '/apis/apps/v1/namespaces/kube-system/daemonsets',
    list: () => apps.listNamespacedDaemonSet({ namespace: 'kube-system' }),
    onChange: (ds) => {
      if (ds.metadata?.name !== 'kube-proxy') return;
      for (const key of allKeys()) if (key.startsWith(SERVICE_KEY)) queue.add(key);
    },
    log,
  });

  // The TkeServiceConfig CRD may be missing (plain clusters): don't block start-up on that informer.
  await Promise.all([services.synced, ingresses.synced, daemonSets.synced]);
  const interval = options.resyncIntervalMs ?? 30_000;
  const timer = interval > 0 ? setInterval(() => allKeys().forEach((k) => queue.add(k)), interval) : undefined;
  log(`tke-simulator started (cluster ${ctx.clusterId}, CLB API ${options.clb.endpoint}, resync ${interval} ms, sync scope ${ctx.syncScope}, healthCheck without enable: ${ctx.missingHealthCheckEnable})`);

  return {
    resyncNow: () => queue.addAndWait(allKeys()),
    stop: async () => {
      if (timer) clearInterval(timer);
      await Promise.all([services.stop(), ingresses.stop(), configs.stop(), daemonSets.stop()]);
      await queue.stop();
    },
  };
}
