import { describe, expect, it } from '@jest/globals';
import { conflictAssessment } from '../../../src/model/assessment.js';
import { comparePolicyAge, resolveConflicts, samePolicy, type Claim, type PolicyIdentity } from '../../../src/model/conflicts.js';
import type { TargetRef } from '../../../src/model/facts.js';

const p = (name: string, creationTimestamp?: string): PolicyIdentity => ({ namespace: 'shop', name, ...(creationTimestamp ? { creationTimestamp } : {}) });
const svc = (name: string): TargetRef => ({ kind: 'Service', namespace: 'shop', name });
const ing = (name: string): TargetRef => ({ kind: 'Ingress', namespace: 'shop', name });

const old = p('zeta', '2025-01-01T00:00:00Z');
const mid = p('alpha', '2025-03-01T00:00:00Z');
const sameTimeB = p('bravo', '2025-03-01T00:00:00Z');
const fresh = p('new');

describe('comparePolicyAge', () => {
  it.each([
    [old, mid, -1],
    [mid, old, 1],
    [mid, sameTimeB, -1],
    [sameTimeB, mid, 1],
    [mid, mid, 0],
    [old, fresh, -1],
    [fresh, old, 1],
    [p('a', 'garbage'), old, 1],
    [p('x', '2025-01-01T00:00:00+08:00'), old, -1],
  ])('%j vs %j', (a, b, sign) => {
    expect(Math.sign(comparePolicyAge(a, b))).toBe(sign);
  });
});

describe('same-second newcomers', () => {
  it('are ordered by uid, not by name: a later alpha does not beat an earlier zeta on its name', () => {
    const zeta = { ...p('zeta', '2025-03-01T00:00:00Z'), uid: '1b7c0c2e-0000-4000-8000-000000000001' };
    const alpha = { ...p('alpha', '2025-03-01T00:00:00Z'), uid: 'f00d0c2e-0000-4000-8000-000000000002' };
    expect(Math.sign(comparePolicyAge(zeta, alpha))).toBe(-1);
    expect(Math.sign(comparePolicyAge(alpha, zeta))).toBe(1);
    const claims: Claim[] = [alpha, zeta].map((policy) => ({ policy, target: svc('web') }));
    expect(resolveConflicts(claims).get('Service/shop/web')?.winner).toEqual(zeta);
    // Renaming does not move the winner: the uid stays with the object.
    const renamed = { ...zeta, name: 'zzz' };
    expect(resolveConflicts([alpha, renamed].map((policy) => ({ policy, target: svc('web') }))).get('Service/shop/web')?.winner).toEqual(renamed);
  });
});

describe('resolveConflicts', () => {
  it('gives each target to its oldest policy, name breaking ties', () => {
    const claims: Claim[] = [
      { policy: mid, target: svc('web') },
      { policy: old, target: svc('web') },
      { policy: sameTimeB, target: svc('web') },
      { policy: sameTimeB, target: ing('front') },
      { policy: mid, target: ing('front') },
      { policy: fresh, target: svc('db') },
    ];
    const o = resolveConflicts(claims);
    const age = (policy: PolicyIdentity) => ({ policy, by: 'Age' });
    expect(o.get('Service/shop/web')).toEqual({ target: svc('web'), winner: old, losers: [age(mid), age(sameTimeB)], winnerMode: 'Enforce' });
    expect(o.get('Ingress/shop/front')).toEqual({ target: ing('front'), winner: mid, losers: [age(sameTimeB)], winnerMode: 'Enforce' });
    expect(o.get('Service/shop/db')).toEqual({ target: svc('db'), winner: fresh, losers: [], winnerMode: 'Enforce' });
  });

  it('does not depend on claim order', () => {
    const claims: Claim[] = [old, mid, sameTimeB, fresh].map((policy) => ({ policy, target: svc('web') }));
    const forward = resolveConflicts(claims).get('Service/shop/web');
    const backward = resolveConflicts([...claims].reverse()).get('Service/shop/web');
    expect(backward).toEqual(forward);
    expect(forward?.winner).toEqual(old);
  });

  it('keeps a Service and an Ingress of the same name apart', () => {
    const o = resolveConflicts([
      { policy: mid, target: svc('x') },
      { policy: old, target: ing('x') },
    ]);
    expect(o.get('Service/shop/x')?.winner).toEqual(mid);
    expect(o.get('Ingress/shop/x')?.winner).toEqual(old);
  });

  it('ignores a policy claiming the same target twice', () => {
    const o = resolveConflicts([
      { policy: mid, target: svc('web') },
      { policy: mid, target: svc('web') },
    ]);
    expect(o.get('Service/shop/web')?.losers).toEqual([]);
  });

  it('names the winner of each claimed target only', () => {
    const o = resolveConflicts([
      { policy: mid, target: svc('web') },
      { policy: old, target: svc('web') },
    ]);
    const winner = o.get('Service/shop/web')!.winner;
    expect(samePolicy(winner, old)).toBe(true);
    expect(samePolicy(winner, mid)).toBe(false);
    expect(o.has('Service/shop/other')).toBe(false);
  });

  it('produces a Conflict verdict naming the winner', () => {
    const a = conflictAssessment(svc('web'), { winner: old });
    expect(a.verdict).toBe('Conflict');
    expect(a.rootCause.id).toBe('PolicyConflict');
    expect(a.rootCause.message).toContain('shop/zeta');
    expect(a.changes).toEqual([]);
  });
});
