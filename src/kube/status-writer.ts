// LoopbackPolicy status goes through the status subresource with server-side apply and loopguard's own
// field manager, forced: the controller owns status outright (Kubernetes docs "Server-Side Apply": controllers force conflicts on what they own).
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, FIELD_MANAGER, GROUP, KIND, PLURAL, VERSION, type LoopbackPolicyStatus } from '../api/loopbackpolicy.js';
import { canonicalJson } from '../api/canonical-json.js';
import { CLUSTER_KIND, CLUSTER_PLURAL, type ClusterLoopbackPolicyStatus } from '../api/clusterloopbackpolicy.js';

export class PolicyStatusWriter {
  private readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  /** A LoopbackPolicy's status (namespace set) or a ClusterLoopbackPolicy's (namespace undefined). */
  async apply(namespace: string | undefined, name: string, status: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus): Promise<void> {
    const options = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    const patch = { group: GROUP, version: VERSION, name, fieldManager: FIELD_MANAGER, force: true };
    // A cluster policy's metadata has no namespace (undefined is not sent).
    const body = { apiVersion: API_VERSION, kind: namespace === undefined ? CLUSTER_KIND : KIND, metadata: { name, namespace }, status };
    if (namespace === undefined) await this.api.patchClusterCustomObjectStatus({ ...patch, plural: CLUSTER_PLURAL, body }, options);
    else await this.api.patchNamespacedCustomObjectStatus({ ...patch, plural: PLURAL, namespace, body }, options);
  }
}

/**
 * Whether the cached status `a` already holds the built status `b` ("is a write needed"), compared on the fields
 * loopguard writes (server-side apply keeps what another field manager added). The evaluation time alone changing is
 * not news. Keys are sorted: the apiserver's key order is not buildPolicyStatus's, and comparing the strings as they
 * came made every converged round write an unchanged status.
 */
export function sameStatus(a: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined, b: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus): boolean {
  if (a === undefined) return false;
  const key = (s: object) => canonicalJson(Object.fromEntries(Object.entries(s).filter(([k]) => OWN_STATUS_FIELDS.has(k) && k !== 'lastEvaluatedTime')));
  return key(a) === key(b);
}

/** The status fields loopguard writes (api/loopbackpolicy.ts, api/clusterloopbackpolicy.ts): a field it leaves out is one to remove. */
const OWN_STATUS_FIELDS: ReadonlySet<string> = new Set(['observedGeneration', 'conditions', 'clusterProfile', 'counts', 'namespaces', 'excludedNamespaces', 'byNamespace', 'byNamespaceTruncated', 'targets', 'targetsTruncated', 'targetsNote', 'releases', 'lastEvaluatedTime']);
