// One OpenReports Report per namespace, fed by every policy that governs targets there (docs/reports.md): a tenant
// reads one place, whether a cluster policy or the namespace's own LoopbackPolicy manages a target. Each policy's
// round publishes its results per namespace; the namespace's report is the union of what every policy published last.
// Writing is this controller's own work on the shared work queue, keyed by namespace (`Report/<namespace>`, and
// `Report/*` for the prune): a policy's round never waits on a report, a failed write is the queue's retry with its
// backoff, and report-writer.ts writes only when the stored report differs. A conflict is reported by the policy that
// manages the target, so a loser's PolicyConflict/PolicyPrecedence never reaches the report.
import type { ReportWriter } from '../../kube/report-writer.js';
import type { ReportTarget } from '../../model/namespace-report.js';
import type { OwnerKey } from '../../model/record-registry.js';
import type { Logger } from '../../runtime/logger.js';

const LOST_CONFLICTS = new Set(['PolicyConflict', 'PolicyPrecedence']);

/** The work queue's keys of this controller: no namespace or owner key starts with an upper-case letter but `ClusterLoopbackPolicy/`. */
const KEY_PREFIX = 'Report/';
/** Deletes loopguard's reports in namespaces no policy governs any more. */
export const PRUNE_KEY = `${KEY_PREFIX}*`;

export function reportKey(namespace: string): string {
  return `${KEY_PREFIX}${namespace}`;
}

export function isReportKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX);
}

export class NamespaceReports {
  /** Namespace → owner → that policy's last results there ([] = it covers the namespace, no target). */
  private readonly byNamespace = new Map<string, Map<OwnerKey, readonly ReportTarget[]>>();
  /** Namespaces each owner published last. */
  private readonly published = new Map<OwnerKey, ReadonlySet<string>>();
  /** Owners forgotten while the cache may still list them (a deleted policy until its last event arrives). */
  private readonly gone = new Set<OwnerKey>();
  /**
   * Keys that came up before every policy had published (a new process): written then, a namespace's report would
   * have only some policies' parts, and the prune would remove the report of a namespace a policy not reconciled yet
   * governs. Queued again when the last one has published; the first prune waits here from the start.
   */
  private readonly held = new Set<string>([PRUNE_KEY]);
  /** Each namespace's report as last written (its name): a change is told to `namesChanged`. */
  private readonly written = new Map<string, string>();

  constructor(
    private readonly writer: Pick<ReportWriter, 'sync' | 'prune' | 'available'>,
    private readonly logger: Pick<Logger, 'warn'>,
    /** Every policy that exists now and is not being deleted, by owner key. */
    private readonly owners: () => readonly OwnerKey[],
    private readonly queue: { add(key: string): void },
    /**
     * A namespace's report name changed: its first write in this process, a write that found the namespace gone, a
     * prune. A cluster policy's status names the reports (`byNamespace[].report`), so the cluster policies come back
     * to say so (routing.ts).
     */
    private readonly namesChanged: () => void = () => undefined,
  ) {}

  /** Whether OpenReports is installed (asked at most once per resync): without it nothing is gathered or kept. */
  async enabled(): Promise<boolean> {
    try {
      return await this.writer.available();
    } catch (err) {
      this.logger.warn('Could not tell whether OpenReports is installed', { error: err instanceof Error ? err.message : String(err) });
      return false;
    }
  }

  /**
   * `owner`'s results in each namespace it governs (every covered namespace, even without targets); their reports are
   * queued. Returns the names of those namespaces' reports as last written.
   */
  publish(owner: OwnerKey, results: ReadonlyMap<string, readonly ReportTarget[]>): Map<string, string> {
    const before = this.published.get(owner) ?? new Set<string>();
    this.published.set(owner, new Set(results.keys()));
    this.gone.delete(owner);
    for (const ns of before) if (!results.has(ns)) this.drop(ns, owner);
    for (const [ns, targets] of results) {
      const entries = this.byNamespace.get(ns) ?? new Map<OwnerKey, readonly ReportTarget[]>();
      entries.set(owner, targets.filter((t) => !LOST_CONFLICTS.has(t.rootCause)));
      this.byNamespace.set(ns, entries);
    }
    this.changed(new Set([...before, ...results.keys()]));
    return new Map([...results.keys()].flatMap((ns) => (this.written.has(ns) ? [[ns, this.written.get(ns) as string] as const] : [])));
  }

  /** The policy is gone: its results leave every report. */
  forget(owner: OwnerKey): void {
    const before = this.published.get(owner);
    if (!before) return;
    this.published.delete(owner);
    this.gone.add(owner);
    for (const ns of before) this.drop(ns, owner);
    this.changed(before);
  }

  /** The queue's handler for `key` (reportKey or PRUNE_KEY). A failed write throws: the queue retries it with backoff. */
  async reconcile(key: string): Promise<void> {
    if (!this.owners().every((o) => this.published.has(o) || this.gone.has(o))) {
      this.held.add(key);
      return;
    }
    if (key === PRUNE_KEY) {
      const covered = new Set(this.byNamespace.keys());
      await this.writer.prune(covered);
      for (const ns of [...this.written.keys()]) if (!this.byNamespace.has(ns)) this.note(ns, undefined);
      // A namespace covered again while the prune ran may have lost the report written meanwhile: written again.
      for (const ns of this.byNamespace.keys()) if (!covered.has(ns)) this.queue.add(reportKey(ns));
      return;
    }
    const ns = key.slice(KEY_PREFIX.length);
    const entries = this.byNamespace.get(ns);
    // Every policy left the namespace: the prune removes its report (only one loopguard wrote: report-writer.ts).
    if (!entries) this.queue.add(PRUNE_KEY);
    else this.note(ns, await this.writer.sync(ns, [...entries.values()].flat()));
  }

  private changed(namespaces: ReadonlySet<string>): void {
    for (const ns of namespaces) this.queue.add(reportKey(ns));
    if (this.held.size > 0 && this.owners().every((o) => this.published.has(o) || this.gone.has(o))) {
      for (const key of this.held) this.queue.add(key);
      this.held.clear();
    }
  }

  private drop(ns: string, owner: OwnerKey): void {
    const entries = this.byNamespace.get(ns);
    entries?.delete(owner);
    if (entries?.size === 0) this.byNamespace.delete(ns);
  }

  private note(ns: string, name: string | undefined): void {
    if (this.written.get(ns) === name) return;
    if (name === undefined) this.written.delete(ns);
    else this.written.set(ns, name);
    this.namesChanged();
  }
}
