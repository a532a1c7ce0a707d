import { describe, expect, it } from '@jest/globals';
import type { Condition } from '../../../src/api/conditions.js';
import { deletionConditions, terminatingMessage } from '../../../src/model/deletion-status.js';

const NOW = new Date('2026-11-25T12:00:00Z');
const reconciled: Condition[] = [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '1 target: 1 mitigated', lastTransitionTime: '2026-11-25T11:00:00Z', observedGeneration: 1 }];
const brief = (cs: readonly Condition[]) => Object.fromEntries(cs.map((c) => [c.type, `${c.status}/${c.reason}`]));

describe('deletionConditions: a deletion held up is never Ready', () => {
  const cases: { name: string; previous: Condition[]; blocked: boolean; want: Record<string, string> }[] = [
    { name: 'held up by a transient error, after Ready=True Reconciled', previous: reconciled, blocked: false, want: { Ready: 'False/Terminating', Reconciling: 'True/Terminating' } },
    { name: 'blocked by a permanent error', previous: reconciled, blocked: true, want: { Ready: 'False/DeletionBlocked', Stalled: 'True/DeletionBlocked' } },
    {
      name: 'from blocked back to held up (the permanent cause was fixed): Stalled goes',
      previous: deletionConditions(reconciled, { blocked: true, message: 'x' }, NOW),
      blocked: false,
      want: { Ready: 'False/Terminating', Reconciling: 'True/Terminating' },
    },
    {
      name: 'from held up to blocked: Reconciling goes',
      previous: deletionConditions(reconciled, { blocked: false, message: 'x' }, NOW),
      blocked: true,
      want: { Ready: 'False/DeletionBlocked', Stalled: 'True/DeletionBlocked' },
    },
  ];
  it.each(cases)('$name', ({ previous, blocked, want }) => {
    const message = terminatingMessage(['Service web: RetryingAfterError: ModifyListener: RequestLimitExceeded']);
    const out = deletionConditions(previous, { blocked, message, generation: 2 }, NOW);
    expect(brief(out)).toEqual(want);
    for (const c of out) {
      expect(c.message).toBe(message);
      expect(c.observedGeneration).toBe(2);
    }
  });

  it.each([
    ['a cause without a period', 'Service web: restoring', 'e.g. Service web: restoring. loopguard keeps retrying'],
    ['a cause that is a sentence (the CLB error advice)', "Service web: RetryingAfterError: shared with TKE's controllers.", "e.g. Service web: RetryingAfterError: shared with TKE's controllers. loopguard keeps retrying"],
    ['trailing periods and space', 'Service web: x.. ', 'e.g. Service web: x. loopguard keeps retrying'],
    ['a period inside the cause stays', 'Service web: v1.2 failed', 'e.g. Service web: v1.2 failed. loopguard keeps retrying'],
  ])('closes the example once: %s', (_name, cause, ending) => {
    expect(terminatingMessage([cause]).endsWith(ending)).toBe(true);
  });

  it('names the cause and the count', () => {
    expect(terminatingMessage(['Service web: RetryingAfterError: throttled', 'Service api: restoring'])).toMatch(/until 2 target\(s\) have their originals back, e\.g\. Service web: RetryingAfterError: throttled/);
  });
});
