// docs/cluster-policy.md §7: a cluster policy's status, bounded at any number of namespaces and targets.
import { describe, expect, it } from '@jest/globals';
import { findCondition } from '../../../src/api/conditions.js';
import type { PolicyMode } from '../../../src/api/loopbackpolicy.js';
import { assessment } from '../../../src/model/assessment-result.js';
import { buildClusterPolicyStatus, overallMode } from '../../../src/model/cluster-status.js';
import type { RootCauseId } from '../../../src/model/root-causes.js';
import type { TargetOutcome } from '../../../src/model/status.js';

const now = new Date('2026-01-01T00:00:00Z');
const outcome = (namespace: string, name: string, rootCause: RootCauseId): TargetOutcome => ({ assessment: assessment({ kind: 'Service', namespace, name }, { rootCause, message: `${rootCause} message` }) });

function build(outcomes: TargetOutcome[], namespaces: Record<string, PolicyMode>, extra: Partial<Parameters<typeof buildClusterPolicyStatus>[0]> = {}) {
  return buildClusterPolicyStatus({ generation: 3, outcomes, namespaces: new Map(Object.entries(namespaces)), excluded: [], now, ...extra });
}

describe('buildClusterPolicyStatus', () => {
  const outcomes = [
    outcome('shop', 'web', 'LoopbackPrevented'),
    outcome('blog', 'web', 'PodSourceNotMasqueraded'),
    outcome('blog', 'api', 'PodSourceNotMasqueraded'),
    outcome('docs', 'web', 'ClbNotAssigned'),
    outcome('shop', 'api', 'PodSourceNotMasqueraded'),
  ];

  it('counts namespaces by mode, and targets over all of them', () => {
    const s = build(outcomes, { shop: 'Enforce', blog: 'Audit', docs: 'Audit', empty: 'Audit' }, { excluded: ['kube-system'] });
    expect(s.namespaces).toEqual({ selected: 4, enforce: 1, audit: 3, excluded: 1 });
    expect(s.excludedNamespaces).toEqual(['kube-system']);
    expect(s.counts).toMatchObject({ total: 5, atRisk: 3, mitigated: 1, pending: 1 });
    expect(s.observedGeneration).toBe(3);
  });

  it('lists namespaces most severe first (at risk, then the rest), then by name; empty ones too', () => {
    const s = build(outcomes, { shop: 'Enforce', blog: 'Audit', docs: 'Audit', empty: 'Audit' }, { reports: new Map([['blog', 'loopguard']]) });
    expect(s.byNamespace?.map((n) => [n.namespace, n.mode, n.counts.atRisk, n.report])).toEqual([
      ['blog', 'Audit', 2, 'loopguard'],
      ['shop', 'Enforce', 1, undefined],
      ['docs', 'Audit', 0, undefined],
      ['empty', 'Audit', 0, undefined],
    ]);
    expect(s.byNamespaceTruncated).toBe(false);
  });

  it('lists targets with their namespace, most severe first, then by namespace, kind and name', () => {
    const s = build(outcomes, { shop: 'Enforce', blog: 'Audit', docs: 'Audit' });
    expect(s.targets?.map((t) => `${t.verdict} ${t.namespace}/${t.name}`)).toEqual(['AtRisk blog/api', 'AtRisk blog/web', 'AtRisk shop/api', 'Pending docs/web', 'Mitigated shop/web']);
  });

  it('stays bounded: 100 namespaces and 100 targets listed of 600 and 1,200', () => {
    const many: Record<string, PolicyMode> = {};
    const lots: TargetOutcome[] = [];
    for (let i = 0; i < 600; i++) {
      const ns = `ns-${String(i).padStart(3, '0')}`;
      many[ns] = 'Audit';
      lots.push(outcome(ns, 'a', 'PodSourceNotMasqueraded'), outcome(ns, 'b', 'LoopbackPrevented'));
    }
    const s = build(lots, many);
    expect(s.byNamespace).toHaveLength(100);
    expect(s.byNamespaceTruncated).toBe(true);
    expect(s.targets).toHaveLength(100);
    expect(s.targetsTruncated).toBe(true);
    expect(s.counts?.total).toBe(1200);
    expect(JSON.stringify(s).length).toBeLessThan(512 * 1024);
  });

  it('says Audit in Ready when no namespace enforces, Enforce when one does', () => {
    expect(overallMode(new Map([['a', 'Audit']]))).toBe('Audit');
    expect(overallMode(new Map<string, PolicyMode>([['a', 'Audit'], ['b', 'Enforce']]))).toBe('Enforce');
    expect(findCondition(build(outcomes, { shop: 'Audit', blog: 'Audit', docs: 'Audit' }).conditions, 'Ready')?.reason).toBe('AuditComplete');
    expect(findCondition(build(outcomes, { shop: 'Enforce', blog: 'Audit', docs: 'Audit' }).conditions, 'Ready')?.reason).toBe('ReconciledWithRisks');
  });
});
