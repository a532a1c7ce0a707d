// A keyed work queue with client-go's guarantees (util/workqueue/doc.go):
// - stingy: a key is never processed by two workers at once, and adds of a key that is already waiting coalesce;
// - a key added while it is being processed is processed once more afterwards (nothing is lost);
// - failures are retried with per-key exponential backoff, base·2^failures capped (ItemExponentialFailureRateLimiter);
//   success forgets the failures, so one bad object never slows the others down;
// - bounded concurrency, delayed re-adds (RequeueAfter), and a draining shutdown that aborts handlers only once
//   its grace period is over.
import { settlesWithin } from './settle.js';

export interface ReconcileOutcome {
  /** Process the key again after this long (periodic drift checks, waiting on someone else). */
  requeueAfterMs?: number;
  /**
   * The round finished and reported everything, but part of it failed transiently: process the key again after
   * its per-key backoff (counted as an error), not after `requeueAfterMs`.
   */
  retry?: Error;
}

/**
 * How long aborted handlers get, after the grace period, to unwind and say where they stopped (a log line, an
 * Event) before shutdown goes on without them.
 */
export const DEFAULT_UNWIND_MS = 2_000;

/**
 * The reason shutdown aborts with: here, the grace period ended with handlers still running. Named AbortError,
 * so the CLB client classifies what it cancels as `Aborted` (never retried, never reported as a CLB error).
 */
export class ShutdownAbortError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbortError';
  }
}

export type ReconcileHandler = (key: string, signal: AbortSignal) => Promise<ReconcileOutcome | void>;

export interface WorkQueueObserver {
  depth?(name: string, depth: number): void;
  added?(name: string): void;
  retried?(name: string): void;
  processed?(name: string, seconds: number, result: 'success' | 'error' | 'requeue_after'): void;
  failed?(name: string, key: string, error: unknown, retryInMs: number | undefined): void;
}

export interface WorkQueueOptions {
  concurrency?: number;
  backoff?: { baseMs: number; maxMs: number };
  observer?: WorkQueueObserver;
}

export class WorkQueue {
  private readonly fifo: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** Failures of each key since its last success. */
  private readonly failures = new Map<string, number>();
  private readonly concurrency: number;
  private readonly backoff: NonNullable<WorkQueueOptions['backoff']>;
  private readonly observer: WorkQueueObserver;
  private readonly abort = new AbortController();
  private running = false;
  private shuttingDown = false;
  private idleWaiters: Array<() => void> = [];

  constructor(readonly name: string, private readonly handler: ReconcileHandler, options: WorkQueueOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    this.backoff = options.backoff ?? { baseMs: 5, maxMs: 1_000_000 };
    this.observer = options.observer ?? {};
  }

  /** Keys waiting to be processed (not counting delayed ones or those in progress). */
  get depth(): number {
    return this.fifo.length;
  }

  start(): void {
    this.running = true;
    this.pump();
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.observer.added?.(this.name);
    // A key being processed is only marked dirty; process() puts it back in line when it is done.
    if (!this.processing.has(key)) this.fifo.push(key);
    this.pump();
  }

  /** Adds `key` after `ms`; of several pending delays for one key the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  /** Resolves once nothing is queued or in progress (delayed keys do not count). For tests and shutdown. */
  whenIdle(): Promise<void> {
    if (this.fifo.length === 0 && this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Keys being processed right now (for the shutdown log: which policies a drain waits for). */
  get inProgressKeys(): string[] {
    return [...this.processing];
  }

  /**
   * Stops taking work (no new keys, no requeues, delayed adds cancelled) and lets in-flight handlers finish
   * for up to `drainMs`: their signal stays live, so a CLB task they await is seen to its end rather than cut
   * off. Only when the grace period is over are they aborted, and then given `unwindMs` more to record where
   * they stopped (default DEFAULT_UNWIND_MS); `onGraceOver` is told which keys are aborted. Returns whether
   * everything finished within the grace period.
   */
  async shutdown(drainMs = 8_000, options: { unwindMs?: number; onGraceOver?: (inProgress: string[]) => void } = {}): Promise<boolean> {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.fifo.length = 0;
    this.dirty.clear();
    if (await settlesWithin(this.whenIdle(), drainMs)) return true;
    options.onGraceOver?.(this.inProgressKeys);
    this.abort.abort(new ShutdownAbortError(`shutdown grace period (${drainMs} ms) ended`));
    await settlesWithin(this.whenIdle(), options.unwindMs ?? DEFAULT_UNWIND_MS);
    return false;
  }

  private pump(): void {
    while (this.running && !this.shuttingDown && this.processing.size < this.concurrency && this.fifo.length > 0) {
      const key = this.fifo.shift()!;
      this.dirty.delete(key);
      this.processing.add(key);
      void this.process(key);
    }
    // Every change of the line ends here (add, a key done), so the depth is said once, as it now is.
    this.observer.depth?.(this.name, this.fifo.length);
    this.notifyIdle();
  }

  private async process(key: string): Promise<void> {
    const started = performance.now();
    let result: 'success' | 'error' | 'requeue_after' = 'success';
    // Again after the key's backoff.
    const retry = (err: unknown): void => {
      result = 'error';
      const n = this.failures.get(key) ?? 0;
      this.failures.set(key, n + 1);
      const delay = Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** n);
      this.observer.retried?.(this.name);
      this.addAfter(key, delay);
      this.observer.failed?.(this.name, key, err, delay);
    };
    try {
      const outcome = await this.handler(key, this.abort.signal);
      if (outcome?.retry && !this.shuttingDown) return retry(outcome.retry);
      this.failures.delete(key);
      if (outcome?.requeueAfterMs !== undefined) {
        result = 'requeue_after';
        this.addAfter(key, outcome.requeueAfterMs);
      }
    } catch (err) {
      if (this.shuttingDown) {
        result = 'error';
        this.failures.delete(key);
        // Aborted at the end of the grace period is no failure: the handler has said where it stopped.
        if (!this.abort.signal.aborted) this.observer.failed?.(this.name, key, err, undefined);
      } else retry(err);
    } finally {
      this.processing.delete(key);
      this.observer.processed?.(this.name, (performance.now() - started) / 1000, result);
      if (this.dirty.has(key) && !this.shuttingDown) this.fifo.push(key);
      this.pump();
    }
  }

  private notifyIdle(): void {
    if (this.fifo.length > 0 || this.processing.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
