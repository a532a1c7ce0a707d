// The plan ConfigMap's I/O on the operator's side (docs/probe.md §1, §11): read it, and write it only when its text
// differs (a write costs every agent a re-read). RBAC (config/rbac/probe_role.yaml): get and update on
// loopguard-probe-plan by name, create of ConfigMaps in loopguard's namespace (create cannot be limited to a name).
// An update carries the resourceVersion read: a concurrent writer makes it fail (409), and the queue retries.
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { PROBE_PLAN_KEY, PROBE_PLAN_NAME } from '../api/probe.js';
import { kubeStatus } from '../runtime/kube-errors.js';

/** The plan as the apiserver holds it: its text and resourceVersion (what the agents echo as planVersion). */
export interface StoredPlan {
  text: string;
  version: string;
}

const LABELS = { 'app.kubernetes.io/name': 'loopguard', 'app.kubernetes.io/component': 'probe-plan' };

export class PlanStore {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig, private readonly namespace: string) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async read(): Promise<StoredPlan | undefined> {
    let cm: V1ConfigMap;
    try {
      cm = await this.core.readNamespacedConfigMap({ name: PROBE_PLAN_NAME, namespace: this.namespace });
    } catch (err) {
      if (kubeStatus(err) === 404) return undefined;
      throw err;
    }
    return { text: cm.data?.[PROBE_PLAN_KEY] ?? '', version: cm.metadata?.resourceVersion ?? '' };
  }

  /**
   * Writes `text` unless the stored plan already says it; `create`: make the ConfigMap when there is none (an empty
   * plan is not worth creating one). Returns the plan as stored, or undefined when there is none.
   */
  async sync(text: string, create: boolean): Promise<StoredPlan | undefined> {
    const stored = await this.read();
    if (stored?.text === text) return stored;
    const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PROBE_PLAN_NAME, namespace: this.namespace, labels: LABELS }, data: { [PROBE_PLAN_KEY]: text } };
    if (stored) {
      const cm = await this.core.replaceNamespacedConfigMap({ name: PROBE_PLAN_NAME, namespace: this.namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion: stored.version } } });
      return { text, version: cm.metadata?.resourceVersion ?? '' };
    }
    if (!create) return undefined;
    const cm = await this.core.createNamespacedConfigMap({ namespace: this.namespace, body });
    return { text, version: cm.metadata?.resourceVersion ?? '' };
  }
}
