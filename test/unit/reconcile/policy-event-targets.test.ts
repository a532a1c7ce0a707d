// Issue 38 #4: an Event on a cluster policy lives in `default`, which any tenant may read: it names no target.
import { describe, expect, it } from '@jest/globals';
import { targetsForPolicyEvent } from '../../../src/controllers/policy/subject.js';

const targets = [
  { kind: 'Service', namespace: 'team-a', name: 'web' },
  { kind: 'Ingress', namespace: 'team-b', name: 'shop' },
  { kind: 'Service', namespace: 'team-b', name: 'api' },
];

describe('targetsForPolicyEvent', () => {
  it.each([
    ['a LoopbackPolicy names its own namespace’s targets', 'team-a', targets.slice(0, 1), Infinity, 'Service team-a/web'],
    ['…up to max, counting the rest', 'team-b', targets.slice(1), 1, 'Ingress team-b/shop, and 1 more target(s)'],
    ['a ClusterLoopbackPolicy counts targets and namespaces', undefined, targets, Infinity, "3 target(s) in 2 namespace(s) (each target's own Event names it)"],
    ['…whatever max says', undefined, targets.slice(0, 1), 1, "1 target(s) in 1 namespace(s) (each target's own Event names it)"],
  ])('%s', (_what, namespace, list, max, expected) => {
    const said = targetsForPolicyEvent({ namespace }, list, max);
    expect(said).toBe(expected);
    if (namespace === undefined) for (const t of targets) expect(said).not.toContain(t.name);
  });
});
