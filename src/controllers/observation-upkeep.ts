// The leader's upkeep of what it remembers of CLBs (the observer's cache and the drift signal's baselines), besides
// using it. The observation checkpoint (checkpointer.ts) is restored when it starts leading and kept while it leads;
// the restored CLBs' health checks are spread over the signal interval (HealthSignal.spread says why). Every drift
// interval, the CLBs that no current Service or Ingress names and no round has asked for in
// SWEEP_AFTER_CYCLES full re-read cycles are forgotten, by the observer's rule (ClbObserver.sweep: when a round last
// asked), the signal's baselines with them: those of deleted Services and Ingresses, or of targets no policy selects
// any more, which would otherwise stay for the life of the process and in every checkpoint.
import type { ClbObserver } from '../cloud/clb-observer.js';
import type { HealthSignal } from '../cloud/health-signal.js';
import type { Checkpointer } from './checkpointer.js';
import { boundLoadBalancerId } from '../model/target-facts.js';
import { signalIntervalMs, type DriftScheduler } from './drift-signal.js';

/** Full re-read cycles without a round asking for a CLB before what is known of it is dropped. */
export const SWEEP_AFTER_CYCLES = 3;

type Annotated = { metadata?: { annotations?: Record<string, string> } };

/** The CLB ids the cluster's Services and Ingresses name (their TKE annotations, as target-facts.ts reads them). */
export function namedClbs(services: readonly Annotated[], ingresses: readonly Annotated[]): Set<string> {
  const ids = [...services.map((o) => boundLoadBalancerId(o.metadata?.annotations, 'Service')), ...ingresses.map((o) => boundLoadBalancerId(o.metadata?.annotations, 'Ingress'))];
  return new Set(ids.filter((id): id is string => id !== undefined));
}

export interface ObservationUpkeepOptions {
  observer: Pick<ClbObserver, 'sweep'>;
  signal: Pick<HealthSignal, 'spread' | 'forget'>;
  /** The drift interval (how often it sweeps) and the full re-read cycle now (the one the drift checks run on). */
  scheduler: Pick<DriftScheduler, 'fullIntervalMs' | 'intervalMs'>;
  /** The CLB ids the cluster's current Services and Ingresses name (from the informer caches): never forgotten. */
  named: () => ReadonlySet<string>;
  logger: { debug(message: string, extra?: Record<string, unknown>): void };
  /** Absent: --observation-checkpoint=false. */
  checkpoint?: Pick<Checkpointer, 'restore' | 'start' | 'stop'>;
  now?: () => number;
}

export class ObservationUpkeep {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: ObservationUpkeepOptions) {}

  /**
   * Before the first round of a new leader: seeds the observer from the checkpoint (never throws) and spreads the
   * health checks of the CLBs seeded that the signal serves (found, not classic).
   */
  async restore(): Promise<void> {
    const seeded = (await this.o.checkpoint?.restore()) ?? [];
    const checked = seeded.filter((e) => e.observation.state === 'Found' && e.observation.clb.forward !== 0);
    this.o.signal.spread(checked, (this.o.now ?? Date.now)(), signalIntervalMs(this.o.scheduler.intervalMs));
  }

  /** While leading: the checkpoint's periodic writes and the sweeps. */
  start(): void {
    this.o.checkpoint?.start();
    this.timer ??= setInterval(() => this.sweep(), this.o.scheduler.intervalMs).unref();
  }

  /** Shutdown: no more sweeps, and the checkpoint written once more (bounded by `boundMs`). */
  async stop(boundMs: number): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.o.checkpoint?.stop(boundMs);
  }

  /** Forgets the CLBs no round asked for in SWEEP_AFTER_CYCLES full cycles; returns how many. */
  sweep(): number {
    const named = this.o.named();
    const dropped = this.o.observer.sweep((this.o.now ?? Date.now)() - SWEEP_AFTER_CYCLES * this.o.scheduler.fullIntervalMs(), (id) => named.has(id));
    this.o.signal.forget(dropped);
    if (dropped.length > 0) this.o.logger.debug('Forgot CLBs no policy names any more', { clbs: dropped.length, first: dropped.slice(0, 3) });
    return dropped.length;
  }
}
