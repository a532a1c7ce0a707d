// docs/cluster-policy.md §5: which policy manages a target a cluster policy and a namespaced one (or two cluster
// policies) select, and what the loser reports.
import { describe, expect, it } from '@jest/globals';
import { conflictAssessment, handoverAssessment } from '../../../src/model/assessment.js';
import { clusterPolicyIdentity, describePolicy, lossOf, resolveConflicts, type Claim, type PolicyIdentity } from '../../../src/model/conflicts.js';
import type { TargetRef } from '../../../src/model/facts.js';
import { clusterOwnerKey, ownerOf, policyRefOf, recordFor } from '../../../src/model/record-registry.js';

const web: TargetRef = { kind: 'Service', namespace: 'shop', name: 'web' };
const ns = (name: string, at: string, uid?: string): PolicyIdentity => ({ namespace: 'shop', name, creationTimestamp: at, ...(uid ? { uid } : {}) });
const cl = (name: string, at: string, precedence: 'NamespacedFirst' | 'ClusterFirst' = 'NamespacedFirst', uid?: string) =>
  clusterPolicyIdentity({ metadata: { name, creationTimestamp: at, ...(uid ? { uid } : {}) }, spec: { precedence } });

const OLD = '2025-01-01T00:00:00Z';
const NEW = '2025-06-01T00:00:00Z';

type Mode = 'Audit' | 'Enforce';
type Precedence = 'NamespacedFirst' | 'ClusterFirst';

function resolve(policies: PolicyIdentity[], modes: Record<string, Mode> = {}) {
  const claims: Claim[] = policies.map((policy) => ({ policy, target: web, mode: modes[ownerOf(policy)] ?? 'Enforce' }));
  return resolveConflicts(claims).get('Service/shop/web')!;
}

describe('resolveConflicts across kinds', () => {
  it.each<[string, PolicyIdentity[], Record<string, Mode>, string]>([
    ['NamespacedFirst: the namespace policy wins, whatever the ages', [cl('platform', OLD), ns('own', NEW)], {}, 'LoopbackPolicy shop/own'],
    ['ClusterFirst: the cluster policy wins, even when younger', [ns('own', OLD), cl('platform', NEW, 'ClusterFirst')], {}, 'ClusterLoopbackPolicy/platform'],
    ['two cluster policies: the older', [cl('young', NEW), cl('old', OLD)], {}, 'ClusterLoopbackPolicy/old'],
    ['two cluster policies of one second: the uid, not the name', [cl('alpha', NEW, 'NamespacedFirst', 'u-2'), cl('zeta', NEW, 'NamespacedFirst', 'u-1')], {}, 'ClusterLoopbackPolicy/zeta'],
    ["disagreeing cluster policies: the oldest one's precedence decides (NamespacedFirst)", [cl('old', OLD, 'NamespacedFirst'), cl('young', NEW, 'ClusterFirst'), ns('own', NEW)], {}, 'LoopbackPolicy shop/own'],
    ["disagreeing cluster policies: the oldest one's precedence decides (ClusterFirst)", [cl('old', OLD, 'ClusterFirst'), cl('young', NEW, 'NamespacedFirst'), ns('own', NEW)], {}, 'ClusterLoopbackPolicy/old'],
    ['within the namespace, the oldest', [ns('b', OLD), ns('a', NEW), cl('platform', OLD)], {}, 'LoopbackPolicy shop/b'],
    ['a cluster policy alone', [cl('platform', OLD)], {}, 'ClusterLoopbackPolicy/platform'],
    // Issue 38 #1: a new Service, no record yet.
    ['NamespacedFirst Enforce cluster policy, Audit namespace policy: the one that enforces', [cl('platform', OLD), ns('own', NEW)], { 'shop/own': 'Audit' }, 'ClusterLoopbackPolicy/platform'],
    ['ClusterFirst cluster policy in Audit, namespace policy in Enforce: the one that enforces', [cl('platform', OLD, 'ClusterFirst'), ns('own', NEW)], { 'ClusterLoopbackPolicy/platform': 'Audit' }, 'LoopbackPolicy shop/own'],
    // Issue 38 #2: an older Audit cluster policy and a younger Enforce one.
    ['an older Audit cluster policy, a younger Enforce one: the one that enforces', [cl('watch', OLD), cl('fix', NEW)], { 'ClusterLoopbackPolicy/watch': 'Audit' }, 'ClusterLoopbackPolicy/fix'],
    ['all in Audit: precedence as in Enforce', [cl('platform', OLD), ns('own', NEW)], { 'shop/own': 'Audit', 'ClusterLoopbackPolicy/platform': 'Audit' }, 'LoopbackPolicy shop/own'],
    ["only the Enforce cluster policies' precedence counts", [cl('watch', OLD, 'ClusterFirst'), cl('fix', NEW, 'NamespacedFirst'), ns('own', NEW)], { 'ClusterLoopbackPolicy/watch': 'Audit' }, 'LoopbackPolicy shop/own'],
  ])('%s', (_name, policies, modes, expected) => {
    expect(describePolicy(resolve(policies, modes).winner)).toBe(expected);
    expect(describePolicy(resolve([...policies].reverse(), modes).winner)).toBe(expected);
  });

  it('a namespace and a cluster policy of the same name are two policies', () => {
    expect(resolve([cl('shop', OLD), ns('shop', NEW)]).losers).toHaveLength(1);
  });
});

// Issue 38 #1 / issue 37 #5: the cross product {cluster, namespaced} × {Audit, Enforce} × {NamespacedFirst,
// ClusterFirst} × {held by each policy, not held} × every creation order, for every set of 1–4 distinct such policies.
describe('the winner is a function of the set of policies only', () => {
  interface Variant {
    kind: 'cluster' | 'namespaced';
    mode: Mode;
    precedence?: Precedence;
  }
  const VARIANTS: Variant[] = [
    { kind: 'namespaced', mode: 'Audit' },
    { kind: 'namespaced', mode: 'Enforce' },
    ...(['Audit', 'Enforce'] as const).flatMap((mode) => (['NamespacedFirst', 'ClusterFirst'] as const).map((precedence): Variant => ({ kind: 'cluster', mode, precedence }))),
  ];
  const label = (v: Variant) => `${v.kind}-${v.mode}${v.precedence ? `-${v.precedence}` : ''}`;
  const subsets = <T>(xs: readonly T[]): T[][] => xs.reduce<T[][]>((acc, x) => [...acc, ...acc.map((s) => [...s, x])], [[]]);
  const permutations = <T>(xs: readonly T[]): T[][] => (xs.length <= 1 ? [[...xs]] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest])));
  const SETS = subsets(VARIANTS).filter((s) => s.length >= 1 && s.length <= 4);
  // Created one second apart in the given order (uids in reverse, so a uid never agrees with the order by accident).
  const build = (order: readonly Variant[]) => {
    const policies = order.map((v, i) => {
      const at = new Date(Date.parse(OLD) + i * 1000).toISOString();
      const uid = `u-${order.length - i}`;
      return v.kind === 'cluster' ? cl(label(v), at, v.precedence, uid) : ns(label(v), at, uid);
    });
    const modes = Object.fromEntries(order.map((v, i) => [ownerOf(policies[i]!), v.mode]));
    return { policies, modes };
  };
  const variantOf = (p: PolicyIdentity) => VARIANTS.find((v) => label(v) === p.name)!;
  let cases = 0;

  it.each(SETS.map((set) => [set.map(label).join(' + '), set] as const))('%s', (_name, set) => {
    const winners = new Set<string>();
    for (const order of permutations(set)) {
      const { policies, modes } = build(order);
      const claims = policies.map((policy): Claim => ({ policy, target: web, mode: modes[ownerOf(policy)] }));
      const expected = resolveConflicts(claims).get('Service/shop/web')!;
      // Held by any of them, or by none; claims in any order: the same winner, mode and losers. resolveConflicts has
      // no input for the record: the controller's handover (targets.ts) is the only use of it.
      for (const claimOrder of permutations(claims)) {
        expect(resolveConflicts(claimOrder).get('Service/shop/web')).toEqual(expected);
        cases += 1;
      }
      const winner = variantOf(expected.winner);
      // An Audit policy never beats one that enforces the target.
      if (set.some((v) => v.mode === 'Enforce')) expect([label(winner), expected.winnerMode]).toEqual([label(winner), 'Enforce']);
      expect(expected.winnerMode).toBe(winner.mode);
      // Among the policies of the winning mode, the oldest cluster policy's precedence picks the kind.
      const contenders = order.filter((v) => v.mode === winner.mode);
      const decider = contenders.find((v) => v.kind === 'cluster');
      const kind = !decider ? 'namespaced' : decider.precedence === 'ClusterFirst' || !contenders.some((v) => v.kind === 'namespaced') ? 'cluster' : 'namespaced';
      expect(winner.kind).toBe(kind);
      winners.add(label(winner));
    }
    // The creation order (the ages) only matters where the docs say: between two cluster policies of the winning
    // mode, for the target (when their kind wins) or for whose precedence decides. Otherwise one winner.
    const top = set.some((v) => v.mode === 'Enforce') ? 'Enforce' : 'Audit';
    const clusters = set.filter((v) => v.kind === 'cluster' && v.mode === top);
    const local = set.filter((v) => v.kind === 'namespaced' && v.mode === top);
    const firstFor = (precedence: Precedence) => clusters.some((v) => v.precedence === precedence);
    const possible = local.length === 0 ? clusters : clusters.length === 0 ? local : [...(firstFor('NamespacedFirst') ? local : []), ...clusters.filter((v) => v.precedence === 'ClusterFirst')];
    expect([...winners].sort()).toEqual(possible.map(label).sort());
    if (clusters.length <= 1) expect(winners.size).toBe(1);
  });

  it('covered every set, order and claim order', () => {
    // 56 sets of 1–4 of the 6 variants; Σ over sets of |set|!² (creation orders × claim orders).
    expect(SETS).toHaveLength(6 + 15 + 20 + 15);
    expect(cases).toBe(6 * 1 + 15 * 4 + 20 * 36 + 15 * 576);
  });
});

describe("the loser's verdict", () => {
  it('PolicyPrecedence between kinds, naming the winner and the switch', () => {
    const a = conflictAssessment(web, { winner: cl('platform', OLD, 'ClusterFirst') }, { policy: ns('own', NEW), by: 'Precedence' });
    expect(a).toMatchObject({ verdict: 'Conflict', rootCause: { id: 'PolicyPrecedence' } });
    expect(a.rootCause.message).toMatch(/managed by ClusterLoopbackPolicy\/platform, whose precedence is ClusterFirst/);
    const b = conflictAssessment(web, { winner: ns('own', NEW) }, { policy: cl('platform', OLD), by: 'Precedence' });
    expect(b.rootCause.message).toMatch(/managed by LoopbackPolicy shop\/own: the cluster policy's precedence is NamespacedFirst.*set precedence: ClusterFirst/);
  });

  it('PolicyPrecedence by mode: an Audit policy is told the winner enforces it', () => {
    const r = resolve([cl('platform', OLD), ns('own', NEW)], { 'shop/own': 'Audit' });
    const a = conflictAssessment(web, r, lossOf(r, ns('own', NEW)));
    expect(a).toMatchObject({ verdict: 'Conflict', rootCause: { id: 'PolicyPrecedence' } });
    expect(a.rootCause.message).toBe('managed by ClusterLoopbackPolicy/platform, which enforces it: this policy is in Audit here, and an Audit policy never takes a target from one that enforces it');
  });

  it('a cluster policy whose precedence was overruled by an older one is told which, naming both', () => {
    const old = cl('old', OLD, 'NamespacedFirst');
    const young = cl('young', NEW, 'ClusterFirst');
    const r = resolve([young, ns('own', NEW), old]);
    expect(r.decidedBy).toEqual(old);
    expect(lossOf(r, young)).toEqual({ policy: young, by: 'Precedence' });
    expect(conflictAssessment(web, r, lossOf(r, young)).rootCause.message).toMatch(
      /managed by LoopbackPolicy shop\/own: .*; between kinds the oldest cluster policy covering the namespace decides, ClusterLoopbackPolicy\/old \(NamespacedFirst\), not this policy's ClusterFirst/,
    );
    // The older one, agreeing with the outcome, gets the plain message.
    expect(conflictAssessment(web, r, lossOf(r, old)).rootCause.message).not.toMatch(/oldest cluster policy/);
    // Reversed: the older ClusterFirst wins, the younger NamespacedFirst one is told.
    const r2 = resolve([cl('young', NEW, 'NamespacedFirst'), ns('own', NEW), cl('old', OLD, 'ClusterFirst')]);
    expect(describePolicy(r2.winner)).toBe('ClusterLoopbackPolicy/old');
    expect(conflictAssessment(web, r2, lossOf(r2, cl('young', NEW, 'NamespacedFirst'))).rootCause).toMatchObject({ id: 'PolicyConflict', message: expect.stringMatching(/ClusterLoopbackPolicy\/old \(ClusterFirst\), not this policy's NamespacedFirst/) });
  });

  it('PolicyConflict within one kind, naming the winner', () => {
    const a = conflictAssessment(web, { winner: cl('old', OLD) }, { policy: cl('young', NEW), by: 'Age' });
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
    expect(ownerOf(record.spec.policy)).toBe('ClusterLoopbackPolicy/platform');
    expect(ownerOf({ namespace: 'shop', name: 'own' })).toBe('shop/own');
    expect(ownerOf(cl('platform', OLD))).toBe(ownerOf(record.spec.policy));
  });
});
