// Spaces starts at 1/rate apart for a rate that changes while calls wait (the adaptive rate, adaptive-rate.ts):
// p-queue's interval is fixed at construction, so the action's p-queue keeps the ceiling and the concurrency,
// and this pacer, inside it, the current rate. Waiters go in order, one timer at a time, and the spacing is
// taken from the rate at the moment each one is released, so a cut applies to the very next call.

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** Starts within this window count towards the measured send rate. */
const MEASURE_WINDOW_MS = 1_000;

export class Pacer {
  private last = -Infinity;
  private readonly waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Start times within the last MEASURE_WINDOW_MS, oldest first. */
  private readonly starts: number[] = [];

  constructor(
    private readonly rate: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Resolves when the next start is due; rejects with the signal's reason if it aborts first. */
  take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortReason(signal));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Starts per second over the last second (what the client actually sent, for the cut). */
  measured(): number {
    this.forgetOld(this.now());
    return (this.starts.length * 1000) / MEASURE_WINDOW_MS;
  }

  /** When the last call was released (ms on the pacer's clock); -Infinity before the first. */
  get lastStart(): number {
    return this.last;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Rejects every waiter with an AbortError. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.waiters.splice(0)) {
      w.signal?.removeEventListener('abort', w.onAbort);
      w.reject(new DOMException('throttle closed', 'AbortError'));
    }
  }

  private pump(): void {
    if (this.timer) return;
    while (this.waiters.length > 0) {
      const now = this.now();
      const due = this.last + 1000 / this.rate();
      if (now < due) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, Math.ceil(due - now));
        return;
      }
      const w = this.waiters.shift() as Waiter;
      w.signal?.removeEventListener('abort', w.onAbort);
      this.last = now;
      this.starts.push(now);
      this.forgetOld(now);
      w.resolve();
    }
  }

  private forgetOld(now: number): void {
    while (this.starts.length > 0 && (this.starts[0] as number) <= now - MEASURE_WINDOW_MS) this.starts.shift();
  }
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException('aborted', 'AbortError');
}
