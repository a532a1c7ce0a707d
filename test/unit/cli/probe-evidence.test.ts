// doctor's measured line (docs/probe.md §11.3): the plan and reports as read, judged against the verdict doctor found.
import { describe, expect, it } from '@jest/globals';
import type { ProbeReport } from '../../../src/api/probe.js';
import { measuredLines } from '../../../src/cli/probe-evidence.js';
import { needsDetails, type TargetReport } from '../../../src/cli/report.js';
import { targetDetails } from '../../../src/cli/output/table.js';
import { buildProbePlan, targetOfProbeId } from '../../../src/probe/plan-builder.js';

const NOW = Date.parse('2026-11-29T08:00:00Z');
const svc = (name: string) => ({ kind: 'Service' as const, namespace: 'shop', name, type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP' as const }], loadBalancerIps: ['10.0.3.17'] });
const plan = buildProbePlan([{ probe: { enabled: true, path: '/', targets: ['Service'] }, targets: [svc('cart'), svc('shelf')] }]).plan;
const report = (node: string, version: string, failures: number): ProbeReport => ({
  metadata: { name: node },
  spec: { node, pod: { name: 'p', uid: 'u' }, planVersion: version, window: { start: new Date(NOW - 360_000).toISOString(), end: new Date(NOW - 60_000).toISOString(), seconds: 300 }, targets: [{ id: 'Service/shop/cart:80', probes: 30, failures, stalls: 0, notRun: 0, p99Ms: 5000 }] },
});

describe('targetOfProbeId', () => {
  it.each([
    ['Service/shop/cart:80', { kind: 'Service', namespace: 'shop', name: 'cart' }],
    ['Gateway/shop/eg:8080', { kind: 'Gateway', namespace: 'shop', name: 'eg' }],
    ['Ingress/shop/web/www.example.com/healthz/deep', { kind: 'Ingress', namespace: 'shop', name: 'web' }],
    ['Ingress/shop/web/10.0.3.40/', { kind: 'Ingress', namespace: 'shop', name: 'web' }],
    ['Pod/shop/x', undefined],
    ['Service/shop', undefined],
  ])('%s', (id, ref) => expect(targetOfProbeId(id)).toEqual(ref));
});

describe('measuredLines', () => {
  const reads = { plan: { text: JSON.stringify(plan), version: '7' }, reports: [report('node-1', '7', 12), report('node-2', '6', 30)] };
  it('judges each probed target against the verdict doctor found, from the reports of the current plan only', () => {
    const lines = measuredLines(reads, [
      { kind: 'Service', namespace: 'shop', name: 'cart', verdict: 'Mitigated' },
      { kind: 'Service', namespace: 'shop', name: 'shelf', verdict: 'AtRisk' },
      { kind: 'Service', namespace: 'shop', name: 'other', verdict: 'AtRisk' },
    ], NOW);
    expect([...lines]).toEqual([
      ['Service/shop/cart', 'contradicts Mitigated: measured 12/30 failed from node-1; p99 5.0 s'],
      ['Service/shop/shelf', 'measured: no probe report for this target yet'],
    ]);
  });
  it('no plan, or one that does not parse: nothing', () => {
    expect(measuredLines({ reports: reads.reports }, [{ kind: 'Service', namespace: 'shop', name: 'cart', verdict: 'AtRisk' }], NOW).size).toBe(0);
    expect(measuredLines({ ...reads, plan: { text: '{', version: '7' } }, [{ kind: 'Service', namespace: 'shop', name: 'cart', verdict: 'AtRisk' }], NOW).size).toBe(0);
  });
  it('a contradiction is detailed whatever the verdict, with its line', () => {
    const t: TargetReport = { namespace: 'shop', kind: 'Service', name: 'cart', verdict: 'Mitigated', rootCause: 'PreventLoopbackInEffect', message: 'm', mitigations: [], plan: [], alternatives: [], advice: [], warnings: [] };
    expect(needsDetails(t)).toBe(false);
    const contradicted = { ...t, measured: 'contradicts Mitigated: measured 12/30 failed from node-1; p99 5.0 s' };
    expect(needsDetails(contradicted)).toBe(true);
    expect(targetDetails(contradicted)).toContain('  Measured: contradicts Mitigated: measured 12/30 failed from node-1; p99 5.0 s');
  });
});
