// Retries with capped exponential backoff and full jitter (AWS architecture blog "Exponential Backoff
// And Jitter"): many loopguard workers failing together must not retry together. Throttling waits at
// least `throttledDelayMs` (1 s: the CLB quota is per second, tencent-cloud.md §3; tke-extend-network-controller
// sleeps 1 s too). Every wait is abortable, so shutdown is bounded by one in-flight request.
import type { ClbError } from './errors.js';
import { toClbError } from './errors.js';

export interface RetryPolicy {
  /** Total attempts including the first. */
  maxAttempts: number;
  /** Backoff cap of the first retry; doubles per failure. */
  baseDelayMs: number;
  /** Upper bound of the exponential cap. */
  maxDelayMs: number;
  /** Floor under the jittered delay, so two attempts are never back to back. */
  minDelayMs: number;
  /** RequestLimitExceeded waits at least this long (plus jitter). */
  throttledDelayMs: number;
  /** Give up when the next attempt would start later than this after the first one. */
  deadlineMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 8,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  minDelayMs: 50,
  throttledDelayMs: 1_000,
  deadlineMs: 60_000,
});

export function resolveRetryPolicy(policy: Partial<RetryPolicy> = {}): RetryPolicy {
  const p = { ...DEFAULT_RETRY_POLICY, ...policy };
  for (const [key, value] of Object.entries(p)) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new TypeError(`retry policy ${key} must be a non-negative finite number, got ${String(value)}`);
    }
  }
  if (p.maxAttempts < 1 || !Number.isInteger(p.maxAttempts)) throw new TypeError('retry policy maxAttempts must be an integer ≥ 1');
  return p;
}

/**
 * Delay before the retry that follows the `failures`-th failure (1-based): uniform in
 * [0, min(maxDelay, base·2^(failures−1))], floored at minDelay; throttled calls add that to
 * `throttledDelayMs`. `random` returns [0, 1).
 */
export function backoffDelay(failures: number, policy: RetryPolicy, throttled: boolean, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failures - 1));
  const jittered = Math.max(policy.minDelayMs, random() * exp);
  return Math.round(throttled ? policy.throttledDelayMs + jittered : jittered);
}

/** Abortable sleep; rejects with the signal's reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface RetryEvent {
  error: ClbError;
  /** The attempt that failed (1-based). */
  attempt: number;
  delayMs: number;
}

export interface RetryOptions {
  policy?: Partial<RetryPolicy>;
  signal?: AbortSignal;
  /** Which errors to retry; default `error.retryable`. */
  shouldRetry?: (error: ClbError) => boolean;
  /** Converts thrown values; default `toClbError` (context-free). */
  toError?: (err: unknown) => ClbError;
  onRetry?: (event: RetryEvent) => void;
  /** Test seams. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

/**
 * Runs `fn` until it succeeds, fails with an error that must not be retried, runs out of attempts or
 * would pass the deadline. Throws the last error as a `ClbError` with `attempts` set.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const policy = resolveRetryPolicy(options.policy);
  const { signal } = options;
  const wait = options.sleep ?? sleep;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const convert = options.toError ?? ((err: unknown) => toClbError(err, {}, signal));
  const shouldRetry = options.shouldRetry ?? ((e: ClbError) => e.retryable);
  const started = now();

  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw convert(signal.reason ?? new DOMException('aborted', 'AbortError'));
    let error: ClbError;
    try {
      return await fn(attempt);
    } catch (err) {
      error = convert(err);
    }
    error.attempts = attempt;
    // Shutdown wins over whatever the attempt failed with: callers must not report it as a CLB error.
    if (signal?.aborted && error.reason !== 'Aborted') throw convert(signal.reason ?? new DOMException('aborted', 'AbortError'));
    if (error.reason === 'Aborted' || !shouldRetry(error) || attempt >= policy.maxAttempts) throw error;
    const delayMs = backoffDelay(attempt, policy, error.throttled, random);
    if (now() + delayMs - started > policy.deadlineMs) throw error;
    options.onRetry?.({ error, attempt, delayMs });
    try {
      await wait(delayMs, signal);
    } catch (err) {
      throw convert(err);
    }
  }
}
