// Restart without re-reading the world: the leader's checkpoint of its ClbObserver's cache, written while it leads
// and at graceful shutdown, seeded into a new leader's observer (docs/execution.md "Restart": what is trusted, for how
// long, and the key that seals it). Nothing here is needed for correctness: any failure is logged and the leader
// starts cold, as it would without a checkpoint.
import { createHash } from 'node:crypto';
import type { ClbObserver } from '../cloud/clb-observer.js';
import { decodeCheckpoint, encodeCheckpoint, MAX_PARTS, openCheckpoint, sealCheckpoint, splitParts, type CheckpointEntry } from '../cloud/observation-checkpoint.js';
import type { ObservationStore } from '../kube/observation-store.js';
import { kubeErrorMessage } from '../runtime/kube-errors.js';
import { settlesWithin } from '../runtime/settle.js';
import type { DriftScheduler } from './drift-signal.js';

/** How long a new leader waits for the checkpoint before it starts cold (ms). */
const RESTORE_TIMEOUT_MS = 10_000;

export interface CheckpointerOptions {
  observer: Pick<ClbObserver, 'seed' | 'entries'>;
  store: Pick<ObservationStore, 'load' | 'save' | 'key'>;
  region: string;
  /**
   * The drift schedule: an entry is trusted for one full re-read cycle over the checkpoint's CLBs (longer than the
   * drift interval beyond a few hundred CLBs).
   */
  scheduler: Pick<DriftScheduler, 'intervalMs' | 'fullIntervalMs'>;
  logger: { info(message: string, extra?: Record<string, unknown>): void; warn(message: string, extra?: Record<string, unknown>): void };
  /** Only the leader writes. */
  mayWrite: () => boolean;
  now?: () => number;
}

export class Checkpointer {
  private timer: NodeJS.Timeout | undefined;
  private lastHash = '';
  private saving: Promise<void> | undefined;

  constructor(private readonly o: CheckpointerOptions) {}

  /**
   * Seeds the observer from the stored checkpoint and returns the entries seeded (ObservationUpkeep spreads their
   * health checks); never throws (a bad or missing checkpoint means a cold start, and none).
   */
  async restore(): Promise<readonly CheckpointEntry[]> {
    const now = this.o.now ?? Date.now;
    const maxAgeMs = (clbs: number) => this.o.scheduler.fullIntervalMs(clbs);
    try {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${RESTORE_TIMEOUT_MS} ms`)), RESTORE_TIMEOUT_MS)));
      const loaded = await Promise.race([this.o.store.load(), timeout]).finally(() => clearTimeout(timer));
      if ('absent' in loaded) {
        this.o.logger.info('No observation checkpoint: every CLB is read before its targets are judged');
        return [];
      }
      const opened = 'problem' in loaded ? loaded : openCheckpoint(await this.o.store.key(), Buffer.concat(loaded.parts));
      const decoded = 'problem' in opened ? opened : decodeCheckpoint([opened], { region: this.o.region, now: now(), maxAgeMs });
      if ('problem' in decoded) {
        this.o.logger.warn('Ignoring the observation checkpoint; every CLB is read before its targets are judged', { problem: decoded.problem });
        return [];
      }
      const seeded = this.o.observer.seed(decoded.entries, maxAgeMs(decoded.entries.length + decoded.expired));
      this.o.logger.info('Observation checkpoint loaded: converged CLBs are read again on the drift schedule, and before any write', {
        seeded,
        expired: decoded.expired,
        writtenAgoMs: now() - decoded.writtenAt,
      });
      return decoded.entries;
    } catch (err) {
      this.o.logger.warn('Could not read the observation checkpoint; every CLB is read before its targets are judged', { error: kubeErrorMessage(err) });
      return [];
    }
  }

  /** Writes a few times per drift interval: at most once a minute, at least 5 s apart. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.save(), Math.min(60_000, Math.max(5_000, this.o.scheduler.intervalMs / 4)));
    this.timer.unref();
  }

  /**
   * Stops the periodic writes and writes once more (shutdown, after the drain, while still leading). Bounded: an
   * unreachable apiserver must not hold the Lease (the successor then starts from the last periodic checkpoint).
   */
  async stop(boundMs: number): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const last = (async () => {
      await this.saving;
      await this.save();
    })();
    await settlesWithin(last, boundMs);
  }

  /** Writes the checkpoint if this replica leads and the observer's cache changed since the last write. */
  async save(): Promise<void> {
    if (this.saving || !this.o.mayWrite()) return;
    this.saving = this.write().finally(() => (this.saving = undefined));
    await this.saving;
  }

  private async write(): Promise<void> {
    const entries: CheckpointEntry[] = [];
    for (const e of this.o.observer.entries()) if (e.observation.state !== 'NotObserved') entries.push({ id: e.id, at: e.at, observation: e.observation });
    if (entries.length === 0) return;
    const hash = createHash('sha256').update(JSON.stringify(entries)).digest('hex');
    if (hash === this.lastHash) return;
    const writtenAt = (this.o.now ?? Date.now)();
    try {
      const parts = splitParts(sealCheckpoint(await this.o.store.key(), encodeCheckpoint(this.o.region, writtenAt, entries)));
      if (parts.length > MAX_PARTS) {
        this.o.logger.warn('The observation checkpoint is too large to store; a new leader will read every CLB', { clbs: entries.length, parts: parts.length, maxParts: MAX_PARTS });
        this.lastHash = hash;
        return;
      }
      await this.o.store.save(parts, `${writtenAt}-${hash.slice(0, 12)}`);
      this.lastHash = hash;
    } catch (err) {
      this.o.logger.warn('Could not write the observation checkpoint; tried again later', { error: kubeErrorMessage(err) });
    }
  }
}
