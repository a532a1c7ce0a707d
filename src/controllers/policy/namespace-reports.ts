// One OpenReports Report per namespace, fed by every policy that governs targets there (docs/reports.md):
// a tenant reads one place, whether a cluster policy or the namespace's own LoopbackPolicy manages a target. Each
// policy's round publishes its results per namespace; the namespace's report is the union of what every policy
// published last (report-writer.ts writes it only when it changes). A conflict is reported by the policy that manages
// the target, so a loser's PolicyConflict/PolicyPrecedence never reaches the report.
import type { ReportWriter } from '../../kube/report-writer.js';
import type { ReportTarget } from '../../model/namespace-report.js';
import type { OwnerKey } from '../../model/record-registry.js';
import type { Logger } from '../../runtime/logger.js';

const LOST_CONFLICTS = new Set(['PolicyConflict', 'PolicyPrecedence']);
/** The backoff of writing reports again after a failure: doubled per failed attempt up to the maximum. */
export const RETRY_MIN_MS = 5_000;
export const RETRY_MAX_MS = 5 * 60_000;

export class NamespaceReports {
  /** Namespace → owner → that policy's last results there ([] = it covers the namespace, no target). */
  private readonly byNamespace = new Map<string, Map<OwnerKey, readonly ReportTarget[]>>();
  /** Namespaces each owner published last. */
  private readonly published = new Map<OwnerKey, ReadonlySet<string>>();
  /**
   * Whether the last prune owed went through: a prune removes the report of a namespace every policy left (only a
   * report loopguard wrote, by this process or sealed by an earlier one: report-writer.ts). A failed one is owed still.
   */
  private pruned = false;
  /** Owners forgotten while the cache may still list them (a deleted policy until its last event arrives). */
  private readonly gone = new Set<OwnerKey>();
  /**
   * Namespaces whose report waits until every policy has published once: written earlier, a new process's first
   * round would write each report with only some policies' parts, then again with all of them.
   */
  private readonly waiting = new Set<string>();
  /** Namespaces whose last write failed: written again with the next write once `retryAt` has passed. */
  private readonly failed = new Set<string>();
  private retryAt = 0;
  private backoffMs = RETRY_MIN_MS;
  /** The write in progress (writes are serialized). */
  private writing: Promise<unknown> = Promise.resolve();
  /** The retry in progress: callers meanwhile share it instead of queueing one write each. */
  private retrying: Promise<void> | undefined;
  /** Each namespace's report as last written (its name): a change is told to `namesChanged`. */
  private readonly written = new Map<string, string>();

  constructor(
    private readonly writer: Pick<ReportWriter, 'sync' | 'prune' | 'available'>,
    private readonly logger: Pick<Logger, 'warn'>,
    /**
     * Every policy that exists now and is not being deleted, by owner key. Reports are written and pruned only once
     * each has published: before that (a new process), a namespace may belong to a policy not reconciled yet.
     */
    private readonly owners: () => readonly OwnerKey[],
    /**
     * A namespace's report name changed: its first write in this process, a write after one that failed or was held
     * back (not every policy published yet), a write that found the namespace gone, a prune. A cluster policy's status
     * names the reports (`byNamespace[].report`), so the cluster policies come back to say so (routing.ts).
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
   * `owner`'s results in each namespace it governs (every covered namespace, even without targets). Returns the
   * namespaces' report names (where one was written). A failure is logged: reports are a view, the round stands; a
   * namespace whose write failed is written again by a later publish or `retry`, after a backoff.
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
   * Writes again, without a round, the reports whose write failed (and a prune still owed) from the results kept:
   * a converged policy has no round until something changes (the drift checks' passes call this).
   * At most once per backoff (RETRY_MIN_MS doubling to RETRY_MAX_MS while writes keep failing); concurrent callers
   * share one. Never rejects; its callers do not wait for it.
   */
  retry(now?: number): Promise<void> {
    if (this.retrying) return this.retrying;
    if (!(this.failed.size > 0 || (!this.pruned && this.published.size > 0)) || (now ?? Date.now()) < this.retryAt) return Promise.resolve();
    const run = this.write(new Set(), now).then(
      () => undefined,
      (err: unknown) => {
        this.logger.warn("Could not write the namespaces' reports; retrying", { error: err instanceof Error ? err.message : String(err) });
      },
    );
    const shared = run.finally(() => (this.retrying = undefined));
    this.retrying = shared;
    return shared;
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

  /** One write at a time: two policies' rounds (or a round and a retry) must not prune from different views. */
  private write(touched: ReadonlySet<string>, now?: number): Promise<Map<string, string>> {
    // The time it runs, not when it was queued: a namespace whose backoff ended meanwhile is written with it.
    const run = this.writing.then(() => this.writeNow(touched, now ?? Date.now()));
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async writeNow(touched: ReadonlySet<string>, now: number): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const everyone = this.owners().every((o) => this.published.has(o) || this.gone.has(o));
    if (!everyone) {
      // Held back, so left out of the names returned: counted as a change when the write that ends the wait comes.
      for (const ns of touched) {
        this.waiting.add(ns);
        this.written.delete(ns);
      }
      return names;
    }
    // A namespace whose write keeps failing (terminating, a webhook's refusal) is tried with the others, never before
    // them in a way that could hold them back, and again only when its backoff is over.
    const namespaces = new Set([...this.waiting, ...touched, ...(now >= this.retryAt ? this.failed : [])]);
    this.waiting.clear();
    const errors: string[] = [];
    for (const ns of namespaces) {
      const entries = this.byNamespace.get(ns);
      try {
        if (entries) {
          const name = await this.writer.sync(ns, [...entries.values()].flat());
          if (name) names.set(ns, name);
          this.note(ns, name);
        }
        this.failed.delete(ns);
      } catch (err) {
        this.failed.add(ns);
        // Left out of the names this write returns: counted as a change when a later write gets it through.
        this.written.delete(ns);
        errors.push(`${ns}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const lost = [...namespaces].some((ns) => !this.byNamespace.has(ns));
    if (lost || !this.pruned) {
      this.pruned = false;
      try {
        await this.writer.prune(new Set(this.byNamespace.keys()));
        this.pruned = true;
        for (const ns of [...this.written.keys()]) if (!this.byNamespace.has(ns)) this.note(ns, undefined);
      } catch (err) {
        errors.push(`prune: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (errors.length > 0) {
      this.logger.warn("Could not write the namespaces' reports; retrying", { failed: errors.length, errors: errors.slice(0, 3), retryInMs: this.backoffMs });
      this.retryAt = now + this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, RETRY_MAX_MS);
    } else if (this.failed.size === 0) {
      this.retryAt = 0;
      this.backoffMs = RETRY_MIN_MS;
    }
    return names;
  }

  private note(ns: string, name: string | undefined): void {
    if (this.written.get(ns) === name) return;
    if (name === undefined) this.written.delete(ns);
    else this.written.set(ns, name);
    this.namesChanged();
  }
}
