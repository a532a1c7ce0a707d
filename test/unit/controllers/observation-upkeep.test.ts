// The leader's upkeep of what it remembers of CLBs (src/controllers/observation-upkeep.ts): CLBs no round asked for
// forgotten by the observer and the signal together, on the drift scheduler's full cycle. Its checkpoint (restore,
// spread, writes): observation-checkpoint.test.ts.
import { describe, expect, it } from '@jest/globals';
import { namedClbs, ObservationUpkeep, SWEEP_AFTER_CYCLES } from '../../../src/controllers/observation-upkeep.js';

function upkeep() {
  const calls: string[] = [];
  const spreads: Array<{ ids: string[]; now: number; span: number }> = [];
  const sweptBefore: number[] = [];
  const u = new ObservationUpkeep({
    // The observer drops what is old unless named: here lb-kept is named, lb-gone is not.
    observer: { sweep: (before, named = () => false) => (sweptBefore.push(before), ['lb-gone', 'lb-kept'].filter((id) => !named(id))), seed: () => 0, entries: () => [].values() },
    named: () => new Set(['lb-kept']),
    signal: { spread: (entries, now, span) => void spreads.push({ ids: entries.map((e) => e.id), now, span }), forget: (ids) => void calls.push(`forget ${[...ids].join(',')}`) },
    scheduler: { fullIntervalMs: () => 1_500_000, intervalMs: 300_000 },
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined },
    now: () => 10_000_000,
  });
  return { u, calls, spreads, sweptBefore };
}

describe('ObservationUpkeep', () => {
  it('restore without a checkpoint (--observation-checkpoint=false) seeds nothing: an empty spread', async () => {
    const { u, spreads } = upkeep();
    expect(await u.restore()).toEqual([]);
    expect(spreads).toEqual([{ ids: [], now: 10_000_000, span: 150_000 }]);
  });

  it('sweep forgets, in the signal too, what the observer dropped, after SWEEP_AFTER_CYCLES of the full cycle', () => {
    const { u, calls, sweptBefore } = upkeep();
    expect(u.sweep()).toBe(1);
    expect(sweptBefore).toEqual([10_000_000 - SWEEP_AFTER_CYCLES * 1_500_000]);
    expect(calls).toEqual(['forget lb-gone']);
  });

  it('namedClbs: the ids the Services and Ingresses name, by their own annotations', () => {
    const svc = (id?: string) => ({ metadata: { annotations: (id ? { 'service.kubernetes.io/loadbalance-id': id } : {}) as Record<string, string> } });
    const ing = (id: string) => ({ metadata: { annotations: { 'kubernetes.io/ingress.qcloud-loadbalance-id': id } } });
    expect([...namedClbs([svc('lb-aaaa0001'), svc(), svc('lb-aaaa0001')], [ing('lb-bbbb0002'), { metadata: { annotations: { 'service.kubernetes.io/loadbalance-id': 'lb-cccc0003' } } }])].sort()).toEqual(['lb-aaaa0001', 'lb-bbbb0002']);
  });
});
