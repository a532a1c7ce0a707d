// The leader's upkeep of what it remembers of CLBs (src/controllers/observation-upkeep.ts): a restored checkpoint's
// health checks spread over the signal interval, and CLBs no round asked for forgotten by the observer and the signal
// together, on the drift scheduler's full cycle.
import { describe, expect, it } from '@jest/globals';
import { namedClbs, ObservationUpkeep, SWEEP_AFTER_CYCLES } from '../../../src/controllers/observation-upkeep.js';
import type { CheckpointEntry } from '../../../src/cloud/observation-checkpoint.js';
import type { ClbFacts } from '../../../src/model/facts.js';

const found = (id: string, forward: number, at: number): CheckpointEntry => ({ id, at, observation: { state: 'Found', clb: { loadBalancerId: id, forward } as unknown as ClbFacts } });

function upkeep(seeded: CheckpointEntry[] = []) {
  const calls: string[] = [];
  const spreads: Array<{ ids: string[]; now: number; span: number }> = [];
  const sweptBefore: number[] = [];
  const u = new ObservationUpkeep({
    // The observer drops what is old unless named: here lb-kept is named, lb-gone is not.
    observer: { sweep: (before, named = () => false) => (sweptBefore.push(before), ['lb-gone', 'lb-kept'].filter((id) => !named(id))) },
    named: () => new Set(['lb-kept']),
    signal: { spread: (entries, now, span) => void spreads.push({ ids: entries.map((e) => e.id), now, span }), forget: (ids) => void calls.push(`forget ${[...ids].join(',')}`) },
    scheduler: { fullIntervalMs: () => 1_500_000, intervalMs: 300_000 },
    logger: { debug: () => undefined },
    checkpoint: { restore: async () => seeded, start: () => void calls.push('checkpoint start'), stop: async (ms) => void calls.push(`checkpoint stop ${ms}`) },
    now: () => 10_000_000,
  });
  return { u, calls, spreads, sweptBefore };
}

describe('ObservationUpkeep', () => {
  it('restore spreads the health checks of the found, non-classic CLBs over half the drift interval', async () => {
    const { u, spreads } = upkeep([found('lb-a', 1, 5), found('lb-classic', 0, 5), { id: 'lb-gone', at: 5, observation: { state: 'NotFound', loadBalancerId: 'lb-gone' } }]);
    await u.restore();
    expect(spreads).toEqual([{ ids: ['lb-a'], now: 10_000_000, span: 150_000 }]);
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

  it('start and stop carry the checkpoint along', async () => {
    const { u, calls } = upkeep();
    u.start();
    await u.stop(2_000);
    expect(calls).toEqual(['checkpoint start', 'checkpoint stop 2000']);
  });
});
