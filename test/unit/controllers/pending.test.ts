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

  // Ingresses sharing a TkeServiceConfig across CLBs (shared-config decisions need them together), and a Service on
  // one of those CLBs (shared-CLB decisions): joined until nothing more shares a CLB or a config.
  const ing = (name: string, loadBalancerId: string, config?: string) => ({
    kind: 'Ingress' as const,
    namespace: 'a',
    name,
    loadBalancerId,
    annotations: (config ? { 'ingress.cloud.tencent.com/tke-service-config': config } : { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' }) as Record<string, string>,
  });
  const L7 = [ing('shop', 'lb-7', 'shared'), ing('blog', 'lb-8', 'shared'), svc('a', 'beside-blog', 'lb-8'), ing('solo', 'lb-9'), svc('a', 'elsewhere', 'lb-10')];
  it.each<[string, Change[], string[]]>([
    ['a TkeServiceConfig: the Ingresses it governs, and what shares their CLBs', [{ config: 'a/shared' }], ['a/shop', 'a/blog', 'a/beside-blog']],
    ["an Ingress: its config-mates on other CLBs, and theirs' CLB-mates", [{ target: 'Ingress/a/shop' }], ['a/shop', 'a/blog', 'a/beside-blog']],
    ['a Service on a config-mate\'s CLB: that CLB and the config it joins', [{ target: 'Service/a/beside-blog' }], ['a/shop', 'a/blog', 'a/beside-blog']],
    ['an Ingress with its own -auto config: itself', [{ target: 'Ingress/a/solo' }], ['a/solo']],
    ['the auto config of it: that Ingress', [{ config: 'a/solo-auto-ingress-config' }], ['a/solo']],
    ['a config no Ingress names: nothing', [{ config: 'a/other' }], []],
  ])('%s', (_what, changes, expected) => {
    expect(names(targetsToPlan(L7, pendingOf(...changes), known))).toEqual(expected);
  });

  it('a target never planned is planned, with its CLB\'s other targets', () => {
    expect(names(targetsToPlan(TARGETS, pendingOf(), (k) => k !== 'Service/a/api'))).toEqual(['a/web', 'a/api']);
  });
});
