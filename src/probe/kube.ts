// The agent's two Kubernetes calls (I/O only): follow the one plan ConfigMap by name, and write this node's report
// (get, then update with its resourceVersion, or create the first time: `create` cannot be limited to a name).
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/loopbackpolicy.js';
import { PROBE_PLAN_KEY, PROBE_PLAN_NAME, PROBE_REPORT_PLURAL, type ProbeReport } from '../api/probe.js';
import { ResilientInformer } from '../runtime/informer.js';
import { ifFound } from '../runtime/kube-errors.js';
import type { LogSink } from '../runtime/logger.js';

/** The plan's text and version as the apiserver has it, or undefined once it is deleted. */
export type PlanEvent = { text: string; version: string } | undefined;

/**
 * Follows the plan until stopped; `onPlan` hears every version and its deletion. An informer (list, then watch from
 * the list's version), as the operator's own caches: a deletion while the watch was down (an apiserver restart, a
 * refused watch) comes as the watch's replay or, from a version too old, as the next list's, and the informer restarts
 * after any error with backoff. Its list and watch select the plan by name, which lets the Role name it (RBAC
 * authorizes a list or watch by resourceNames only with a metadata.name field selector).
 */
export function watchPlan(kc: KubeConfig, namespace: string, onPlan: (plan: PlanEvent) => void, logger: Pick<LogSink, 'info' | 'warn'>): () => void {
  const core = kc.makeApiClient(CoreV1Api);
  const fieldSelector = `metadata.name=${PROBE_PLAN_NAME}`;
  const informer = new ResilientInformer<V1ConfigMap>(kc, {
    name: 'probe-plan',
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    list: () => core.listNamespacedConfigMap({ namespace, fieldSelector }),
    fieldSelector,
    onEvent: (type, cm) => onPlan(type === 'delete' ? undefined : { text: cm.data?.[PROBE_PLAN_KEY] ?? '', version: cm.metadata?.resourceVersion ?? '' }),
    logger,
  });
  void informer.start();
  return () => void informer.stop();
}

export class ReportWriter {
  private readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  async write(report: ProbeReport): Promise<void> {
    const at = { group: GROUP, version: VERSION, namespace: report.metadata.namespace!, plural: PROBE_REPORT_PLURAL };
    const current = (await ifFound(this.api.getNamespacedCustomObject({ ...at, name: report.metadata.name }))) as ProbeReport | undefined;
    if (current) {
      await this.api.replaceNamespacedCustomObject({ ...at, name: report.metadata.name, body: { ...report, metadata: { ...report.metadata, resourceVersion: current.metadata.resourceVersion } } });
    } else {
      await this.api.createNamespacedCustomObject({ ...at, body: report });
    }
  }
}
