// Which CLBs a round reads again before it carries out a plan (src/controllers/policy/round.ts): the plans it will carry
// out (readsBehindWrites), and of their reads the seeded or old ones (planOnFreshReads).
import { describe, expect, it } from '@jest/globals';
import { planOnFreshReads, readsBehindWrites } from '../../../src/controllers/policy/round.js';
import { FRESH_BEFORE_WRITE_MS } from '../../../src/mitigation/steps/effect.js';
import type { Step } from '../../../src/plan/steps.js';
import type { TargetSnapshot } from '../../../src/plan/snapshot.js';

const NOW = 1_000_000_000;
type Read = [clb: string | undefined, readAt: number | undefined];

/** The CLBs planOnFreshReads reads again for these reads behind writes ([] when it plans once). */
async function freshReads(reads: readonly Read[], observer: { seeded: (id: string) => boolean }): Promise<readonly string[]> {
  const plans: (readonly string[] | undefined)[] = [];
  const last = await planOnFreshReads(observer, async (fresh?: readonly string[]) => (plans.push(fresh), fresh ?? []), () => [...reads], () => NOW);
  // Planned once, or once more on the fresh reads.
  expect(plans).toEqual(last.length > 0 ? [undefined, last] : [undefined]);
  return last;
}

describe('planOnFreshReads', () => {
  // Each row: the reads behind the writes (CLB, time of the read the plan rests on), the CLBs the observer's cache
  // holds seeded from the checkpoint, and the CLBs to read again.
  const cases: Array<[string, Read[], string[], string[]]> = [
    ['a seeded observation behind a write', [['lb-a', NOW - 1_000]], ['lb-a'], ['lb-a']],
    ['an own read just made', [['lb-a', NOW - 1_000]], [], []],
    ['an own read exactly at the bound', [['lb-a', NOW - FRESH_BEFORE_WRITE_MS]], [], []],
    ['an own read older than the bound', [['lb-a', NOW - FRESH_BEFORE_WRITE_MS - 1]], [], ['lb-a']],
    ['no CLB', [[undefined, undefined]], [], []],
    ['not cached (the chunk read just tried it)', [['lb-a', undefined]], [], []],
    ['a CLB behind two writes, once; a seeded CLB behind none is not read', [['lb-a', NOW], ['lb-a', NOW]], ['lb-a', 'lb-b'], ['lb-a']],
  ];
  it.each(cases)('%s', async (_what, reads, seeded, expected) => {
    expect(await freshReads(reads, { seeded: (id: string) => seeded.includes(id) })).toEqual(expected);
  });

  it('judges the read the plan rests on, not a newer one the cache got since (another chunk, the drift checks)', async () => {
    // The observer would answer "read just now" for lb-a; the plan was made on a read older than the bound.
    const observer = { seeded: () => false, observedAt: () => NOW };
    expect(await freshReads([['lb-a', NOW - FRESH_BEFORE_WRITE_MS - 1]], observer)).toEqual(['lb-a']);
  });

  it('judges the age when planning is done: a plan that waited on throttled reads may rest on a read grown too old', async () => {
    let clock = NOW;
    const planned = await planOnFreshReads(
      { seeded: () => false },
      async (fresh?: readonly string[]) => {
        if (!fresh) clock += 5_000; // the first plan's reads waited 5 s
        return fresh ?? [];
      },
      (): Read[] => [['lb-a', NOW - FRESH_BEFORE_WRITE_MS + 1_000]],
      () => clock,
    );
    expect(planned).toEqual(['lb-a']);
  });
});

describe('readsBehindWrites', () => {
  const drift: Step = { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-a', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 1, drift: true };
  const first: Step = { ...drift, drift: false };
  const target = (name: string, held: boolean) =>
    ({ facts: { kind: 'Service', namespace: 'ns', name, loadBalancerId: `lb-${name}` }, observedAt: NOW, ...(held ? { ownership: { owner: 'ns/p', originals: {} } } : {}) }) as unknown as TargetSnapshot;
  // Each row: the target's mode, whether the policy holds its record with originals, its plan's steps, whether the
  // round has an executor, and whether its read is behind a write.
  const cases: Array<[string, 'Enforce' | 'Audit', boolean, Step[], boolean, boolean]> = [
    ['Enforce with steps', 'Enforce', false, [first], true, true],
    ['Enforce, converged (no step)', 'Enforce', true, [], true, false],
    ['Audit, held, a maintained correction', 'Audit', true, [drift], true, true],
    ['Audit, held, only steps Audit reports', 'Audit', true, [first], true, false],
    ['Audit, not held, a drift', 'Audit', false, [drift], true, false],
    ['no executor (diagnosis only)', 'Enforce', true, [drift], false, false],
  ];
  it.each(cases)('%s', (_what, mode, held, steps, executor, behind) => {
    const input = { owner: 'ns/p', enforcing: () => mode === 'Enforce' };
    expect(readsBehindWrites(input, executor, [target('web', held)], [{ plan: { steps } } as never])).toEqual(behind ? [['lb-web', NOW]] : []);
  });
});
