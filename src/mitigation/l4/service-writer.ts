// Annotation writes on Services: JSON merge patch of metadata.annotations only, with loopguard's field
// manager, guarded by resourceVersion so a concurrent writer is never clobbered (409 → re-read, recompute).
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../api/loopbackpolicy.js';

/** Annotation changes to make; `null` removes the key. */
export type AnnotationPatch = Record<string, string | null>;

const MAX_CONFLICTS = 5;

export class ServiceWriter {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async get(namespace: string, name: string): Promise<V1Service | undefined> {
    try {
      return await this.core.readNamespacedService({ namespace, name });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Every Service of the namespace, read from the API server (not a cache that may lag loopguard's own writes). */
  async list(namespace: string): Promise<V1Service[]> {
    return (await this.core.listNamespacedService({ namespace })).items;
  }

  /**
   * Reads the Service, asks `compute` for the annotation changes on that version and patches them guarded by
   * its resourceVersion; on a conflict, again. Returns the Service as written (or as read when `compute`
   * wants nothing), or undefined when the Service is gone.
   */
  async patchAnnotations(namespace: string, name: string, compute: (svc: V1Service) => AnnotationPatch | undefined): Promise<V1Service | undefined> {
    for (let attempt = 1; ; attempt++) {
      const svc = await this.get(namespace, name);
      if (!svc) return undefined;
      const patch = compute(svc);
      if (!patch || Object.keys(patch).length === 0) return svc;
      const current = svc.metadata?.annotations ?? {};
      if (Object.entries(patch).every(([k, v]) => (current[k] ?? null) === v)) return svc;
      try {
        return await this.core.patchNamespacedService(
          {
            namespace,
            name,
            body: { metadata: { resourceVersion: svc.metadata?.resourceVersion, annotations: patch } },
            fieldManager: FIELD_MANAGER,
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      } catch (err) {
        if (err instanceof ApiException && err.code === 409 && attempt < MAX_CONFLICTS) continue;
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw err;
      }
    }
  }
}
