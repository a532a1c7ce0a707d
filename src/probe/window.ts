// One window's figures per target, in bounded memory: counts, and latencies in fixed log-spaced buckets (a quarter
// octave each, from 0.1 ms to 2 minutes: 82 counters per target whatever the number of probes). A quantile is the
// geometric middle of the bucket the nearest-rank sample falls in, so it is within 2^(1/8) - 1 = 9.1 % of that
// sample's latency (docs/probe.md "Latency").
import type { ProbeTargetResult } from '../api/probe.js';

/** A probe's end: answered in time, a loopback-like failure (with how long it took), or could not be sent at all. */
export type ProbeOutcome = { kind: 'ok'; ms: number } | { kind: 'failed'; ms: number } | { kind: 'notRun' };

/** A probe at or past this is a stall: the lab's L7 stalls are ~4.2 s (the CLB's 4 s retry), a healthy VIP ms. */
export const STALL_MS = 3000;

const LOWEST_MS = 0.1;
const PER_OCTAVE = 4;
export const BUCKETS = Math.ceil(PER_OCTAVE * Math.log2(120_000 / LOWEST_MS)) + 1;

/** The bucket of a latency: 0 holds everything below 0.1 ms·2^(1/4), the last everything from 2 minutes up. */
export function bucketOf(ms: number): number {
  if (!(ms > LOWEST_MS)) return 0;
  return Math.min(BUCKETS - 1, Math.floor(PER_OCTAVE * Math.log2(ms / LOWEST_MS)));
}

/** The latency a bucket stands for: its geometric middle, to 3 significant digits. */
export function bucketMs(b: number): number {
  return Number((LOWEST_MS * 2 ** ((b + 0.5) / PER_OCTAVE)).toPrecision(3));
}

interface Tally {
  probes: number;
  failures: number;
  stalls: number;
  notRun: number;
  timed: number;
  buckets: Uint32Array | undefined;
}

export class WindowStats {
  private readonly tallies: Tally[];

  constructor(private readonly ids: readonly string[]) {
    this.tallies = ids.map(() => ({ probes: 0, failures: 0, stalls: 0, notRun: 0, timed: 0, buckets: undefined }));
  }

  record(target: number, outcome: ProbeOutcome): void {
    const t = this.tallies[target];
    if (!t) return;
    t.probes++;
    if (outcome.kind === 'notRun') {
      t.notRun++;
      return;
    }
    if (outcome.kind === 'failed') t.failures++;
    if (outcome.ms >= STALL_MS) t.stalls++;
    t.timed++;
    (t.buckets ??= new Uint32Array(BUCKETS))[bucketOf(outcome.ms)]!++;
  }

  results(): ProbeTargetResult[] {
    return this.ids.map((id, i) => {
      const t = this.tallies[i]!;
      const r: ProbeTargetResult = { id, probes: t.probes, failures: t.failures, stalls: t.stalls, notRun: t.notRun };
      if (t.buckets && t.timed > 0) {
        r.p50Ms = quantile(t.buckets, t.timed, 0.5);
        r.p99Ms = quantile(t.buckets, t.timed, 0.99);
      }
      return r;
    });
  }
}

/** Nearest rank: the smallest bucket holding at least ceil(q·n) of the n samples. */
export function quantile(buckets: Uint32Array, n: number, q: number): number {
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (let b = 0; b < buckets.length; b++) {
    seen += buckets[b]!;
    if (seen >= rank) return bucketMs(b);
  }
  return bucketMs(buckets.length - 1);
}
