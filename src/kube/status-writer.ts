// LoopbackPolicy status goes through the status subresource with server-side apply and loopguard's own
// field manager, forced: the controller owns status outright (Kubernetes docs "Server-Side Apply": controllers force conflicts on what they own).
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, FIELD_MANAGER, GROUP, KIND, PLURAL, VERSION, type LoopbackPolicyStatus } from '../api/loopbackpolicy.js';

export class PolicyStatusWriter {
  private readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  async apply(namespace: string, name: string, status: LoopbackPolicyStatus): Promise<void> {
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
