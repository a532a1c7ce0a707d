import { describe, expect, it } from '@jest/globals';
import { bucketMs, bucketOf, BUCKETS, WindowStats, type ProbeOutcome } from '../../../src/probe/window.js';
import { outcomeOf } from '../../../src/probe/outcome.js';

describe("a window's figures", () => {
  it('counts probes, failures, stalls and probes not run per target; quantiles over the timed ones', () => {
    const w = new WindowStats(['a', 'b', 'c']);
    const a: ProbeOutcome[] = [...Array.from({ length: 98 }, () => ({ kind: 'ok' as const, ms: 2 })), { kind: 'ok', ms: 4200 }, { kind: 'failed', ms: 5000 }];
    for (const o of a) w.record(0, o);
    w.record(1, { kind: 'notRun' });
    w.record(1, { kind: 'failed', ms: 1 });
    w.record(1, { kind: 'ok', ms: 2999 });
    w.record(9, { kind: 'ok', ms: 1 }); // not in the plan: ignored
    expect(w.results()).toEqual([
      { id: 'a', probes: 100, failures: 1, stalls: 2, notRun: 0, p50Ms: bucketMs(bucketOf(2)), p99Ms: bucketMs(bucketOf(4200)) },
      { id: 'b', probes: 3, failures: 1, stalls: 0, notRun: 1, p50Ms: bucketMs(bucketOf(1)), p99Ms: bucketMs(bucketOf(2999)) },
      { id: 'c', probes: 0, failures: 0, stalls: 0, notRun: 0 },
    ]);
  });

  it.each([
    [2999.9, 0],
    [3000, 1],
    [3500, 1],
  ])('a probe of %f ms counts %i stall (3 s and more)', (ms, stalls) => {
    const w = new WindowStats(['a']);
    w.record(0, { kind: 'ok', ms });
    expect(w.results()[0]!.stalls).toBe(stalls);
  });

  it('a target probed only where it could not be sent has counts and no latencies', () => {
    const w = new WindowStats(['a']);
    w.record(0, { kind: 'notRun' });
    expect(w.results()).toEqual([{ id: 'a', probes: 1, failures: 0, stalls: 0, notRun: 1 }]);
  });

  it.each([0.05, 0.3, 1, 2.5, 17, 480, 3000, 4200, 30_000, 119_000])('estimates %f ms within 9.1 %%', (ms) => {
    const w = new WindowStats(['a']);
    w.record(0, { kind: 'ok', ms });
    const { p50Ms } = w.results()[0]!;
    if (ms < 0.1) expect(p50Ms).toBeLessThan(0.12);
    else expect(Math.abs(p50Ms! - ms) / ms).toBeLessThanOrEqual(0.0906);
  });

  it('has a fixed number of buckets; latencies past two minutes land in the last', () => {
    expect(BUCKETS).toBe(82);
    expect(bucketOf(10 * 60_000)).toBe(BUCKETS - 1);
    expect(bucketOf(Number.NaN)).toBe(0);
  });
});

describe("a probe's end", () => {
  it.each([
    [{}, 'ok'],
    [{ status: 200 }, 'ok'],
    [{ status: 404 }, 'ok'], // answered: the VIP is reachable from this node
    [{ status: 499 }, 'ok'],
    [{ status: 500 }, 'ok'], // the application's own error: an answer
    [{ status: 501 }, 'ok'], // an application that does not do HEAD
    [{ status: 502 }, 'failed'],
    [{ status: 503 }, 'failed'],
    [{ status: 504 }, 'failed'],
    [{ error: 'ETIMEDOUT' }, 'failed'],
    [{ error: 'ECONNREFUSED' }, 'failed'],
    [{ error: 'ECONNRESET' }, 'failed'],
    [{ error: 'EPROTO' }, 'failed'],
    [{ error: 'ENETUNREACH' }, 'notRun'],
    [{ error: 'EHOSTUNREACH' }, 'notRun'],
    [{ error: 'EADDRNOTAVAIL' }, 'notRun'],
    [{ error: 'EMFILE' }, 'notRun'],
  ])('%j is %s', (end, kind) => {
    expect(outcomeOf(end, 12).kind).toBe(kind);
  });
});
