import { ApiError } from './errors.js';

/**
 * Per-action token buckets. CLB's quota is a rate: 20 requests/s per action (tencent-cloud.md §3 "Rate limits");
 * Tencent Cloud API describes it as "the first 20 requests of every second pass" (CONFORMANCE.md, "Rate limits").
 * A bucket holds `max(1, rps)` tokens and gains `rps` per second, so a client that spreads its calls never sees
 * `RequestLimitExceeded` while one that bursts 21 calls in one instant does — and a rate below 1/s is still a rate:
 * at 0.2 one call passes every 5 s (never none: a call is whole, so the bucket holds at least one token).
 *
 * Kept as the token bucket's equivalent in time (GCRA, ITU-T I.371's "virtual scheduling"): `tat` is when the bucket
 * would be full again; a call is admitted while that is at most `capacity − 1` intervals ahead. Counting time
 * instead of adding fractions of tokens keeps the edges exact (at 0.2/s the next call passes at 5000 ms, not at
 * 5000 ms plus rounding).
 */
class TokenBucket {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  private tat: number;

  constructor(
    readonly rps: number,
    now: number,
  ) {
    this.intervalMs = 1000 / rps;
    // Plus a nanosecond: `tat` is a running sum of intervals, and k additions of 1000/7 can exceed k × 1000/7 by
    // one ulp, which would shrink the burst by a call.
    this.toleranceMs = (Math.max(1, rps) - 1) * this.intervalMs + 1e-6;
    this.tat = now;
  }

  take(now: number): boolean {
    const tat = Math.max(this.tat, now);
    if (tat - now > this.toleranceMs) return false;
    this.tat = tat + this.intervalMs;
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
