// "Is a status write needed": the cached status comes back from the apiserver in another key order.
import { describe, expect, it } from '@jest/globals';
import type { LoopbackPolicyStatus } from '../../../src/api/loopbackpolicy.js';
import { sameStatus } from '../../../src/kube/status-writer.js';

const built: LoopbackPolicyStatus = {
  observedGeneration: 2,
  conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '3 targets', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 2 }],
  counts: { atRisk: 0, mitigated: 3, notApplicable: 0, unsupported: 0, pending: 0, skipped: 0, conflict: 0, total: 3 },
  targets: [{ kind: 'Service', name: 'a', verdict: 'Mitigated', rootCause: 'LoopbackPrevented', message: 'm' }],
  targetsTruncated: false,
  lastEvaluatedTime: '2026-01-01T00:00:00Z',
};

/** The same object with every key in reverse order, as a JSON round trip through another writer would give. */
function reordered<T>(v: T): T {
  if (Array.isArray(v)) return v.map(reordered) as T;
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)])) as T;
  return v;
}

describe('sameStatus', () => {
  it('ignores key order and the evaluation time', () => {
    expect(sameStatus(reordered({ ...built, lastEvaluatedTime: '2026-01-01T00:05:00Z' }), built)).toBe(true);
  });
  it('sees a changed value, a changed list order and no previous status', () => {
    expect(sameStatus({ ...built, counts: { ...built.counts!, mitigated: 2, atRisk: 1 } }, built)).toBe(false);
    expect(sameStatus({ ...built, targets: [...built.targets!, { ...built.targets![0]!, name: 'b' }].reverse() }, { ...built, targets: [...built.targets!, { ...built.targets![0]!, name: 'b' }] })).toBe(false);
    expect(sameStatus(undefined, built)).toBe(false);
  });
  it("leaves out what another field manager keeps in the status (server-side apply leaves it), not a field loopguard dropped", () => {
    expect(sameStatus({ ...built, note: 'kept by another manager' } as LoopbackPolicyStatus, built)).toBe(true);
    expect(sameStatus({ ...built, releases: [{ kind: 'Service', name: 'gone', plan: [] }] } as LoopbackPolicyStatus, built)).toBe(false);
  });
});
