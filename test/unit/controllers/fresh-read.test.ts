// Which CLBs a round reads again before it carries out a plan (src/controllers/policy/fresh-read.ts).
import { describe, expect, it } from '@jest/globals';
import { freshReadsBeforeWrite, type WriteCandidate } from '../../../src/controllers/policy/fresh-read.js';
import { FRESH_BEFORE_WRITE_MS } from '../../../src/mitigation/steps/effect.js';

const NOW = 1_000_000_000;

/** The observer's cache: each CLB's read time and whether it was seeded from the checkpoint. */
type Cache = Record<string, { observedAt: number; seeded: boolean }>;

describe('freshReadsBeforeWrite', () => {
  const cases: Array<[string, WriteCandidate[], Cache, string[]]> = [
    ['a seeded observation behind a write', [{ loadBalancerId: 'lb-a', executes: true }], { 'lb-a': { seeded: true, observedAt: NOW - 1_000 } }, ['lb-a']],
    ['a seeded observation, nothing to carry out (converged, or Audit)', [{ loadBalancerId: 'lb-a', executes: false }], { 'lb-a': { seeded: true, observedAt: NOW - 1_000 } }, []],
    ['an own read just made', [{ loadBalancerId: 'lb-a', executes: true }], { 'lb-a': { seeded: false, observedAt: NOW - 1_000 } }, []],
    ['an own read exactly at the bound', [{ loadBalancerId: 'lb-a', executes: true }], { 'lb-a': { seeded: false, observedAt: NOW - FRESH_BEFORE_WRITE_MS } }, []],
    ['an own read older than the bound', [{ loadBalancerId: 'lb-a', executes: true }], { 'lb-a': { seeded: false, observedAt: NOW - FRESH_BEFORE_WRITE_MS - 1 } }, ['lb-a']],
    ['no CLB', [{ executes: true }], {}, []],
    ['not cached (the chunk read just tried it)', [{ loadBalancerId: 'lb-a', executes: true }], {}, []],
    [
      'a CLB shared by two targets, once',
      [
        { loadBalancerId: 'lb-a', executes: true },
        { loadBalancerId: 'lb-a', executes: false },
        { loadBalancerId: 'lb-b', executes: false },
      ],
      { 'lb-a': { seeded: true, observedAt: NOW }, 'lb-b': { seeded: true, observedAt: NOW } },
      ['lb-a'],
    ],
  ];
  it.each(cases)('%s', (_what, candidates, cache, expected) => {
    const observer = { observedAt: (id: string) => cache[id]?.observedAt, seeded: (id: string) => cache[id]?.seeded ?? false };
    expect(freshReadsBeforeWrite(candidates, observer, NOW)).toEqual(expected);
  });
});
