// Writes to one CLB run strictly one after another, from submission until their async task has
// finished: the CLB locks itself while a task runs and answers any other write with
// FailedOperation.ResourceInOperating (tencent-cloud.md §3), so loopguard must never race itself there
// (TKE's controllers still can; that is retried). Writes to different CLBs run concurrently, bounded.
import PQueue from 'p-queue';
import { queueSignal } from './queue-signal.js';

export const DEFAULT_WRITE_CONCURRENCY = 16;

export class ClbWriteGate {
  /** Tail of each CLB's chain of writes; removed when the chain drains. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly slots: PQueue;

  constructor(maxConcurrentClbs: number = DEFAULT_WRITE_CONCURRENCY) {
    if (!Number.isInteger(maxConcurrentClbs) || maxConcurrentClbs < 1) {
      throw new TypeError(`write concurrency must be an integer ≥ 1, got ${maxConcurrentClbs}`);
    }
    this.slots = new PQueue({ concurrency: maxConcurrentClbs });
  }

  /**
   * Runs `fn` once every earlier write to `lbId` has finished and a slot is free. The CLB's turn is
   * taken before the slot, so writes queued behind a busy CLB do not hold slots other CLBs could use.
   * `stopping` (shutdown began) ends only the wait: a write still waiting is dropped, a running one is not.
   */
  async run<T>(lbId: string, fn: () => Promise<T>, signal?: AbortSignal, stopping?: AbortSignal): Promise<T> {
    const previous = this.tails.get(lbId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    // Our turn ends after the previous one, even if we give up waiting (abort), so the chain holds.
    const tail = previous.then(() => mine);
    this.tails.set(lbId, tail);
    const wait = queueSignal(signal, stopping);
    try {
      await abortable(previous, wait.signal);
    } catch (err) {
      void previous.then(release);
      this.forget(lbId, tail);
      throw err;
    }
    // On abort p-queue rejects at once while `fn` may still be finishing a request: the CLB's turn
    // ends when `fn` settles, or here if `fn` never started.
    let started = false;
    try {
      return await this.slots.add(
        async () => {
          started = true;
          wait.started();
          try {
            return await fn();
          } finally {
            release();
          }
        },
        wait.signal ? { signal: wait.signal } : {},
      );
    } finally {
      if (!started) release();
      this.forget(lbId, tail);
    }
  }

  /** CLBs with a write in progress or queued (the tests check that drained chains are forgotten). */
  stats(): { clbs: number } {
    return { clbs: this.tails.size };
  }

  private forget(lbId: string, tail: Promise<void>): void {
    // Only the last write in the chain may remove it; a later one has replaced the tail otherwise.
    void tail.then(() => {
      if (this.tails.get(lbId) === tail) this.tails.delete(lbId);
    });
  }
}

function abortable(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError');
}
