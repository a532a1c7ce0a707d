import { describe, expect, it } from '@jest/globals';
import { nextReconcile, type RequeueInput, settled } from '../../../src/controllers/policy/requeue.js';
import type { Assessment } from '../../../src/model/assessment.js';
import type { TargetOutcome } from '../../../src/model/status.js';

const target = (rootCause: string, lb = 'lb-1'): TargetOutcome => ({ assessment: { target: { kind: 'Service', namespace: 'ns', name: lb }, loadBalancerId: lb, rootCause: { id: rootCause } } as unknown as Assessment });
const base: RequeueInput = { outcomes: [], releases: [], waitsOnTke: false, streak: 0, driftCheckIntervalMs: 600_000, now: 1_000_000, jitter: (ms) => ms };

describe('nextReconcile', () => {
  it('a transient error anywhere (target or release) asks for a backoff retry and keeps the streak', () => {
    const error = { reason: 'RetryingAfterError' as const, message: 'throttled', permanent: false };
    const r = nextReconcile({ ...base, streak: 2, outcomes: [target('L4Loopback')], releases: [{ kind: 'Service', name: 'x', plan: [], error }] });
    expect('retry' in r.outcome && r.outcome.retry?.message).toMatch(/1 target\(s\) failed transiently.*throttled/);
    expect(r.streak).toBe(2);
  });

  it('a permanent error alone is no retry: the status says Stalled, the policy converges', () => {
    const r = nextReconcile({ ...base, outcomes: [{ ...target('L4Loopback'), error: { reason: 'PermissionDenied', message: 'CAM', permanent: true } }] });
    expect('retry' in r.outcome).toBe(false);
  });

  it.each([
    [1, 3_000],
    [2, 6_000],
    [3, 12_000],
    [20, 300_000],
  ])('a CLB being built: read again soon, backing off (streak %i → %i ms), its cached read dropped', (streak, ms) => {
    const r = nextReconcile({ ...base, streak: streak - 1, outcomes: [target('ClbCreating', 'lb-new'), target('Mitigated', 'lb-old')] });
    expect(r.outcome).toEqual({ requeueAfterMs: ms });
    expect(r.invalidate).toEqual(['lb-new']);
    expect(r.streak).toBe(streak);
  });

  it('a shared CLB held back (SharedClb): read again soon, as another namespace\'s policy may switch the other listeners', () => {
    const r = nextReconcile({ ...base, outcomes: [target('SharedClb', 'lb-shared'), target('Mitigated', 'lb-old')] });
    expect(r.outcome).toEqual({ requeueAfterMs: 3_000 });
    expect(r.invalidate).toEqual(['lb-shared']);
  });

  it('never waits longer than the drift interval', () => {
    expect(nextReconcile({ ...base, waitsOnTke: true, streak: 10, driftCheckIntervalMs: 20_000 }).outcome).toEqual({ requeueAfterMs: 20_000 });
  });

  it("a grace period that ends before the backoff: right after its end (the read that decides comes after it)", () => {
    expect(nextReconcile({ ...base, waitsOnTke: true, graceEndsAt: base.now + 1_000 }).outcome).toEqual({ requeueAfterMs: 1_250 });
    expect(nextReconcile({ ...base, waitsOnTke: true, graceEndsAt: base.now + 60_000 }).outcome).toEqual({ requeueAfterMs: 3_000 });
  });

  it('converged: the streak ends, back once per drift interval (jittered) for what only time changes; drift is the CLB side\'s', () => {
    const r = nextReconcile({ ...base, streak: 4, outcomes: [target('Mitigated')], jitter: (ms) => ms + 1 });
    expect(r.streak).toBe(0);
    expect(r.invalidate).toEqual([]);
    expect(r.outcome).toEqual({ requeueAfterMs: 600_001 });
  });
});

describe('nextReconcile, converged with a time that decides a verdict', () => {
  it('comes back right after it (a record that may only be late), or at the interval if that is sooner', () => {
    expect(nextReconcile({ ...base, outcomes: [target('Mitigated')], graceEndsAt: base.now + 8_000 }).outcome).toEqual({ requeueAfterMs: 8_250 });
    expect(nextReconcile({ ...base, outcomes: [target('Mitigated')], graceEndsAt: base.now + 900_000 }).outcome).toEqual({ requeueAfterMs: 600_000 });
  });
});

describe('settled: an outcome that holds until something changes (else planned again next round)', () => {
  const error = { reason: 'RetryingAfterError' as const, message: 'throttled', permanent: false };
  const ingress = (rootCause: string): TargetOutcome => ({ assessment: { ...target(rootCause).assessment, target: { kind: 'Ingress', namespace: 'ns', name: 'api' } } });
  // [what, outcome, enforcing, TkeServiceConfig cache synced, settled]
  it.each<[string, TargetOutcome, boolean, boolean, boolean]>([
    ['mitigated', target('Mitigated'), true, true, true],
    ['at risk in Audit, with its plan reported', { ...target('L4Loopback'), plan: ['switch'] }, false, true, true],
    ['in Enforce with steps left (a wait for TKE)', { ...target('L4Loopback'), plan: ['wait for TKE'] }, true, true, false],
    ['a failure', { ...target('L4Loopback'), error }, false, true, false],
    ['a permanent failure too (its retry comes with any round)', { ...target('L4Loopback'), error: { ...error, permanent: true } }, false, true, false],
    ['held in Audit with a correction left (time decides it)', { ...target('L4Loopback'), held: true, plan: ['put back'] }, false, true, false],
    ['held in Audit, nothing left', { ...target('Mitigated'), held: true, plan: [] }, false, true, true],
    ['a CLB being built', target('ClbCreating'), true, true, false],
    ['a CLB not read yet', target('ClbNotObserved'), true, true, false],
    ['a shared CLB waiting for another policy', target('SharedClb'), true, true, false],
    ['no CLB at all (ClusterIP)', { assessment: { ...target('ClbNotFound').assessment, loadBalancerId: undefined } } as TargetOutcome, true, true, true],
    ['an Ingress before the TkeServiceConfig cache has synced', ingress('L7Loopback'), false, false, false],
    ['an Ingress after it', ingress('L7Loopback'), false, true, true],
    ['a Service, whatever the config cache', target('Mitigated'), false, false, true],
  ])('%s', (_what, outcome, enforcing, configsKnown, expected) => {
    expect(settled(outcome, enforcing, configsKnown)).toBe(expected);
  });
});
