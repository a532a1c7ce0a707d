// A tiny keyed work queue with client-go semantics (client-go util/workqueue): a key queued twice
// before it runs runs once; a key is never processed by two workers at once; a key re-added while running
// runs again afterwards; failures retry with per-key exponential backoff.

export interface WorkQueueOptions {
  concurrency?: number;
  baseRetryMs?: number;
  maxRetryMs?: number;
  onError?: (key: string, err: unknown, attempt: number) => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** Callbacks waiting for the next completed run of a key. */
  private readonly waiters = new Map<string, Array<() => void>>();
  private active = 0;
  private stopped = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly handler: (key: string) => Promise<void>,
    private readonly options: WorkQueueOptions = {},
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    const timer = this.retryTimers.get(key);
    if (timer) {
      clearTimeout(timer);
      this.retryTimers.delete(key);
    }
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    if (!this.processing.has(key)) this.queue.push(key);
    this.pump();
  }

  /** Queues the keys and resolves once each has completed a run (successful or not) that started after now. */
  async addAndWait(keys: Iterable<string>): Promise<void> {
    const done: Promise<void>[] = [];
    for (const key of keys) {
      done.push(new Promise<void>((resolve) => this.waiters.set(key, [...(this.waiters.get(key) ?? []), resolve])));
      this.add(key);
    }
    await Promise.all(done);
  }

  /** Resolves when nothing is queued or running (scheduled retries do not count). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    this.dirty.clear();
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.retryTimers.clear();
    await this.idle();
    for (const list of this.waiters.values()) for (const w of list) w();
    this.waiters.clear();
  }

  private pump(): void {
    const limit = this.options.concurrency ?? 4;
    while (!this.stopped && this.active < limit && this.queue.length > 0) {
      const key = this.queue.shift() as string;
      this.dirty.delete(key);
      this.processing.add(key);
      this.active++;
      const waiting = this.waiters.get(key) ?? [];
      this.waiters.delete(key);
      void this.run(key).finally(() => {
        this.processing.delete(key);
        this.active--;
        for (const w of waiting) w();
        // Re-added while running: run again now that the key is free.
        if (this.dirty.has(key) && !this.stopped) this.queue.push(key);
        this.pump();
        if (this.queue.length === 0 && this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.handler(key);
      this.failures.delete(key);
    } catch (err) {
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      this.options.onError?.(key, err, attempt);
      if (this.stopped) return;
      const base = this.options.baseRetryMs ?? 200;
      const delay = Math.min(this.options.maxRetryMs ?? 30_000, base * 2 ** (attempt - 1));
      const timer = setTimeout(() => {
        this.retryTimers.delete(key);
        this.add(key);
      }, delay);
      timer.unref();
      this.retryTimers.set(key, timer);
    }
  }
}
