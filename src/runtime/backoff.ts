// Full-jitter exponential delay for reconnect loops (informers, the CLB health probe); the work queue's per-key
// backoff is its own (work-queue.ts).
/** Random in [base, min(max, base·2^attempt)]. */
export function jitteredDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.max(baseMs, Math.floor(ceiling * random()));
}
