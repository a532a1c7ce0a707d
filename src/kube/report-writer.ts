// Keeps the per-namespace OpenReports Reports (docs/cluster-policy.md §8) on the API server. OpenReports is optional:
// discovery says whether `openreports.io/v1alpha1` serves `reports`, asked again at most once per resync so that
// installing it later needs no restart; while it is absent nothing is written and nothing fails. A report is applied
// (server-side apply, loopguard's field manager, forced: loopguard owns its report) only when namespaceReport differs
// from the stored one, and what was last read or written is remembered, so an unchanged namespace costs no API call
// between resyncs. Each resync forgets it once: a report someone deleted or edited is read again and put back.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/loopbackpolicy.js';
import {
  MANAGED_BY_LABEL,
  namespaceReport,
  REPORT_GROUP,
  REPORT_LABELS,
  REPORT_NAME,
  REPORT_PLURAL,
  REPORT_VERSION,
  sameReport,
  type Report,
  type ReportTarget,
} from '../model/namespace-report.js';
import { kubeStatus, kubeStatusKind } from '../runtime/kube-errors.js';

const API = { group: REPORT_GROUP, version: REPORT_VERSION, plural: REPORT_PLURAL };
const SELECTOR = `${MANAGED_BY_LABEL}=${REPORT_LABELS[MANAGED_BY_LABEL] ?? ''}`;

export interface ReportWriterOptions {
  /** How long a discovery answer (and the remembered reports) hold: the operator's resync interval. */
  resyncMs: number;
  logger?: { info: (message: string, fields?: Record<string, unknown>) => void };
  /** The clock (tests). */
  now?: () => Date;
}

/**
 * What a 404 means. The apiserver names what it did not find in Status.details.kind: `reports` for a missing report,
 * `namespaces` for a missing namespace; a path it does not serve at all (the CRD is absent) names nothing.
 */
function notFound(err: unknown): 'report' | 'namespace' | 'not-served' | undefined {
  if (kubeStatus(err) !== 404) return undefined;
  const kind = kubeStatusKind(err);
  return kind === REPORT_PLURAL ? 'report' : kind === 'namespaces' ? 'namespace' : 'not-served';
}

export class ReportWriter {
  private readonly api: CustomObjectsApi;
  private readonly now: () => Date;
  /** The last discovery answer and when it was had. */
  private served: { value: boolean; at: number } | undefined;
  /** Per namespace, the report as last read or written (null: read, none there). */
  private readonly known = new Map<string, Report | null>();

  constructor(
    kc: KubeConfig,
    private readonly options: ReportWriterOptions,
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.now = options.now ?? (() => new Date());
  }

  /** Whether the apiserver serves OpenReports' `reports`; asked at most once per resync interval. */
  async available(): Promise<boolean> {
    const now = this.now().getTime();
    if (this.served && now - this.served.at < this.options.resyncMs) return this.served.value;
    let value: boolean;
    try {
      const list = await this.api.getAPIResources({ group: REPORT_GROUP, version: REPORT_VERSION });
      value = list.resources.some((r) => r.name === REPORT_PLURAL);
    } catch (err) {
      if (kubeStatus(err) !== 404) throw err;
      value = false;
    }
    this.setServed(value, now);
    return value;
  }

  /**
   * Brings the namespace's report to what `targets` say, writing only on a change. Returns the report's name, or
   * undefined when there is none: OpenReports is not installed (or the namespace is gone).
   */
  async sync(namespace: string, targets: readonly ReportTarget[]): Promise<string | undefined> {
    if (!(await this.available())) return undefined;
    try {
      let stored = this.known.get(namespace);
      if (stored === undefined) {
        stored = await this.read(namespace);
        this.known.set(namespace, stored);
      }
      const desired = namespaceReport(namespace, targets, stored ?? undefined, this.now());
      if (sameReport(stored ?? undefined, desired)) return REPORT_NAME;
      const written = (await this.api.patchNamespacedCustomObject(
        { ...API, namespace, name: REPORT_NAME, body: desired, fieldManager: FIELD_MANAGER, force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      )) as Report;
      this.known.set(namespace, written);
      return REPORT_NAME;
    } catch (err) {
      this.known.delete(namespace);
      return this.absorbNotFound(err);
    }
  }

  /** Deletes loopguard's report in every namespace not in `covered` (found by its label, so orphans too). */
  async prune(covered: ReadonlySet<string>): Promise<void> {
    if (!(await this.available())) return;
    let items: Report[];
    try {
      items = ((await this.api.listCustomObjectForAllNamespaces({ group: REPORT_GROUP, version: REPORT_VERSION, resourcePlural: REPORT_PLURAL, labelSelector: SELECTOR })) as { items?: Report[] }).items ?? [];
    } catch (err) {
      await this.absorbNotFound(err);
      return;
    }
    for (const report of items) {
      const namespace = report.metadata.namespace ?? '';
      if (report.metadata.name !== REPORT_NAME || covered.has(namespace)) continue;
      this.known.delete(namespace);
      try {
        await this.api.deleteNamespacedCustomObject({ ...API, namespace, name: REPORT_NAME });
      } catch (err) {
        if (notFound(err) === undefined) throw err; // already gone, or OpenReports with it
      }
    }
    for (const namespace of this.known.keys()) if (!covered.has(namespace)) this.known.delete(namespace);
  }

  private async read(namespace: string): Promise<Report | null> {
    try {
      return (await this.api.getNamespacedCustomObject({ ...API, namespace, name: REPORT_NAME })) as Report;
    } catch (err) {
      if (notFound(err) === 'report') return null;
      throw err;
    }
  }

  /** A 404 for the namespace or the whole resource is no error here; the latter means OpenReports went away. */
  private absorbNotFound(err: unknown): undefined {
    const what = notFound(err);
    if (what === undefined || what === 'report') throw err;
    if (what === 'not-served') this.setServed(false, this.now().getTime());
    return undefined;
  }

  private setServed(value: boolean, at: number): void {
    if (this.served?.value !== value) {
      this.options.logger?.info(
        value
          ? `OpenReports is installed: writing a Report "${REPORT_NAME}" in each namespace a policy covers`
          : `OpenReports (${REPORT_GROUP}/${REPORT_VERSION} ${REPORT_PLURAL}) is not installed: no per-namespace reports; checked again each resync`,
      );
    }
    // A new answer, or the same one again after a resync: what was remembered may be stale either way.
    this.known.clear();
    this.served = { value, at };
  }
}
