// The agent's two Kubernetes calls (I/O only): watch the one plan ConfigMap by name (its Role names it, and RBAC
// authorizes a watch by resourceNames only with a metadata.name field selector), and write this node's report
// (get, then update with its resourceVersion, or create the first time: `create` cannot be limited to a name).
import { CoreV1Api, CustomObjectsApi, Watch, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/loopbackpolicy.js';
import { PROBE_PLAN_KEY, PROBE_PLAN_NAME, PROBE_REPORT_PLURAL, type ProbeReport } from '../api/probe.js';
import { ifFound, kubeErrorMessage } from '../runtime/kube-errors.js';

/** The plan's text and version as the apiserver has it, or undefined once it is deleted. */
export type PlanEvent = { text: string; version: string } | undefined;

const RETRY_MS = 5_000;

/**
 * Watches the plan until stopped, re-watching after an error; `onPlan` hears every version (and deletion). A plan that
 * does not change sends nothing, and client-node's watch gives up after 30 s without a byte (a TimeoutError): that is
 * no error, and the watch goes on at once from the version it had, as client-node's own ListWatch does. Starting over
 * (first, or after an error) reads the plan first: a watch that starts over sends no event for a plan deleted
 * meanwhile, and the agent would probe with it until a new one came.
 */
export function watchPlan(kc: KubeConfig, namespace: string, onPlan: (plan: PlanEvent) => void, onError: (message: string) => void): () => void {
  let stopped = false;
  let abort: AbortController | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** The last version seen (events and bookmarks); undefined: start over with the current plan. */
  let resourceVersion: string | undefined;
  const core = kc.makeApiClient(CoreV1Api);
  const asItIs = (cm: V1ConfigMap | undefined): PlanEvent => (cm ? { text: cm.data?.[PROBE_PLAN_KEY] ?? '', version: cm.metadata?.resourceVersion ?? '' } : undefined);
  const start = async () => {
    if (stopped) return;
    const again = (err: unknown) => {
      if (stopped) return;
      const quiet = (err as { name?: unknown } | null)?.name === 'TimeoutError';
      // Any other failure (a 410 for the version asked, a network error) starts over with the current plan.
      if (err && !quiet) resourceVersion = undefined;
      if (err && !quiet) onError(`reading or watching ConfigMap ${namespace}/${PROBE_PLAN_NAME}: ${kubeErrorMessage(err)}`);
      retry = setTimeout(() => void start(), err && !quiet ? RETRY_MS : 0);
    };
    try {
      if (resourceVersion === undefined) {
        const current = await ifFound(core.readNamespacedConfigMap({ name: PROBE_PLAN_NAME, namespace }));
        if (stopped) return;
        onPlan(asItIs(current));
        // The watch still starts from now, not from the plan's own version: that is as old as the plan's last change,
        // and a watch from a version the apiserver no longer holds is refused (410) every time. From now, it begins
        // with the plan as an ADDED event (the agent skips a version it has); only a deletion between this read and
        // the watch's start would still be missed.
      }
      abort = await new Watch(kc).watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { fieldSelector: `metadata.name=${PROBE_PLAN_NAME}`, allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) },
        (phase: string, obj: V1ConfigMap) => {
          // An ERROR is a version too old to resume from (410 Gone): the next watch starts over with the current plan.
          if (phase === 'ERROR') resourceVersion = undefined;
          else resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
          if (phase === 'DELETED') onPlan(undefined);
          else if (phase === 'ADDED' || phase === 'MODIFIED') onPlan(asItIs(obj));
        },
        again,
      );
    } catch (err) {
      again(err);
    }
  };
  void start();
  return () => {
    stopped = true;
    clearTimeout(retry);
    abort?.abort();
  };
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
