// Per-item exponential backoff, as client-go's ItemExponentialFailureRateLimiter: base·2^failures, capped.
// Reset by forget() once the item succeeds, so one bad object never slows the others down.

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

const DEFAULT_ITEM_BACKOFF: BackoffOptions = { baseMs: 5, maxMs: 1_000_000 };

export class ItemBackoff<K> {
  private readonly failures = new Map<K, number>();

  constructor(private readonly options: BackoffOptions = DEFAULT_ITEM_BACKOFF) {}

  /** Records one more failure of `key` and returns how long to wait before retrying it. */
  next(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity long before it matters; the cap keeps it finite.
    return Math.min(this.options.maxMs, this.options.baseMs * 2 ** n);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }
}

/** Full-jitter exponential delay for reconnect loops (informers, elector): random in [0, min(max, base·2^attempt)]. */
export function jitteredDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.max(baseMs, Math.floor(ceiling * random()));
}
