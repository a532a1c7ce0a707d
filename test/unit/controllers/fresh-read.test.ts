// Which CLBs a round reads again before it carries out a plan (src/controllers/policy/fresh-read.ts).
import { describe, expect, it } from '@jest/globals';
import { freshReadsBeforeWrite, type WriteCandidate } from '../../../src/controllers/policy/fresh-read.js';
import { FRESH_BEFORE_WRITE_MS } from '../../../src/mitigation/steps/effect.js';

const NOW = 1_000_000_000;

describe('freshReadsBeforeWrite', () => {
  // Each row: the candidates (with the time of the read their plan rests on), the CLBs the observer's cache holds
  // seeded from the checkpoint, and the CLBs to read again.
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
  it.each(cases)('%s', (_what, candidates, seeded, expected) => {
    expect(freshReadsBeforeWrite(candidates, { seeded: (id: string) => seeded.includes(id) }, NOW)).toEqual(expected);
  });

  it('judges the read the plan rests on, not a newer one the cache got since (another chunk, the drift checks)', () => {
    // The observer would answer "read just now" for lb-a; the plan was made on a read older than the bound.
    const observer = { seeded: () => false, observedAt: () => NOW };
    expect(freshReadsBeforeWrite([{ loadBalancerId: 'lb-a', executes: true, observedAt: NOW - FRESH_BEFORE_WRITE_MS - 1 }], observer, NOW)).toEqual(['lb-a']);
  });
});
