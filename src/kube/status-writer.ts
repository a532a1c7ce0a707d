// LoopbackPolicy status goes through the status subresource with server-side apply and loopguard's own
// field manager, forced: the controller owns status outright (Kubernetes docs "Server-Side Apply": controllers force conflicts on what they own).
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, FIELD_MANAGER, GROUP, KIND, PLURAL, VERSION, type LoopbackPolicyStatus } from '../api/loopbackpolicy.js';
import { CLUSTER_KIND, CLUSTER_PLURAL, type ClusterLoopbackPolicyStatus } from '../api/clusterloopbackpolicy.js';

export class PolicyStatusWriter {
  private readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  /** A LoopbackPolicy's status (namespace set) or a ClusterLoopbackPolicy's (namespace undefined). */
  async apply(namespace: string | undefined, name: string, status: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus): Promise<void> {
    if (namespace === undefined) {
      await this.api.patchClusterCustomObjectStatus(
        { group: GROUP, version: VERSION, plural: CLUSTER_PLURAL, name, body: { apiVersion: API_VERSION, kind: CLUSTER_KIND, metadata: { name }, status }, fieldManager: FIELD_MANAGER, force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
      return;
    }
    await this.api.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace,
        name,
        body: { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, status },
        fieldManager: FIELD_MANAGER,
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
  }
}
