// Keeps the per-namespace OpenReports Reports (docs/reports.md) on the API server. OpenReports is optional: discovery
// says whether `openreports.io/v1alpha1` serves `reports`, asked again at most once per resync so that installing it
// later needs no restart; while it is absent nothing is written and nothing fails.
//
// A report is loopguard's whole (docs/reports.md §3 says why each rule): replaced whole, never patched or applied, when
// the stored object is not exactly namespaceReport's; pruned only by the uid loopguard's write got; adopted after a
// restart by its seal (report-seal.ts). What loopguard wrote is remembered, so an unchanged namespace costs no API call
// between resyncs; each resync reads the stored report once again, so one someone deleted or edited is put back.
import { CustomObjectsApi, type KubeConfig, type KubernetesListObject } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/loopbackpolicy.js';
import { MANAGED_BY_LABEL, namespaceReport, REPORT_API_VERSION, REPORT_GROUP, REPORT_KIND, REPORT_LABELS, REPORT_NAME, REPORT_PLURAL, REPORT_VERSION, sameReport, type Report, type ReportTarget } from '../model/namespace-report.js';
import { listInPages, type ListPage } from '../runtime/informer.js';
import { ifFound, kubeStatus, kubeStatusKind } from '../runtime/kube-errors.js';
import type { LogSink } from '../runtime/logger.js';
import { sharedUntilFailed } from '../runtime/settle.js';
import { sealedByLoopguard, sealReport } from './report-seal.js';

const API = { group: REPORT_GROUP, version: REPORT_VERSION, plural: REPORT_PLURAL };

export interface ReportWriterOptions {
  /** How long a discovery answer (and the stored reports as last seen) hold: the operator's resync interval. */
  resyncMs: number;
  logger?: Pick<LogSink, 'info'>;
  /** The observation checkpoint's key (ObservationStore.key): seals each report; absent, reports are not sealed. */
  key?: () => Promise<Buffer>;
  /** The clock (tests). */
  now?: () => Date;
}

/** A page of the adoption's list: loopguard's reports are one per covered namespace, and can be large. */
const LIST_PAGE = 100;

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
  /**
   * Per namespace, the report as this process last wrote it (the apiserver's answer), or an earlier process's whose
   * seal verified (adopt): its uid is the identity prune trusts, its results' timestamps the only ones carried over.
   * Kept across resyncs.
   */
  private readonly written = new Map<string, Report>();
  /** Namespaces whose stored report is known to be `written` since the last resync (read or written since). */
  private readonly current = new Set<string>();
  /**
   * Takes as its own each stored report an earlier process wrote (named `loopguard`, loopguard's label only to list
   * less, a seal that verifies). Once per process, shared by the namespaces that run at once; a failure is thrown (the
   * caller retries later) and the adoption is tried again.
   */
  private readonly adopt = sharedUntilFailed(() => this.adoptNow());

  constructor(kc: KubeConfig, private readonly options: ReportWriterOptions) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.now = options.now ?? (() => new Date());
  }

  /** Whether the apiserver serves OpenReports' `reports`; asked at most once per resync interval. */
  async available(): Promise<boolean> {
    const now = this.now().getTime();
    if (this.served && now - this.served.at < this.options.resyncMs) return this.served.value;
    const list = await ifFound(this.api.getAPIResources({ group: REPORT_GROUP, version: REPORT_VERSION }));
    const value = list?.resources.some((r) => r.name === REPORT_PLURAL) ?? false;
    this.setServed(value, now);
    return value;
  }

  /**
   * Brings the namespace's report to what `targets` say, writing only on a change. Returns the report's name, or
   * undefined when there is none: OpenReports is not installed (or the namespace is gone). A write that meets a
   * concurrent change (409) throws: the caller tries again later, from a fresh read.
   */
  async sync(namespace: string, targets: readonly ReportTarget[]): Promise<string | undefined> {
    if (!(await this.available())) return undefined;
    try {
      await this.adopt();
      const mine = this.written.get(namespace);
      const key = await this.options.key?.();
      const report = namespaceReport(namespace, targets, mine, this.now());
      const desired = key ? sealReport(key, report) : report;
      const stored = this.current.has(namespace) ? mine : await this.read(namespace);
      if (!sameReport(stored, desired)) {
        const target = { ...API, namespace, fieldManager: FIELD_MANAGER };
        const resourceVersion = stored?.metadata.resourceVersion;
        const written = resourceVersion
          ? await this.api.replaceNamespacedCustomObject({ ...target, name: REPORT_NAME, body: { ...desired, metadata: { ...desired.metadata, resourceVersion } } })
          : await this.api.createNamespacedCustomObject({ ...target, body: desired });
        this.written.set(namespace, written as Report);
      } else if (stored) {
        this.written.set(namespace, stored); // exactly what loopguard writes there: its own now, whoever created it
      }
      this.current.add(namespace);
      return REPORT_NAME;
    } catch (err) {
      this.current.delete(namespace);
      return this.absorbNotFound(err);
    }
  }

  /** Deletes loopguard's report (written by this process, or adopted) in every namespace not in `covered`, and nothing else. */
  async prune(covered: ReadonlySet<string>): Promise<void> {
    if (!(await this.available())) return;
    try {
      await this.adopt();
    } catch (err) {
      this.absorbNotFound(err);
      return;
    }
    for (const [namespace, report] of [...this.written]) {
      if (covered.has(namespace)) continue;
      try {
        await this.api.deleteNamespacedCustomObject({ ...API, namespace, name: REPORT_NAME, body: { preconditions: { uid: report.metadata.uid ?? '' } } });
      } catch (err) {
        // 404: already gone (or OpenReports with it); 409: the uid differs, so the object there now is someone else's.
        if (notFound(err) === undefined && kubeStatus(err) !== 409) throw err;
      }
      this.written.delete(namespace);
      this.current.delete(namespace);
    }
  }

  private async adoptNow(): Promise<void> {
    const key = await this.options.key?.();
    if (!key) return;
    const selectors = { fieldSelector: `metadata.name=${REPORT_NAME}`, labelSelector: `${MANAGED_BY_LABEL}=${REPORT_LABELS[MANAGED_BY_LABEL]}` };
    const list = (page: ListPage) => this.api.listClusterCustomObject({ ...API, ...selectors, ...page }) as Promise<KubernetesListObject<Report>>;
    for (const report of (await listInPages(list, (r) => r, LIST_PAGE)).items) {
      const namespace = report.metadata.namespace;
      // A report this process wrote already is newer than what the list may show.
      if (namespace && !this.written.has(namespace) && sealedByLoopguard(key, { ...report, apiVersion: report.apiVersion ?? REPORT_API_VERSION, kind: report.kind ?? REPORT_KIND })) {
        this.written.set(namespace, report);
      }
    }
  }

  private async read(namespace: string): Promise<Report | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ ...API, namespace, name: REPORT_NAME })) as Report;
    } catch (err) {
      if (notFound(err) === 'report') return undefined;
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
      const installed = `OpenReports is installed: writing a Report "${REPORT_NAME}" in each namespace a policy covers`;
      this.options.logger?.info(value ? installed : `OpenReports (${REPORT_GROUP}/${REPORT_VERSION} ${REPORT_PLURAL}) is not installed: no per-namespace reports; checked again each resync`);
    }
    // A new answer, or the same one again after a resync: what is stored may have changed either way.
    this.current.clear();
    this.served = { value, at };
  }
}
