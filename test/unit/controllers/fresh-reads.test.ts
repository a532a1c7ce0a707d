// Which CLBs a round reads again before it carries out a plan (planOnFreshReads, src/controllers/policy/round.ts).
import { describe, expect, it } from '@jest/globals';
import { planOnFreshReads } from '../../../src/controllers/policy/round.js';
import { FRESH_BEFORE_WRITE_MS } from '../../../src/mitigation/steps/effect.js';

const NOW = 1_000_000_000;

interface WriteCandidate {
  loadBalancerId?: string;
  executes: boolean;
  observedAt: number | undefined;
}

/** The CLBs planOnFreshReads reads again for these candidates ([] when it plans once). */
async function freshReads(candidates: readonly WriteCandidate[], observer: { seeded: (id: string) => boolean }): Promise<readonly string[]> {
  const plans: (readonly string[] | undefined)[] = [];
  const last = await planOnFreshReads(observer, async (fresh) => (plans.push(fresh), fresh ?? []), () => candidates.flatMap((c): [string | undefined, number | undefined][] => (c.executes ? [[c.loadBalancerId, c.observedAt]] : [])), NOW);
  // Planned once, or once more on the fresh reads.
  expect(plans).toEqual(last.length > 0 ? [undefined, last] : [undefined]);
  return last;
}

describe('planOnFreshReads', () => {
  // Each row: the candidates (with the time of the read their plan rests on; those not executing are not written),
  // the CLBs the observer's cache holds seeded from the checkpoint, and the CLBs to read again.
  const cases: Array<[string, WriteCandidate[], string[], string[]]> = [
    ['a seeded observation behind a write', [{ loadBalancerId: 'lb-a', executes: true, observedAt: NOW - 1_000 }], ['lb-a'], ['lb-a']],
    ['a seeded observation, nothing to carry out (converged, or Audit)', [{ loadBalancerId: 'lb-a', executes: false, observedAt: NOW - 1_000 }], ['lb-a'], []],
    ['an own read just made', [{ loadBalancerId: 'lb-a', executes: true, observedAt: NOW - 1_000 }], [], []],
    ['an own read exactly at the bound', [{ loadBalancerId: 'lb-a', executes: true, observedAt: NOW - FRESH_BEFORE_WRITE_MS }], [], []],
    ['an own read older than the bound', [{ loadBalancerId: 'lb-a', executes: true, observedAt: NOW - FRESH_BEFORE_WRITE_MS - 1 }], [], ['lb-a']],
    ['no CLB', [{ executes: true, observedAt: undefined }], [], []],
    ['not cached (the chunk read just tried it)', [{ loadBalancerId: 'lb-a', executes: true, observedAt: undefined }], [], []],
    [
      'a CLB shared by two targets, once',
      [
        { loadBalancerId: 'lb-a', executes: true, observedAt: NOW },
        { loadBalancerId: 'lb-a', executes: false, observedAt: NOW },
        { loadBalancerId: 'lb-b', executes: false, observedAt: NOW },
      ],
      ['lb-a', 'lb-b'],
      ['lb-a'],
    ],
  ];
  it.each(cases)('%s', async (_what, candidates, seeded, expected) => {
    expect(await freshReads(candidates, { seeded: (id: string) => seeded.includes(id) })).toEqual(expected);
  });

  it('judges the read the plan rests on, not a newer one the cache got since (another chunk, the drift checks)', async () => {
    // The observer would answer "read just now" for lb-a; the plan was made on a read older than the bound.
    const observer = { seeded: () => false, observedAt: () => NOW };
    expect(await freshReads([{ loadBalancerId: 'lb-a', executes: true, observedAt: NOW - FRESH_BEFORE_WRITE_MS - 1 }], observer)).toEqual(['lb-a']);
  });
});
