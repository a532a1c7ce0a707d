// docs/cluster-policy.md §5: which policy manages a target a cluster policy and a namespaced one (or two cluster
// policies) select, and what the loser reports.
import { describe, expect, it } from '@jest/globals';
import { conflictAssessment, handoverAssessment } from '../../../src/model/assessment.js';
import { clusterPolicyIdentity, describePolicy, identityOwner, resolveConflicts, type Claim, type PolicyIdentity } from '../../../src/model/conflicts.js';
import type { TargetRef } from '../../../src/model/facts.js';
import { clusterOwnerKey, ownerOf, policyRefOf, recordFor } from '../../../src/model/record-registry.js';

const web: TargetRef = { kind: 'Service', namespace: 'shop', name: 'web' };
const ns = (name: string, at: string, uid?: string): PolicyIdentity => ({ namespace: 'shop', name, creationTimestamp: at, ...(uid ? { uid } : {}) });
const cl = (name: string, at: string, precedence: 'NamespacedFirst' | 'ClusterFirst' = 'NamespacedFirst', uid?: string) =>
  clusterPolicyIdentity({ metadata: { name, creationTimestamp: at, ...(uid ? { uid } : {}) }, spec: { precedence } });

const OLD = '2025-01-01T00:00:00Z';
const NEW = '2025-06-01T00:00:00Z';

function winner(policies: PolicyIdentity[], holder?: string): string {
  const claims: Claim[] = policies.map((policy) => ({ policy, target: web }));
  return describePolicy(resolveConflicts(claims, () => holder).get('Service/shop/web')!.winner);
}

describe('resolveConflicts across kinds', () => {
  it.each<[string, PolicyIdentity[], string | undefined, string]>([
    ['NamespacedFirst: the namespace policy wins, whatever the ages', [cl('platform', OLD), ns('own', NEW)], undefined, 'LoopbackPolicy shop/own'],
    ['NamespacedFirst: even when the cluster policy holds the record', [cl('platform', OLD), ns('own', NEW)], 'ClusterLoopbackPolicy/platform', 'LoopbackPolicy shop/own'],
    ['ClusterFirst: the cluster policy wins, even when younger', [ns('own', OLD), cl('platform', NEW, 'ClusterFirst')], undefined, 'ClusterLoopbackPolicy/platform'],
    ['ClusterFirst: even when the namespace policy holds the record', [ns('own', OLD), cl('platform', NEW, 'ClusterFirst')], 'shop/own', 'ClusterLoopbackPolicy/platform'],
    ['two cluster policies: the older', [cl('young', NEW), cl('old', OLD)], undefined, 'ClusterLoopbackPolicy/old'],
    ['two cluster policies: the holder before age', [cl('young', NEW), cl('old', OLD)], 'ClusterLoopbackPolicy/young', 'ClusterLoopbackPolicy/young'],
    ['two cluster policies of one second: the uid, not the name', [cl('alpha', NEW, 'NamespacedFirst', 'u-2'), cl('zeta', NEW, 'NamespacedFirst', 'u-1')], undefined, 'ClusterLoopbackPolicy/zeta'],
    ["only the winning cluster policy's switch counts", [cl('old', OLD, 'NamespacedFirst'), cl('young', NEW, 'ClusterFirst'), ns('own', NEW)], undefined, 'LoopbackPolicy shop/own'],
    ['within the namespace, record and age as before', [ns('b', OLD), ns('a', NEW), cl('platform', OLD)], 'shop/a', 'LoopbackPolicy shop/a'],
    ['a cluster policy alone', [cl('platform', OLD)], undefined, 'ClusterLoopbackPolicy/platform'],
  ])('%s', (_name, policies, holder, expected) => {
    expect(winner(policies, holder)).toBe(expected);
  });

  it("a namespace and a cluster policy of the same name are two policies", () => {
    const claims: Claim[] = [cl('shop', OLD), ns('shop', NEW)].map((policy) => ({ policy, target: web }));
    expect(resolveConflicts(claims).get('Service/shop/web')?.losers).toHaveLength(1);
  });
});

describe('an Audit policy never takes a target from the policy enforcing it', () => {
  const claims = (modes: Record<string, 'Audit' | 'Enforce'>, ...policies: PolicyIdentity[]): Claim[] => policies.map((policy) => ({ policy, target: web, mode: modes[identityOwner(policy)] ?? 'Enforce' }));
  it.each<[string, Claim[], string | undefined, string, string | undefined]>([
    ['NamespacedFirst, the namespace policy in Audit: the holding cluster policy keeps it', claims({ 'shop/own': 'Audit' }, cl('platform', OLD), ns('own', NEW)), 'ClusterLoopbackPolicy/platform', 'ClusterLoopbackPolicy/platform', 'LoopbackPolicy shop/own'],
    ['NamespacedFirst, the namespace policy in Enforce: it takes the target', claims({}, cl('platform', OLD), ns('own', NEW)), 'ClusterLoopbackPolicy/platform', 'LoopbackPolicy shop/own', undefined],
    ['ClusterFirst, the cluster policy in Audit in this namespace: the holding namespace policy keeps it', claims({ 'ClusterLoopbackPolicy/platform': 'Audit' }, ns('own', OLD), cl('platform', NEW, 'ClusterFirst')), 'shop/own', 'LoopbackPolicy shop/own', 'ClusterLoopbackPolicy/platform'],
    ['an Audit winner with no holder still wins (it only reports)', claims({ 'shop/own': 'Audit' }, cl('platform', OLD), ns('own', NEW)), undefined, 'LoopbackPolicy shop/own', undefined],
  ])('%s', (_name, list, holder, expected, deferredTo) => {
    const r = resolveConflicts(list, () => holder).get('Service/shop/web')!;
    expect(describePolicy(r.winner)).toBe(expected);
    expect(r.deferredTo ? describePolicy(r.deferredTo) : undefined).toBe(deferredTo);
  });

  it('the deferred policy is told why, and what Enforce would do', () => {
    const a = conflictAssessment(web, cl('platform', OLD), ns('own', NEW), true);
    expect(a).toMatchObject({ verdict: 'Conflict', rootCause: { id: 'PolicyPrecedence' } });
    expect(a.rootCause.message).toMatch(/in Audit here: ClusterLoopbackPolicy\/platform keeps managing it.*in Enforce mode this policy takes it over/);
  });
});

describe("the loser's verdict", () => {
  it('PolicyPrecedence between kinds, naming the winner and the switch', () => {
    const a = conflictAssessment(web, cl('platform', OLD, 'ClusterFirst'), ns('own', NEW));
    expect(a).toMatchObject({ verdict: 'Conflict', rootCause: { id: 'PolicyPrecedence' } });
    expect(a.rootCause.message).toMatch(/managed by ClusterLoopbackPolicy\/platform, whose precedence is ClusterFirst/);
    const b = conflictAssessment(web, ns('own', NEW), cl('platform', OLD));
    expect(b.rootCause.message).toMatch(/managed by LoopbackPolicy shop\/own: the cluster policy's precedence is NamespacedFirst.*set precedence: ClusterFirst/);
  });

  it('PolicyConflict within one kind, naming the winner', () => {
    const a = conflictAssessment(web, cl('old', OLD), cl('young', NEW));
    expect(a).toMatchObject({ verdict: 'Conflict', rootCause: { id: 'PolicyConflict' } });
    expect(a.rootCause.message).toMatch(/also selected by ClusterLoopbackPolicy\/old/);
  });

  it('the winner waits (Pending) while the holder gives its changes back', () => {
    const a = handoverAssessment(web, ns('own', OLD));
    expect(a).toMatchObject({ verdict: 'Pending', rootCause: { id: 'PolicyHandover' } });
    expect(a.rootCause.message).toMatch(/LoopbackPolicy shop\/own gives back what it changed first/);
  });
});

describe("records name the policy's kind", () => {
  it('a cluster owner key round-trips through the record; a record without kind is a LoopbackPolicy', () => {
    expect(policyRefOf(clusterOwnerKey('platform'))).toEqual({ kind: 'ClusterLoopbackPolicy', namespace: '', name: 'platform' });
    expect(policyRefOf('shop/own')).toEqual({ namespace: 'shop', name: 'own' });
    const record = recordFor(web, clusterOwnerKey('platform'), { v: 1 });
    expect(ownerOf(record)).toBe('ClusterLoopbackPolicy/platform');
    expect(ownerOf({ ...record, spec: { ...record.spec, policy: { namespace: 'shop', name: 'own' } } })).toBe('shop/own');
    expect(identityOwner(cl('platform', OLD))).toBe(ownerOf(record));
  });
});
