import { ApiError } from './errors.js';

/**
 * Per-action token buckets: CLB allows 20 requests/s per API per account (tencent-cloud.md §3 "Rate limits"). Burst
 * equals the rate, so a client that spreads its calls never sees `RequestLimitExceeded` while a client that bursts
 * 21 calls in one instant does. A rate of 0 disables the limit for that action.
 */
class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly rps: number,
    now: number,
  ) {
    this.tokens = rps;
    this.last = now;
  }

  take(now: number): boolean {
    this.tokens = Math.min(this.rps, this.tokens + ((now - this.last) / 1000) * this.rps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export interface RateLimitConfig {
  rps: number;
  rpsPerAction: Record<string, number>;
}

export class ActionThrottle {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly config: () => RateLimitConfig) {}

  rateFor(action: string): number {
    const cfg = this.config();
    return cfg.rpsPerAction[action] ?? cfg.rps;
  }

  /** Throws `RequestLimitExceeded` (message modelled on Tencent's wording) when the action's bucket is empty. */
  admit(action: string, now = performance.now()): void {
    const rps = this.rateFor(action);
    if (rps <= 0) return;
    let bucket = this.buckets.get(action);
    if (!bucket || bucket.rps !== rps) {
      bucket = new TokenBucket(rps, now);
      this.buckets.set(action, bucket);
    }
    if (!bucket.take(now)) {
      throw new ApiError(
        'RequestLimitExceeded',
        `Your current request rate of \`${action}\` exceeds the frequency limit \`${rps}\` per second. Please reduce the frequency of calls.`,
      );
    }
  }

  /** Refill everything (config change, reset). */
  reset(): void {
    this.buckets.clear();
  }
}
