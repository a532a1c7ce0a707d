import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { BENCH_NAMESPACE_LABEL, clusterNamespaceCount, clusterPolicyYaml, comparisonLines, policyKinds, spread, type RunFigures } from '../../bench/scale-figures.js';
import { MiB } from '../../bench/operator-sampler.js';

const figures = (over: Partial<RunFigures> = {}): RunFigures => ({
  readyMs: 4000,
  statusBytes: 20 * 1024,
  policyBytes: 22 * 1024,
  rssPeakBytes: 200 * MiB,
  rssSettledBytes: 180 * MiB,
  heapPeakBytes: 80 * MiB,
  heapSettledBytes: 70 * MiB,
  ...over,
});

describe('bench:scale figures', () => {
  it('--policy: namespaced, cluster, or both with the namespaced baseline first; anything else is refused by name', () => {
    expect(policyKinds('namespaced')).toEqual(['namespaced']);
    expect(policyKinds('cluster')).toEqual(['cluster']);
    expect(policyKinds('both')).toEqual(['namespaced', 'cluster']);
    expect(() => policyKinds('clusters')).toThrow('--policy must be namespaced, cluster or both, not clusters');
  });

  it('the cluster run spreads over 500 namespaces times the scale, never fewer than 2', () => {
    expect(clusterNamespaceCount(500, 1)).toBe(500);
    expect(clusterNamespaceCount(500, 0.05)).toBe(25);
    expect(clusterNamespaceCount(500, 0.001)).toBe(2);
    expect(clusterNamespaceCount(40, 1)).toBe(40);
    expect(() => clusterNamespaceCount(0, 1)).toThrow('--namespaces must be a positive number, not 0');
    expect(() => clusterNamespaceCount(NaN, 1)).toThrow('--namespaces');
  });

  it('object i goes to namespace i mod n, and an Ingress backend is a ClusterIP Service of its own namespace', () => {
    const n = 4;
    const placed = Array.from({ length: 12 }, (_, i) => spread(i, n).namespace);
    expect(placed).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    // ClusterIP Service b lies in namespace spread(b).namespace: the backend of Ingress i must lie in Ingress i's.
    for (let i = 0; i < 50; i++) expect(spread(spread(i, n).backend, n).namespace).toBe(spread(i, n).namespace);
    // One namespace: everything there, every Ingress on cip-00000 (the namespaced run's workload as before).
    expect([0, 1, 7].map((i) => spread(i, 1))).toEqual([{ namespace: 0, backend: 0 }, { namespace: 0, backend: 0 }, { namespace: 0, backend: 0 }]);
  });

  it('the cluster policy is one Audit ClusterLoopbackPolicy selecting the run label', () => {
    expect(parse(clusterPolicyYaml('bench-scale-abc', 'abc'))).toEqual({
      apiVersion: 'loopguard.dev/v1alpha1',
      kind: 'ClusterLoopbackPolicy',
      metadata: { name: 'bench-scale-abc' },
      spec: { mode: 'Audit', namespaceSelector: { matchLabels: { [BENCH_NAMESPACE_LABEL]: 'abc' } } },
    });
  });

  it('sets the cluster figures beside the namespaced ones as ratios, memory against ≤ 1.00', () => {
    const lines = comparisonLines('without', figures(), figures({ readyMs: 6000, statusBytes: 40 * 1024, rssPeakBytes: 220 * MiB, rssSettledBytes: 171 * MiB }));
    expect(lines).toEqual([
      'cluster vs namespaced (without CLBs): time to Ready 6.0 s vs 4.0 s (ratio 1.50)',
      'cluster vs namespaced (without CLBs): status 40.0 KiB vs 20.0 KiB (ratio 2.00); policy object 22.0 KiB vs 22.0 KiB',
      'cluster vs namespaced (without CLBs): RSS peak 220.0 vs 200.0 MiB (ratio 1.10; goal ≤ 1.00), settled 171.0 vs 180.0 MiB (ratio 0.95); heap used peak 80.0 vs 80.0 MiB, settled 70.0 vs 70.0 MiB',
    ]);
    expect(comparisonLines('with', figures({ readyMs: 0 }), figures())[0]).toContain('(ratio n/a)');
  });
});
