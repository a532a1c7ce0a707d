import { describe, expect, it } from '@jest/globals';
import { chunkTargets } from '../../../src/controllers/policy/round.js';

// A namespace of the bench:scale cluster run: ClusterIP Services (no CLB) around the ones bound to a CLB.
const t = (name: string, clb?: string) => ({ name, ...(clb ? { loadBalancerId: clb } : {}) });
const names = (chunks: { name: string }[][]) => chunks.map((c) => c.map((x) => x.name));

describe('chunkTargets: each chunk reads one full batch of CLBs', () => {
  it.each([
    { what: 'nothing', targets: [], size: 2, chunks: [] },
    { what: 'all bound, in their order', targets: [t('a', 'lb-1'), t('b', 'lb-2'), t('c', 'lb-3')], size: 2, chunks: [['a', 'b'], ['c']] },
    { what: 'none bound, in their order', targets: [t('a'), t('b'), t('c')], size: 2, chunks: [['a', 'b'], ['c']] },
    {
      what: 'bound ones first, each keeping its order, then the others',
      targets: [t('cip-1'), t('lb-1', 'lb-1'), t('cip-2'), t('cip-3'), t('ing-1', 'lb-2'), t('cip-4'), t('lb-2', 'lb-3')],
      size: 2,
      chunks: [['lb-1', 'ing-1'], ['lb-2', 'cip-1'], ['cip-2', 'cip-3'], ['cip-4']],
    },
    { what: 'an empty id is no CLB', targets: [t('x'), { name: 'y', loadBalancerId: '' }, t('z', 'lb-9')], size: 5, chunks: [['z', 'x', 'y']] },
  ])('$what', ({ targets, size, chunks }) => {
    expect(names(chunkTargets(targets, size))).toEqual(chunks);
  });

  it('bound targets whose CLB is not cached first (new Services ahead of converged ones), each group in its order', () => {
    const targets = [t('cip-1'), t('old-1', 'lb-1'), t('new-1', 'lb-2'), t('old-2', 'lb-3'), t('new-2', 'lb-4')];
    const cached = new Set(['lb-1', 'lb-3']);
    expect(names(chunkTargets(targets, 2, (id) => cached.has(id)))).toEqual([['new-1', 'new-2'], ['old-1', 'old-2'], ['cip-1']]);
  });

  it('20 to a chunk by default: 500 namespaces of 2 CLB-bound among 24 targets give full batches', () => {
    const targets = Array.from({ length: 500 }, (_, n) => [
      ...Array.from({ length: 18 }, (_, i) => t(`ns${n}/cip-${i}`)),
      t(`ns${n}/lb-0`, `lb-${n}-0`),
      t(`ns${n}/lb-1`, `lb-${n}-1`),
      ...Array.from({ length: 4 }, (_, i) => t(`ns${n}/ing-${i}`, `ing-${n}-${i}`)),
    ]).flat();
    const chunks = chunkTargets(targets);
    expect(chunks.flat()).toHaveLength(12_000);
    const withClb = chunks.map((c) => c.filter((x) => x.loadBalancerId).length).filter((n) => n > 0);
    expect(withClb).toEqual(Array.from({ length: 150 }, () => 20)); // 3,000 CLBs in 150 full batches
  });
});
