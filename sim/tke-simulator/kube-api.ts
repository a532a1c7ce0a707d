// The Kubernetes reads and writes of the simulator. Writes are merge patches that name only the fields TKE
// owns (the read-only CLB-ID annotation, status.loadBalancer, our finalizer), under TKE's field managers.
// Merge patch rather than SSA: SSA would re-create a Service deleted a moment ago, a merge patch gets a 404.
import type { KubeConfig, V1DaemonSet, V1Ingress, V1OwnerReference, V1Service } from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { INGRESS, INGRESS_CONTROLLER, SERVICE, SERVICE_CONTROLLER } from './annotations.js';
import type { ConfigOwnerKind, TkeServiceConfig, TkeServiceConfigSpec } from './tke-service-config.js';
import { TKE_SERVICE_CONFIG, TKE_SERVICE_CONFIG_API_VERSION } from './tke-service-config.js';

export type Owner = V1Service | V1Ingress;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

async function orUndefinedOn404<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (httpStatus(err) === 404) return undefined;
    throw err;
  }
}

export const fieldManagerOf = (kind: ConfigOwnerKind): string => (kind === 'Service' ? SERVICE_CONTROLLER : INGRESS_CONTROLLER);
export const lbIdAnnotationOf = (kind: ConfigOwnerKind): string => (kind === 'Service' ? SERVICE.loadBalancerId : INGRESS.loadBalancerId);

export class KubeApi {
  readonly core: CoreV1Api;
  private readonly apps: AppsV1Api;
  private readonly net: NetworkingV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.net = kc.makeApiClient(NetworkingV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  getService(namespace: string, name: string): Promise<V1Service | undefined> {
    return orUndefinedOn404(this.core.readNamespacedService({ namespace, name }));
  }

  getIngress(namespace: string, name: string): Promise<V1Ingress | undefined> {
    return orUndefinedOn404(this.net.readNamespacedIngress({ namespace, name }));
  }

  /** Every Service in the cluster (kube-proxy binds a VIP for any of them that asks: service-controller.ts). */
  async listServices(): Promise<V1Service[]> {
    return (await this.core.listServiceForAllNamespaces()).items;
  }

  getKubeProxy(): Promise<V1DaemonSet | undefined> {
    return orUndefinedOn404(this.apps.readNamespacedDaemonSet({ namespace: 'kube-system', name: 'kube-proxy' }));
  }

  /**
   * Patches annotations (null deletes) and/or the finalizer list. The finalizer list is replaced whole by a
   * merge patch, so the patch carries the resourceVersion it was computed from: a concurrent change → 409,
   * and the queue retries from a fresh read.
   */
  async patchMetadata(
    kind: ConfigOwnerKind,
    obj: Owner,
    patch: { annotations?: Record<string, string | null>; finalizers?: string[] },
  ): Promise<Owner> {
    const namespace = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    const metadata: Record<string, unknown> = { ...patch };
    if (patch.finalizers) metadata.resourceVersion = obj.metadata?.resourceVersion;
    const args = { namespace, name, body: { metadata }, fieldManager: fieldManagerOf(kind) };
    if (kind === 'Service') return this.core.patchNamespacedService(args, mergePatch);
    return this.net.patchNamespacedIngress(args, mergePatch);
  }

  /** Sets `status.loadBalancer.ingress` to the VIP, or clears it. Returns the patched object. */
  async patchStatusIp(kind: ConfigOwnerKind, obj: Owner, ip: string | undefined): Promise<Owner> {
    const args = {
      namespace: obj.metadata?.namespace ?? '',
      name: obj.metadata?.name ?? '',
      body: { status: { loadBalancer: ip ? { ingress: [{ ip }] } : {} } },
      fieldManager: fieldManagerOf(kind),
    };
    if (kind === 'Service') return this.core.patchNamespacedServiceStatus(args, mergePatch);
    return this.net.patchNamespacedIngressStatus(args, mergePatch);
  }

  async getConfig(namespace: string, name: string): Promise<TkeServiceConfig | undefined> {
    const obj = await orUndefinedOn404(this.custom.getNamespacedCustomObject({ ...crd, namespace, name }));
    return obj as TkeServiceConfig | undefined;
  }

  async createConfig(namespace: string, name: string, spec: TkeServiceConfigSpec, owner: V1OwnerReference, kind: ConfigOwnerKind): Promise<void> {
    const body: TkeServiceConfig = {
      apiVersion: TKE_SERVICE_CONFIG_API_VERSION,
      kind: TKE_SERVICE_CONFIG.kind,
      metadata: { name, namespace, ownerReferences: [owner] },
      spec,
    };
    await this.custom.createNamespacedCustomObject({ ...crd, namespace, body, fieldManager: fieldManagerOf(kind) });
  }

  /** Replaces the spec, guarded by the resourceVersion it was computed from (user edits must not be lost). */
  async replaceConfigSpec(config: TkeServiceConfig, spec: TkeServiceConfigSpec, kind: ConfigOwnerKind): Promise<void> {
    const namespace = config.metadata?.namespace ?? '';
    const name = config.metadata?.name ?? '';
    const body = { ...config, spec };
    await this.custom.replaceNamespacedCustomObject({ ...crd, namespace, name, body, fieldManager: fieldManagerOf(kind) });
  }

  async deleteConfig(namespace: string, name: string): Promise<void> {
    await orUndefinedOn404(this.custom.deleteNamespacedCustomObject({ ...crd, namespace, name }));
  }
}

const crd = { group: TKE_SERVICE_CONFIG.group, version: TKE_SERVICE_CONFIG.version, plural: TKE_SERVICE_CONFIG.plural };

export function ownerReference(kind: ConfigOwnerKind, obj: Owner): V1OwnerReference {
  return {
    apiVersion: kind === 'Service' ? 'v1' : 'networking.k8s.io/v1',
    kind,
    name: obj.metadata?.name ?? '',
    uid: obj.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: false,
  };
}
