// One OpenReports Report per namespace, fed by every policy that governs targets there (docs/reports.md), written by
// this controller's own keys on the shared work queue (`Report/<namespace>`, `Report/*` for the prune; docs/architecture.md
// §5 "Work follows change"): a key reads what the policies say there now, so a round hands nothing over and never waits.
import type { ReportWriter } from '../../kube/report-writer.js';
import type { ReportTarget } from '../../model/namespace-report.js';
import type { OwnerKey } from '../../model/record-registry.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';

/** The work queue's keys of this controller: no namespace or owner key starts with an upper-case letter but `ClusterLoopbackPolicy/`. */
const KEY_PREFIX = 'Report/';
/** Deletes loopguard's reports in namespaces no policy governs any more. */
export const PRUNE_KEY = `${KEY_PREFIX}*`;

export const reportKey = (namespace: string): string => `${KEY_PREFIX}${namespace}`;
export const isReportKey = (key: string): boolean => key.startsWith(KEY_PREFIX);

export class NamespaceReports {
  private readonly written = new Map<string, string>();
  /** Each namespace's report name as last written (a cluster policy's status shows them): only `note` changes one, and tells `namesChanged`. */
  readonly names: ReadonlyMap<string, string> = this.written;

  constructor(
    private readonly writer: Pick<ReportWriter, 'sync' | 'prune' | 'available'>,
    /** Per policy covering the namespace, its results there (namespaceResults); undefined while one is held. */
    private readonly results: (namespace: string) => ReadonlyMap<OwnerKey, readonly ReportTarget[]> | undefined,
    /** Every namespace a policy covers (reportedNamespaces); undefined while one is held. */
    private readonly covered: () => ReadonlySet<string> | undefined,
    private readonly queue: { add(key: string): void },
    /** The writer's resync: how often the prune comes back. */
    private readonly resyncMs: number,
    /**
     * A namespace's report name changed: its first write in this process, a write that found the namespace gone, a
     * prune. A cluster policy's status names the reports (`byNamespace[].report`), so the cluster policies come back
     * to say so (routing.ts).
     */
    private readonly namesChanged: () => void = () => undefined,
  ) {}

  /**
   * A policy's round changed the outcomes of its targets in `namespaces` (or it is gone); `coverage`: which namespaces
   * it covers may have changed too (its first round, its spec, a namespace's labels): the prune looks again.
   */
  changed(namespaces: Iterable<string>, coverage: boolean): void {
    for (const ns of namespaces) this.queue.add(reportKey(ns));
    if (coverage) this.queue.add(PRUNE_KEY);
  }

  /** The queue's handler for `key` (reportKey or PRUNE_KEY). A failed write throws: the queue retries it with backoff. */
  async reconcile(key: string): Promise<ReconcileOutcome | void> {
    // Without OpenReports (asked at most once per resync) nothing is built; removed, the reports went with it.
    if (!(await this.writer.available())) {
      for (const ns of [...this.names.keys()]) this.note(ns, undefined);
      return key === PRUNE_KEY ? { requeueAfterMs: this.resyncMs } : undefined;
    }
    if (key === PRUNE_KEY) {
      const covered = this.covered();
      // Held (a live policy not planned yet): its first round queues the prune; a policy whose rounds keep failing
      // must not keep every stale report forever, so the prune comes back at the resync as well.
      if (!covered) return { requeueAfterMs: this.resyncMs };
      await this.writer.prune(covered);
      for (const ns of [...this.names.keys()]) if (!covered.has(ns)) this.note(ns, undefined);
      for (const ns of covered) this.queue.add(reportKey(ns));
      return { requeueAfterMs: this.resyncMs };
    }
    const ns = key.slice(KEY_PREFIX.length);
    const parts = this.results(ns);
    if (!parts) return;
    // Every policy left the namespace: the prune removes its report (only one loopguard wrote: report-writer.ts).
    if (parts.size === 0) this.queue.add(PRUNE_KEY);
    else this.note(ns, await this.writer.sync(ns, [...parts.values()].flat()));
  }

  private note(ns: string, name: string | undefined): void {
    if (this.names.get(ns) === name) return;
    if (name === undefined) this.written.delete(ns);
    else this.written.set(ns, name);
    this.namesChanged();
  }
}
