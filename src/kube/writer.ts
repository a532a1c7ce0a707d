// The one Kubernetes writer of Enforce mode: annotations on Services and Ingresses (merge patch of
// metadata.annotations only), TkeServiceConfig fields (JSON patch, RFC 6902) and policy finalizers. Every write
// carries loopguard's field manager and is guarded by the resourceVersion it was computed from, so a concurrent
// writer (a user, TKE's controller) is never clobbered: on a conflict the object is read again and the change
// computed again, a bounded number of times.
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api, PatchStrategy, setHeaderOptions, type CoreV1Event, type KubeConfig, type KubernetesObject, type V1Ingress, type V1Service } from '@kubernetes/client-node';
import { TKE_SERVICE_CONFIG } from '../api/annotations.js';
import { FIELD_MANAGER, GROUP, PLURAL, VERSION, type TargetKind } from '../api/loopbackpolicy.js';
import { CLUSTER_KIND, CLUSTER_PLURAL } from '../api/clusterloopbackpolicy.js';
import { guardedPatch, type JsonPatchOp } from '../api/json-patch.js';
import { ifFound, kubeStatus } from '../runtime/kube-errors.js';

/** Annotation changes to make; `null` removes the key. */
export type AnnotationPatch = Record<string, string | null>;

export type Target = V1Service | V1Ingress | KubernetesObject;

/** Gateway API's Gateways and Envoy Gateway's EnvoyProxies (docs/gateways.md). */
const GATEWAYS = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gateways' } as const;
const ENVOY_PROXIES = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', plural: 'envoyproxies' } as const;

type EnvoyProxy = KubernetesObject & { spec?: { provider?: { kubernetes?: { envoyService?: { annotations?: Record<string, string> } } } } };
type ConfigObject = KubernetesObject & { spec?: unknown };

/** Attempts per write: the first, then re-reads after a conflict. */
const MAX_ATTEMPTS = 5;

/**
 * Runs `attempt(n)` (a read, then a write guarded by what it read) again after a conflict, MAX_ATTEMPTS times at most;
 * a 404 from the write means the object went meanwhile: `gone`.
 */
async function againOnConflict<R>(gone: R, attempt: (n: number) => Promise<R>): Promise<R> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (kubeStatus(err) === 404) return gone;
      // A failed JSON-patch `test` (someone wrote in between) is 422 for some apiservers, 409 for a stale resourceVersion.
      if ((kubeStatus(err) !== 409 && kubeStatus(err) !== 422) || n >= MAX_ATTEMPTS) throw err;
    }
  }
}

export class KubeWriter {
  private readonly core: CoreV1Api;
  private readonly net: NetworkingV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.net = kc.makeApiClient(NetworkingV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /** The target as the API server has it now (not a cache that may lag loopguard's own writes); undefined when gone. */
  async get(kind: TargetKind, namespace: string, name: string): Promise<Target | undefined> {
    if (kind === 'Gateway') return (await ifFound(this.custom.getNamespacedCustomObject({ ...GATEWAYS, namespace, name }))) as KubernetesObject | undefined;
    return ifFound<Target>(kind === 'Service' ? this.core.readNamespacedService({ namespace, name }) : this.net.readNamespacedIngress({ namespace, name }));
  }

  /**
   * Reads the target (or takes `read`, the target as the caller just read it, for the first attempt), asks `compute`
   * for the annotation changes on that version and patches them, guarded by its resourceVersion; on a conflict, reads
   * again. Returns the target as written (or as read when nothing changes), or undefined when it is gone.
   */
  async patchAnnotations(kind: TargetKind, namespace: string, name: string, compute: (target: Target) => AnnotationPatch | undefined, read?: Target): Promise<Target | undefined> {
    return againOnConflict(undefined, async (attempt) => {
      const target = attempt === 1 && read ? read : await this.get(kind, namespace, name);
      if (!target) return undefined;
      const patch = compute(target);
      const current = target.metadata?.annotations ?? {};
      if (!patch || Object.entries(patch).every(([k, v]) => (current[k] ?? null) === v)) return target;
      const body = { metadata: { resourceVersion: target.metadata?.resourceVersion, annotations: patch } };
      const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
      // A Gateway's annotations for TKE go to its EnvoyProxy (patchEnvoyServiceAnnotations), never onto the Gateway.
      if (kind === 'Gateway') throw new Error(`loopguard does not annotate Gateway ${namespace}/${name}`);
      return kind === 'Service'
        ? await this.core.patchNamespacedService({ namespace, name, body, fieldManager: FIELD_MANAGER }, options)
        : await this.net.patchNamespacedIngress({ namespace, name, body, fieldManager: FIELD_MANAGER }, options);
    });
  }

  /** An EnvoyProxy's spec.provider.kubernetes.envoyService.annotations as the API server has them; undefined when it is gone. */
  async envoyServiceAnnotations(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const ep = await this.envoyProxy(namespace, name);
    return ep ? { ...ep.spec?.provider?.kubernetes?.envoyService?.annotations } : undefined;
  }

  private async envoyProxy(namespace: string, name: string): Promise<EnvoyProxy | undefined> {
    return (await ifFound(this.custom.getNamespacedCustomObject({ ...ENVOY_PROXIES, namespace, name }))) as EnvoyProxy | undefined;
  }

  /**
   * Changes keys of an EnvoyProxy's envoyService.annotations (null removes; a JSON merge patch of that map only, with
   * the provider type it requires), guarded by the resourceVersion it was read at. Returns whether the EnvoyProxy exists.
   */
  async patchEnvoyServiceAnnotations(namespace: string, name: string, set: AnnotationPatch): Promise<boolean> {
    return againOnConflict(false, async () => {
      const ep = await this.envoyProxy(namespace, name);
      if (!ep) return false;
      const current = ep.spec?.provider?.kubernetes?.envoyService?.annotations ?? {};
      if (Object.entries(set).every(([k, v]) => (current[k] ?? null) === v)) return true;
      const body = { metadata: { resourceVersion: ep.metadata?.resourceVersion }, spec: { provider: { type: 'Kubernetes', kubernetes: { envoyService: { annotations: set } } } } };
      await this.custom.patchNamespacedCustomObject({ ...ENVOY_PROXIES, namespace, name, body, fieldManager: FIELD_MANAGER }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      return true;
    });
  }

  /**
   * Reads the config fresh, asks `plan` for the ops on that spec and sends them behind a resourceVersion `test`;
   * a lost race (TKE's resync wrote in between) is planned again.
   */
  async patchConfig(namespace: string, name: string, plan: (spec: unknown) => JsonPatchOp[]): Promise<'written' | 'unchanged' | 'gone'> {
    return againOnConflict<'written' | 'unchanged' | 'gone'>('gone', async () => {
      const config = (await ifFound(this.custom.getNamespacedCustomObject({ ...TKE_SERVICE_CONFIG, namespace, name }))) as ConfigObject | undefined;
      if (!config) return 'gone';
      const ops = plan(config.spec);
      if (ops.length === 0) return 'unchanged';
      const body = guardedPatch(config.metadata?.resourceVersion ?? '', ops);
      await this.custom.patchNamespacedCustomObject({ ...TKE_SERVICE_CONFIG, namespace, name, body, fieldManager: FIELD_MANAGER }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
      return 'written';
    });
  }

  /** Events about a target, newest included (TKE's controllers report failed CLB syncs as Warning Events). */
  async eventsOf(kind: TargetKind, namespace: string, name: string): Promise<CoreV1Event[]> {
    return (await this.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` })).items;
  }

  /** Sets a policy's finalizers (either kind), guarded by the resourceVersion they were computed from (another writer's are never dropped). */
  async setFinalizers(policy: { kind?: string; metadata: { name?: string; namespace?: string; resourceVersion?: string } }, finalizers: string[]): Promise<void> {
    const patch = { group: GROUP, version: VERSION, name: policy.metadata.name ?? '', body: { metadata: { finalizers, resourceVersion: policy.metadata.resourceVersion } }, fieldManager: FIELD_MANAGER };
    const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    if (policy.kind === CLUSTER_KIND) await this.custom.patchClusterCustomObject({ ...patch, plural: CLUSTER_PLURAL }, options);
    else await this.custom.patchNamespacedCustomObject({ ...patch, plural: PLURAL, namespace: policy.metadata.namespace ?? '' }, options);
  }
}
