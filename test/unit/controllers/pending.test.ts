// What a round plans from the changes since the last one (pending.ts): the targets a change concerns, each with every
// target on its CLB, and those never planned; nothing else.
import { describe, expect, it } from '@jest/globals';
import { EVERYTHING, PendingChanges, targetsToPlan, type Change } from '../../../src/controllers/policy/pending.js';

const svc = (namespace: string, name: string, loadBalancerId?: string) => ({ kind: 'Service' as const, namespace, name, ...(loadBalancerId ? { loadBalancerId } : {}) });
const TARGETS = [svc('a', 'web', 'lb-1'), svc('a', 'api', 'lb-1'), svc('a', 'db', 'lb-2'), svc('b', 'x', 'lb-3'), svc('b', 'internal'), svc('a', 'cache')];
const names = (ts: readonly { namespace: string; name: string }[]) => ts.map((t) => `${t.namespace}/${t.name}`);
const pendingOf = (...changes: Change[]) => {
  const p = new PendingChanges();
  changes.forEach((c) => p.add(c));
  return p;
};
const known = () => true;

describe('targetsToPlan', () => {
  it.each<[string, Change[], string[]]>([
    ['nothing changed: nothing', [], []],
    ['everything: all, in order', [EVERYTHING], names(TARGETS)],
    ['a target on a shared CLB: every target on that CLB', [{ target: 'Service/a/web' }], ['a/web', 'a/api']],
    ['a CLB: its targets', [{ clb: 'lb-2' }], ['a/db']],
    ['a CLB no target is bound to: nothing', [{ clb: 'lb-9' }], []],
    ['a target without a CLB: itself', [{ target: 'Service/b/internal' }], ['b/internal']],
    ['a namespace: its targets, with their CLBs\' other targets', [{ namespace: 'b' }], ['b/x', 'b/internal']],
    ['a target gone (not among them): nothing', [{ target: 'Service/a/gone' }], []],
    ['two changes: their union', [{ clb: 'lb-3' }, { target: 'Service/a/cache' }], ['b/x', 'a/cache']],
  ])('%s', (_what, changes, expected) => {
    expect(names(targetsToPlan(TARGETS, pendingOf(...changes), known))).toEqual(expected);
  });

  it('a target never planned is planned, with its CLB\'s other targets', () => {
    expect(names(targetsToPlan(TARGETS, pendingOf(), (k) => k !== 'Service/a/api'))).toEqual(['a/web', 'a/api']);
  });
});
