// One OpenReports Report per namespace, fed by every policy that governs targets there (docs/cluster-policy.md §8):
// a tenant reads one place, whether a cluster policy or the namespace's own LoopbackPolicy manages a target. Each
// policy's round publishes its results per namespace; the namespace's report is the union of what every policy
// published last (report-writer.ts writes it only when it changes). A conflict is reported by the policy that manages
// the target, so a loser's PolicyConflict/PolicyPrecedence never reaches the report.
import type { ReportWriter } from '../../kube/report-writer.js';
import type { ReportTarget } from '../../model/namespace-report.js';
import type { OwnerKey } from '../../model/record-registry.js';
import type { Logger } from '../../runtime/logger.js';

const LOST_CONFLICTS = new Set(['PolicyConflict', 'PolicyPrecedence']);

export class NamespaceReports {
  /** Namespace → owner → that policy's last results there ([] = it covers the namespace, no target). */
  private readonly byNamespace = new Map<string, Map<OwnerKey, readonly ReportTarget[]>>();
  /** Namespaces each owner published last. */
  private readonly published = new Map<OwnerKey, ReadonlySet<string>>();
  /**
   * Whether the last prune owed went through: the first one removes the reports an earlier process left (namespaces
   * no policy governs any more), later ones the report of a namespace every policy left. A failed one is owed still.
   */
  private pruned = false;
  /** Owners forgotten while the cache may still list them (a deleted policy until its last event arrives). */
  private readonly gone = new Set<OwnerKey>();
  /**
   * Namespaces whose report waits until every policy has published once: written earlier, a new process's first
   * round would write each report with only some policies' parts, then again with all of them.
   */
  private readonly waiting = new Set<string>();

  constructor(
    private readonly writer: Pick<ReportWriter, 'sync' | 'prune' | 'available'>,
    private readonly logger: Pick<Logger, 'warn'>,
    /**
     * Every policy that exists now and is not being deleted, by owner key. Reports are written and pruned only once
     * each has published: before that (a new process), a namespace may belong to a policy not reconciled yet.
     */
    private readonly owners: () => readonly OwnerKey[],
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
   * `owner`'s results in each namespace it governs (every covered namespace, even without targets). Returns the
   * namespaces' report names (where one was written). A failure is logged: reports are a view, the round stands; the
   * namespaces not written are written on the next publish or `retry`.
   */
  async publish(owner: OwnerKey, results: ReadonlyMap<string, readonly ReportTarget[]>): Promise<Map<string, string>> {
    const before = this.published.get(owner) ?? new Set<string>();
    this.published.set(owner, new Set(results.keys()));
    this.gone.delete(owner);
    for (const ns of before) if (!results.has(ns)) this.drop(ns, owner);
    for (const [ns, targets] of results) {
      const entries = this.byNamespace.get(ns) ?? new Map<OwnerKey, readonly ReportTarget[]>();
      entries.set(owner, targets.filter((t) => !LOST_CONFLICTS.has(t.rootCause)));
      this.byNamespace.set(ns, entries);
    }
    const touched = new Set([...before, ...results.keys()]);
    return this.write(touched);
  }

  /**
   * Writes what a failed write left (and a prune still owed) from the results kept, without a round: a quiet round
   * (quiet.ts) publishes nothing, so a failure would otherwise wait for the drift interval's full round.
   */
  async retry(): Promise<void> {
    if (this.waiting.size > 0 || (!this.pruned && this.published.size > 0)) await this.write(new Set());
  }

  /** The policy is gone: its results leave every report. */
  async forget(owner: OwnerKey): Promise<void> {
    const before = this.published.get(owner);
    if (!before) return;
    this.published.delete(owner);
    this.gone.add(owner);
    for (const ns of before) this.drop(ns, owner);
    await this.write(before);
  }

  private drop(ns: string, owner: OwnerKey): void {
    const entries = this.byNamespace.get(ns);
    entries?.delete(owner);
    if (entries?.size === 0) this.byNamespace.delete(ns);
  }

  private async write(touched: ReadonlySet<string>): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const everyone = this.owners().every((o) => this.published.has(o) || this.gone.has(o));
    if (!everyone) {
      for (const ns of touched) this.waiting.add(ns);
      return names;
    }
    const namespaces = new Set([...this.waiting, ...touched]);
    this.waiting.clear();
    const left = new Set(namespaces);
    try {
      for (const ns of namespaces) {
        const entries = this.byNamespace.get(ns);
        if (entries) {
          const name = await this.writer.sync(ns, [...entries.values()].flat());
          if (name) names.set(ns, name);
        }
        left.delete(ns);
      }
      const lost = [...namespaces].some((ns) => !this.byNamespace.has(ns));
      if (lost || !this.pruned) {
        this.pruned = false;
        await this.writer.prune(new Set(this.byNamespace.keys()));
        this.pruned = true;
      }
    } catch (err) {
      this.logger.warn("Could not write the namespaces' reports", { error: err instanceof Error ? err.message : String(err) });
      for (const ns of left) this.waiting.add(ns);
    }
    return names;
  }
}
