// The drift checks, on the CLB side (docs/architecture.md "Drift checks", §3 "The unit of work"): every CLB a policy's
// targets are bound to, on drift-signal.ts's schedule. A read that differs tells the observer's onChange (routing.ts); a
// CLB still overdue after its read failed goes to its policies, whose round reads it and reports the failure.
import { describeCloudError } from '../cloud/index.js';
import type { ClbObserver } from '../cloud/clb-observer.js';
import type { HealthSignal } from '../cloud/health-signal.js';
import type { Logger } from '../runtime/logger.js';
import type { ReconcileOutcome } from '../runtime/work-queue.js';
import { MIN_DRIFT_ROUND_MS, signalled, type DriftScheduler } from './drift-signal.js';

/** The work queue's key for the drift checks (a policy's key always has a "/"). */
export const DRIFT_CHECKS_KEY = 'drift-checks';

export interface DriftChecksOptions {
  observer: Pick<ClbObserver, 'reread' | 'observedAt' | 'cached'>;
  scheduler: DriftScheduler;
  /** The first tier: backend health, whose change can mean drift (drift-signal.ts). */
  health: Pick<HealthSignal, 'check' | 'readAt'>;
  /** Counts each tier's reads (the loopguard_drift_checks_total metric). */
  checked?: (tier: 'health' | 'full' | 'escalated', clbs: number) => void;
  /** The CLBs the policies' targets are bound to now. */
  clbs: () => Iterable<string>;
  /** CLBs whose read failed and that were not read within the full cycle: their policies read them (and report why they could not). */
  overdue: (ids: readonly string[]) => void;
  logger: Pick<Logger, 'info' | 'warn'>;
  stopping?: AbortSignal;
}

export class DriftChecks {
  constructor(private readonly o: DriftChecksOptions) {}

  /** One pass: the reads due, then back when about one batch of either tier is due again. */
  async run(signal: AbortSignal): Promise<ReconcileOutcome> {
    const readAt = new Map<string, number>();
    for (const id of this.o.clbs()) {
      const at = this.o.observer.observedAt(id);
      if (at !== undefined) readAt.set(id, at);
    }
    const due = this.o.scheduler.plan(readAt, signalled(readAt, this.o.observer, this.o.health), Date.now());
    const failed = await this.check(due.full, due.signal, signal);
    const now = Date.now();
    const maxAge = this.o.scheduler.fullIntervalMs();
    const overdue = failed.filter((id) => now - (this.o.observer.observedAt(id) ?? 0) > maxAge);
    if (overdue.length > 0) this.o.overdue(overdue);
    // With no CLB yet (leadership just gained, the first rounds not done), soon: not half an interval on.
    return { requeueAfterMs: readAt.size > 0 ? this.o.scheduler.roundMs(readAt.size) : MIN_DRIFT_ROUND_MS };
  }

  /**
   * The health signal first: its suspects join the full reads due. A failure leaves the cached facts, and the CLBs
   * stay due for the next pass. Returns the CLBs whose full read failed.
   */
  private async check(due: readonly string[], signalled: readonly string[], signal: AbortSignal): Promise<string[]> {
    if ((due.length === 0 && signalled.length === 0) || this.o.stopping?.aborted) return [];
    let suspects = new Map<string, string>();
    try {
      if (signalled.length > 0) suspects = await this.o.health.check(signalled, { signal });
      this.o.checked?.('health', signalled.length);
    } catch (err) {
      if (signal.aborted) throw err;
      const info = describeCloudError(err);
      this.o.logger.warn('Drift signal failed; its CLBs stay due', { clbs: signalled.length, code: info.code, reason: info.reason });
    }
    const ids = [...new Set([...due, ...suspects.keys()])];
    try {
      if (suspects.size > 0) this.o.logger.info('Drift signal: re-reading CLBs in full', { clbs: suspects.size, first: [...suspects].slice(0, 3).map(([id, why]) => `${id} (${why})`) });
      this.o.checked?.('full', due.length);
      this.o.checked?.('escalated', ids.length - due.length);
      if (ids.length > 0) await this.o.observer.reread(ids, signal);
      return [];
    } catch (err) {
      if (signal.aborted) throw err;
      const info = describeCloudError(err);
      this.o.logger.warn('Drift checks failed; the CLBs stay due', { clbs: ids.length, code: info.code, reason: info.reason });
      return ids;
    }
  }
}
