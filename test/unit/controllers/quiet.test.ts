import { describe, expect, it } from '@jest/globals';
import { converged, expectedStatus, mayStayQuiet, policyInputs, statusKey, withReportsVersion, type QuietRound } from '../../../src/controllers/policy/quiet.js';
import type { LoopbackPolicyStatus } from '../../../src/api/loopbackpolicy.js';

const settled = { waiting: false, stopped: [], skipped: 0, releases: [] };
const TRANSIENT = { reason: 'CloudTransient', message: 'timeout', permanent: false };

describe('converged: a round whose inputs plan the same outcomes again', () => {
  it.each([
    ['nothing left to do', settled, [{}], 0, true],
    ['no targets', settled, [], 0, true],
    ['waiting on TKE', { ...settled, waiting: true }, [{}], 0, false],
    ['a grace period counting', { ...settled, graceEndsAt: 1 }, [{}], 0, false],
    ['a target failed', settled, [{}, { error: TRANSIENT }], 0, false],
    ['a failure for good (its plan may change with time)', settled, [{ error: { ...TRANSIENT, permanent: true } }], 0, false],
    ['a release left', { ...settled, releases: [{ kind: 'Service', namespace: 'a', name: 'b', plan: [] }] }, [{}], 0, false],
    ['stopped by shutdown', { ...settled, skipped: 3 }, [{}], 0, false],
    ['a waiting streak kept', settled, [{}], 2, false],
    ['a policy error (a CLB read refused)', { ...settled, policyError: { reason: 'PermissionDenied', message: 'CAM' } }, [{}], 0, false],
    ['a held target in Audit with steps left', settled, [{ held: true, plan: ['wait for TKE'] }], 0, false],
    ['a held target in Audit with nothing left', settled, [{ held: true, plan: [] }], 0, true],
  ] as const)('%s', (_name, run, outcomes, streak, expected) => {
    expect(converged(run as never, outcomes as never, streak)).toBe(expected);
  });
});

describe('mayStayQuiet', () => {
  const status: LoopbackPolicyStatus = { observedGeneration: 1, counts: { total: 1, mitigated: 1 } as never, targets: [], lastEvaluatedTime: '2026-11-26T10:00:00Z' };
  const last: QuietRound = { stamp: '7|3|true|{}|{}', at: 1_000, clbs: ['lb-1'], status: statusKey(status), built: statusKey(status) };
  it.each([
    ['same inputs, within the interval', last, last.stamp, status, 1_000 + 299_999, true],
    ['the same status evaluated later (its time is not news)', last, last.stamp, { ...status, lastEvaluatedTime: '2026-11-26T10:04:00Z' }, 2_000, true],
    ['no converged round', undefined, last.stamp, status, 2_000, false],
    ['an input moved', last, '8|3|true|{}|{}', status, 2_000, false],
    ['a whole interval since the full round', last, last.stamp, status, 1_000 + 300_000, false],
    ['the status edited by someone else', last, last.stamp, { ...status, counts: { total: 1, atRisk: 1 } as never }, 2_000, false],
    ['the status removed', last, last.stamp, undefined, 2_000, false],
  ] as const)('%s', (_name, prev, stamp, current, now, expected) => {
    expect(mayStayQuiet(prev, { stamp, status: current }, now, 300_000)).toBe(expected);
  });
});

describe('expectedStatus: what a quiet reconcile expects to find after a full round', () => {
  const built: LoopbackPolicyStatus = { observedGeneration: 1, counts: { total: 1, mitigated: 1 } as never, targets: [], lastEvaluatedTime: '2026-11-26T10:00:00Z' };
  const foreign = { ...built, note: 'added by another field manager' } as LoopbackPolicyStatus;
  const changed: LoopbackPolicyStatus = { ...built, counts: { total: 1, atRisk: 1 } as never };
  /** The last round: the status it expected to find, and the one it built. */
  const round = (status: LoopbackPolicyStatus, builtThen = status): QuietRound => ({ stamp: 's', at: 0, clbs: [], status: statusKey(status), built: statusKey(builtThen) });
  it.each([
    ['the cache shows what was built', built, built, undefined, built],
    ['a first write, the cache not there yet', built, undefined, undefined, built],
    ['the cache differs for the first time: the write is expected to land', built, foreign, round({ ...built, observedGeneration: 0 }), built],
    ['the same status written again and the cache still differs: the difference stays (server-side apply)', built, foreign, round(built), foreign],
    ["the interval's full round after the difference was taken as it is: still taken, no write round", built, foreign, round(foreign, built), foreign],
    ['edited by someone else since the last round: the write is expected to land', built, { ...foreign, note: 'edited' } as LoopbackPolicyStatus, round(foreign, built), built],
    ['a verdict changed since the difference was taken: the new status is expected to land', changed, foreign, round(foreign, built), changed],
  ] as const)('%s', (_name, b, cached, last, expected) => {
    expect(expectedStatus(b, cached, last)).toBe(statusKey(expected));
  });
});

describe('policyInputs: a policy as a round reads it', () => {
  const policy = { apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { namespace: 'shop', name: 'p', uid: 'u1', generation: 1, resourceVersion: '10' }, spec: { mode: 'Audit' } };
  const stamp = policyInputs(policy);
  it.each([
    ['its status written (a new resourceVersion)', { ...policy, metadata: { ...policy.metadata, resourceVersion: '11' }, status: { observedGeneration: 1 } }, true],
    ['its spec changed', { ...policy, metadata: { ...policy.metadata, generation: 2 }, spec: { mode: 'Enforce' } }, false],
    ['being deleted', { ...policy, metadata: { ...policy.metadata, deletionTimestamp: new Date(0) } }, false],
    ['an annotation added', { ...policy, metadata: { ...policy.metadata, annotations: { 'loopguard.dev/abandon': 'true' } } }, false],
  ] as const)('%s: same stamp = %s', (_name, changed, same) => {
    expect(policyInputs(changed as never) === stamp).toBe(same);
  });
});

describe("withReportsVersion: a stamp's reports part", () => {
  it.each([
    ['added to a stamp without one', 'caches=1|gen=2', 3, 'caches=1|gen=2|reports=3'],
    ['replaced, the rest kept', 'caches=1|gen=2|reports=3', 5, 'caches=1|gen=2|reports=5'],
    ['the same version: the same stamp', 'caches=1|reports=3', 3, 'caches=1|reports=3'],
  ] as const)('%s', (_name, stamp, version, expected) => {
    expect(withReportsVersion(stamp, version)).toBe(expected);
  });
});
