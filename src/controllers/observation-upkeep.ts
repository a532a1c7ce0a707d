// The leader's upkeep of what it remembers of CLBs (the observer's cache and the drift signal's baselines), besides
// using it. The observation checkpoint (docs/execution.md "Restart": what is trusted, for how long, and the key that
// seals it) is restored when it starts leading, its CLBs' health checks spread over the signal interval
// (HealthSignal.spread says why), and written while it leads and at graceful shutdown; nothing of it is needed for
// correctness: any failure is logged and the leader starts cold. Every drift interval, the CLBs that no current Service
// or Ingress names and no round has asked for in SWEEP_AFTER_CYCLES full re-read cycles are forgotten, by the
// observer's rule (ClbObserver.sweep: when a round last asked), the signal's baselines with them: those of deleted
// Services and Ingresses, or of targets no policy selects any more, which would otherwise stay for the life of the
// process and in every checkpoint.
import { createHash } from 'node:crypto';
import type { ClbObserver } from '../cloud/clb-observer.js';
import type { HealthSignal } from '../cloud/health-signal.js';
import { decodeCheckpoint, encodeCheckpoint, MAX_PARTS, openCheckpoint, sealCheckpoint, splitParts, type CheckpointEntry } from '../cloud/observation-checkpoint.js';
import type { ObservationStore } from '../kube/observation-store.js';
import { boundLoadBalancerId } from '../model/target-facts.js';
import { kubeErrorMessage } from '../runtime/kube-errors.js';
import { settlesWithin } from '../runtime/settle.js';
import { signalIntervalMs, type DriftScheduler } from './drift-signal.js';

/** Full re-read cycles without a round asking for a CLB before what is known of it is dropped. */
export const SWEEP_AFTER_CYCLES = 3;

/** How long a new leader waits for the checkpoint before it starts cold (ms). */
const RESTORE_TIMEOUT_MS = 10_000;

type Annotated = { metadata?: { annotations?: Record<string, string> } };

/** The CLB ids the cluster's Services and Ingresses name (their TKE annotations, as target-facts.ts reads them). */
export function namedClbs(services: readonly Annotated[], ingresses: readonly Annotated[]): Set<string> {
  const ids = [...services.map((o) => boundLoadBalancerId(o.metadata?.annotations, 'Service')), ...ingresses.map((o) => boundLoadBalancerId(o.metadata?.annotations, 'Ingress'))];
  return new Set(ids.filter((id): id is string => id !== undefined));
}

type Log = (message: string, extra?: Record<string, unknown>) => void;

export interface ObservationUpkeepOptions {
  observer: Pick<ClbObserver, 'sweep' | 'seed' | 'entries'>;
  signal: Pick<HealthSignal, 'spread' | 'forget'>;
  /**
   * The drift interval (how often it sweeps) and the full re-read cycle now (the one the drift checks run on): a
   * checkpoint's entry is trusted for one such cycle over its CLBs (longer than the interval beyond a few hundred).
   */
  scheduler: Pick<DriftScheduler, 'fullIntervalMs' | 'intervalMs'>;
  /** The CLB ids the cluster's current Services and Ingresses name (from the informer caches): never forgotten. */
  named: () => ReadonlySet<string>;
  logger: { debug: Log; info: Log; warn: Log };
  /** Absent: --observation-checkpoint=false. Only the leader writes (`mayWrite`). */
  checkpoint?: { store: Pick<ObservationStore, 'load' | 'save' | 'key'>; region: string; mayWrite: () => boolean };
  now?: () => number;
}

export class ObservationUpkeep {
  private timers: NodeJS.Timeout[] = [];
  private lastHash = '';
  private saving: Promise<void> | undefined;

  constructor(private readonly o: ObservationUpkeepOptions) {}

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  /**
   * Before the first round of a new leader: seeds the observer from the checkpoint and spreads the health checks of
   * the CLBs seeded that the signal serves (found, not classic); returns the entries seeded. Never throws (a bad or
   * missing checkpoint means a cold start, and none).
   */
  async restore(): Promise<readonly CheckpointEntry[]> {
    const seeded = this.o.checkpoint ? await this.seed(this.o.checkpoint) : [];
    const checked = seeded.filter((e) => e.observation.state === 'Found' && e.observation.clb.forward !== 0);
    this.o.signal.spread(checked, this.now(), signalIntervalMs(this.o.scheduler.intervalMs));
    return seeded;
  }

  private async seed(c: NonNullable<ObservationUpkeepOptions['checkpoint']>): Promise<readonly CheckpointEntry[]> {
    const maxAgeMs = (clbs: number) => this.o.scheduler.fullIntervalMs(clbs);
    try {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${RESTORE_TIMEOUT_MS} ms`)), RESTORE_TIMEOUT_MS)));
      const loaded = await Promise.race([c.store.load(), timeout]).finally(() => clearTimeout(timer));
      if ('absent' in loaded) {
        this.o.logger.info('No observation checkpoint: every CLB is read before its targets are judged');
        return [];
      }
      const opened = 'problem' in loaded ? loaded : openCheckpoint(await c.store.key(), Buffer.concat(loaded.parts));
      const decoded = 'problem' in opened ? opened : decodeCheckpoint([opened], { region: c.region, now: this.now(), maxAgeMs });
      if ('problem' in decoded) {
        this.o.logger.warn('Ignoring the observation checkpoint; every CLB is read before its targets are judged', { problem: decoded.problem });
        return [];
      }
      const seeded = this.o.observer.seed(decoded.entries, maxAgeMs(decoded.entries.length + decoded.expired));
      this.o.logger.info('Observation checkpoint loaded: converged CLBs are read again on the drift schedule, and before any write', {
        seeded,
        expired: decoded.expired,
        writtenAgoMs: this.now() - decoded.writtenAt,
      });
      return decoded.entries;
    } catch (err) {
      this.o.logger.warn('Could not read the observation checkpoint; every CLB is read before its targets are judged', { error: kubeErrorMessage(err) });
      return [];
    }
  }

  /** While leading: the sweeps, and the checkpoint written a few times per drift interval (at most once a minute, at least 5 s apart). */
  start(): void {
    if (this.timers.length > 0) return;
    this.timers.push(setInterval(() => this.sweep(), this.o.scheduler.intervalMs).unref());
    if (this.o.checkpoint) this.timers.push(setInterval(() => void this.save(), Math.min(60_000, Math.max(5_000, this.o.scheduler.intervalMs / 4))).unref());
  }

  /**
   * Shutdown, after the drain, while still leading: no more sweeps, and the checkpoint written once more. Bounded by
   * `boundMs`: an unreachable apiserver must not hold the Lease (the successor starts from the last periodic write).
   */
  async stop(boundMs: number): Promise<void> {
    for (const t of this.timers.splice(0)) clearInterval(t);
    if (!this.o.checkpoint) return;
    const last = (async () => {
      await this.saving;
      await this.save();
    })();
    await settlesWithin(last, boundMs);
  }

  /** Forgets the CLBs no round asked for in SWEEP_AFTER_CYCLES full cycles; returns how many. */
  sweep(): number {
    const named = this.o.named();
    const dropped = this.o.observer.sweep(this.now() - SWEEP_AFTER_CYCLES * this.o.scheduler.fullIntervalMs(), (id) => named.has(id));
    this.o.signal.forget(dropped);
    if (dropped.length > 0) this.o.logger.debug('Forgot CLBs no policy names any more', { clbs: dropped.length, first: dropped.slice(0, 3) });
    return dropped.length;
  }

  /** Writes the checkpoint if there is one, this replica leads, and the observer's cache changed since the last write. */
  async save(): Promise<void> {
    const c = this.o.checkpoint;
    if (!c || this.saving || !c.mayWrite()) return;
    this.saving = this.write(c).finally(() => (this.saving = undefined));
    await this.saving;
  }

  private async write(c: NonNullable<ObservationUpkeepOptions['checkpoint']>): Promise<void> {
    const entries: CheckpointEntry[] = [];
    for (const e of this.o.observer.entries()) if (e.observation.state !== 'NotObserved') entries.push({ id: e.id, at: e.at, observation: e.observation });
    if (entries.length === 0) return;
    const hash = createHash('sha256').update(JSON.stringify(entries)).digest('hex');
    if (hash === this.lastHash) return;
    const writtenAt = this.now();
    try {
      const parts = splitParts(sealCheckpoint(await c.store.key(), encodeCheckpoint(c.region, writtenAt, entries)));
      if (parts.length > MAX_PARTS) {
        this.o.logger.warn('The observation checkpoint is too large to store; a new leader will read every CLB', { clbs: entries.length, parts: parts.length, maxParts: MAX_PARTS });
        this.lastHash = hash;
        return;
      }
      await c.store.save(parts, `${writtenAt}-${hash.slice(0, 12)}`);
      this.lastHash = hash;
    } catch (err) {
      this.o.logger.warn('Could not write the observation checkpoint; tried again later', { error: kubeErrorMessage(err) });
    }
  }
}
