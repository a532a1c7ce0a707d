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
    ['a LoopbackPolicy names its own namespace’s targets', 'team-a', targets.slice(0, 1), 'Service team-a/web'],
    ['…every one of them', 'team-b', targets.slice(1), 'Ingress team-b/shop, Service team-b/api'],
    ['a ClusterLoopbackPolicy counts targets and namespaces', undefined, targets, "3 target(s) in 2 namespace(s) (each target's own Event names it)"],
    ['…however few', undefined, targets.slice(0, 1), "1 target(s) in 1 namespace(s) (each target's own Event names it)"],
  ])('%s', (_what, namespace, list, expected) => {
    const said = targetsForPolicyEvent({ namespace }, list);
    expect(said).toBe(expected);
    if (namespace === undefined) for (const t of targets) expect(said).not.toContain(t.name);
  });
});
