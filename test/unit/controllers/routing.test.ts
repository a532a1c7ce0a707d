// Which policies an informer event or a changed CLB read concerns, and what of each (pending.ts): a namespace's
// changes reach its own policies and the cluster policies covering it (delayed, to coalesce bursts), never every
// cluster policy; a CLB's, every policy with targets on it but the reader; status writes and label-less namespace
// updates reach nobody.
import { describe, expect, it } from '@jest/globals';
import type { Change } from '../../../src/controllers/policy/pending.js';
import { CLUSTER_CHURN_DELAY_MS, PolicyEventRouter } from '../../../src/controllers/policy/routing.js';

const lbp = (namespace: string, name: string, generation = 1) => ({ metadata: { namespace, name, generation } });
const clbp = (name: string, spec: unknown, generation = 1) => ({ metadata: { name, generation }, spec });

function world() {
  const added: string[] = [];
  const later: [string, number][] = [];
  const policies = [lbp('shop', 'own'), lbp('blog', 'mine')];
  const clusters = [clbp('teams', { namespaceSelector: { matchLabels: { team: 'a' } } }), clbp('all', {})];
  const labels: Record<string, Record<string, string>> = { shop: { team: 'a' }, blog: { team: 'b' }, 'kube-system': {} };
  const changes: number[] = [];
  const touched: [string, Change][] = [];
  /** Which policies have targets on which CLB (as the controller knows from their last rounds). */
  const on: Record<string, string[]> = { 'lb-shared': ['shop/own', 'blog/mine'] };
  const router = new PolicyEventRouter(
    { add: (k) => void added.push(k), addAfter: (k, ms) => void later.push([k, ms]) },
    {
      policies: (ns?: string) => policies.filter((p) => ns === undefined || p.metadata.namespace === ns) as never,
      clusterPolicies: () => clusters as never,
      namespace: (name) => (labels[name] ? { name, labels: labels[name] } : undefined),
      ownNamespace: 'loopguard-system',
      policy: () => ({}) as never,
      clusterPolicy: () => ({}) as never,
    },
    { touch: (k, c) => void touched.push([k, c]), policiesOn: (clb) => on[clb] ?? [] },
    () => void changes.push(1),
  );
  return { router, added, later, changes, touched };
}

describe('PolicyEventRouter', () => {
  it("a target's change: its namespace's policies at once, the covering cluster policies after a delay", () => {
    const w = world();
    const web = { target: 'Service/shop/web' };
    w.router.target('shop', 'Service/shop/web', undefined);
    expect(w.added).toEqual(['shop/own']);
    expect(w.later).toEqual([
      ['ClusterLoopbackPolicy/teams', CLUSTER_CHURN_DELAY_MS],
      ['ClusterLoopbackPolicy/all', CLUSTER_CHURN_DELAY_MS],
    ]);
    expect(w.touched).toEqual([
      ['shop/own', web],
      ['ClusterLoopbackPolicy/teams', web],
      ['ClusterLoopbackPolicy/all', web],
    ]);
    const k = world();
    k.router.target('kube-system', 'Service/kube-system/dns', undefined);
    expect(k.later).toEqual([]);
    // Nothing of namespace shop reaches a policy of namespace blog.
    expect(w.touched.map(([k]) => k)).not.toContain('blog/mine');
  });

  it("a target on a CLB: besides its namespace's policies, every policy with targets on that CLB, for that CLB", () => {
    const w = world();
    w.router.target('blog', 'Service/blog/api', 'lb-shared');
    expect(w.added).toEqual(['blog/mine', 'shop/own', 'blog/mine']);
    expect(w.touched).toEqual([
      ['blog/mine', { target: 'Service/blog/api' }],
      ['ClusterLoopbackPolicy/all', { target: 'Service/blog/api' }],
      ['shop/own', { clb: 'lb-shared' }],
      ['blog/mine', { clb: 'lb-shared' }],
    ]);
  });

  it('a target that moves to another CLB, or is deleted: the CLB it left too', () => {
    const w = world();
    w.router.target('blog', 'Service/blog/api', 'lb-shared');
    w.touched.length = 0;
    w.router.target('blog', 'Service/blog/api', 'lb-new');
    expect(w.touched.filter(([, c]) => 'clb' in c)).toEqual([
      ['shop/own', { clb: 'lb-shared' }],
      ['blog/mine', { clb: 'lb-shared' }],
    ]);
    w.router.target('blog', 'Service/blog/api', 'lb-shared');
    w.touched.length = 0;
    w.router.target('blog', 'Service/blog/api', 'lb-shared', true);
    expect(w.touched.filter(([, c]) => 'clb' in c)).toHaveLength(2);
    w.touched.length = 0;
    // Deleted: forgotten; an event after that names no CLB it left.
    w.router.target('blog', 'Service/blog/api', undefined);
    expect(w.touched.filter(([, c]) => 'clb' in c)).toEqual([]);
  });

  it("a CLB read that differs: the policies with targets on it, for that CLB", () => {
    const w = world();
    w.router.clb('lb-shared');
    expect(w.added).toEqual(['shop/own', 'blog/mine']);
    expect(w.touched).toEqual([
      ['shop/own', { clb: 'lb-shared' }],
      ['blog/mine', { clb: 'lb-shared' }],
    ]);
    w.router.clb('lb-other');
    expect(w.added).toHaveLength(2);
  });

  it("a record: its target, and the policies on its target's CLB; a TkeServiceConfig: the Ingresses it governs", () => {
    const w = world();
    w.router.record({ kind: 'Service', namespace: 'shop', name: 'web' }, 'lb-shared');
    expect(w.touched).toEqual([
      ['shop/own', { target: 'Service/shop/web' }],
      ['ClusterLoopbackPolicy/teams', { target: 'Service/shop/web' }],
      ['ClusterLoopbackPolicy/all', { target: 'Service/shop/web' }],
      ['shop/own', { clb: 'lb-shared' }],
      ['blog/mine', { clb: 'lb-shared' }],
    ]);
    const c = world();
    c.router.config('blog', 'api-config');
    expect(c.touched).toEqual([
      ['blog/mine', { config: 'blog/api-config' }],
      ['ClusterLoopbackPolicy/all', { config: 'blog/api-config' }],
    ]);
  });

  it("an Ingress (managed by a policy or not): itself and the Ingresses of its TkeServiceConfig; one that names another config: both configs'", () => {
    const w = world();
    w.router.target('blog', 'Ingress/blog/web', undefined, false, 'web-auto-ingress-config');
    expect(w.touched).toEqual([
      ['blog/mine', { target: 'Ingress/blog/web' }],
      ['ClusterLoopbackPolicy/all', { target: 'Ingress/blog/web' }],
      ['blog/mine', { config: 'blog/web-auto-ingress-config' }],
      ['ClusterLoopbackPolicy/all', { config: 'blog/web-auto-ingress-config' }],
    ]);
    w.touched.length = 0;
    w.router.target('blog', 'Ingress/blog/web', undefined, false, 'shared-config');
    expect(w.touched.filter(([, c]) => 'config' in c)).toEqual([
      ['blog/mine', { config: 'blog/web-auto-ingress-config' }],
      ['ClusterLoopbackPolicy/all', { config: 'blog/web-auto-ingress-config' }],
      ['blog/mine', { config: 'blog/shared-config' }],
      ['ClusterLoopbackPolicy/all', { config: 'blog/shared-config' }],
    ]);
    w.touched.length = 0;
    // Deleted: its config's Ingresses once more (a shared config may be no one else's now).
    w.router.target('blog', 'Ingress/blog/web', undefined, true, 'shared-config');
    expect(w.touched.filter(([, c]) => 'config' in c)).toEqual([
      ['blog/mine', { config: 'blog/shared-config' }],
      ['ClusterLoopbackPolicy/all', { config: 'blog/shared-config' }],
    ]);
  });

  it("a LoopbackPolicy: itself, its namespace's other LoopbackPolicies and the cluster policies covering it; its own status write: nothing", () => {
    const other = world();
    other.router.policy(lbp('shop', 'new'));
    expect(other.added).toEqual(['shop/new', 'shop/own', 'ClusterLoopbackPolicy/teams', 'ClusterLoopbackPolicy/all']);
    expect(other.touched.slice(1, 2)).toEqual([['shop/own', { all: true }]]);
    const w = world();
    w.router.policy(lbp('blog', 'mine'));
    expect(w.added).toEqual(['blog/mine', 'ClusterLoopbackPolicy/all']);
    w.router.policy(lbp('blog', 'mine'));
    expect(w.added).toHaveLength(2);
    w.router.policy(lbp('blog', 'mine', 2));
    expect(w.added).toHaveLength(4);
    expect(w.changes).toHaveLength(2);
    // Its own targets all; of the cluster policy's, only those of its namespace (precedence may move them).
    expect(w.touched.slice(0, 2)).toEqual([
      ['blog/mine', { all: true }],
      ['ClusterLoopbackPolicy/all', { namespace: 'blog' }],
    ]);
  });

  it("its finalizers or deletion only: itself and the covering cluster policies queued, nothing to plan again (loopguard's own finalizer write)", () => {
    const w = world();
    w.router.policy(lbp('blog', 'mine'));
    w.touched.length = 0;
    w.router.policy({ metadata: { ...lbp('blog', 'mine').metadata, finalizers: ['loopguard.dev/revert'] } });
    expect(w.added.slice(2)).toEqual(['blog/mine', 'ClusterLoopbackPolicy/all']);
    expect(w.touched).toEqual([]);
    w.router.policy({ metadata: { ...lbp('blog', 'mine', 2).metadata, finalizers: ['loopguard.dev/revert'] } });
    expect(w.touched).toEqual([
      ['blog/mine', { all: true }],
      ['ClusterLoopbackPolicy/all', { namespace: 'blog' }],
    ]);
  });

  it('a cluster policy: itself and every other policy, each to plan again', () => {
    const w = world();
    w.router.clusterPolicy(clbp('teams', {}));
    expect(w.added).toEqual(['ClusterLoopbackPolicy/teams', 'shop/own', 'blog/mine', 'ClusterLoopbackPolicy/all']);
    expect(w.touched.map(([k, c]) => `${k} ${JSON.stringify(c)}`)).toEqual(w.added.map((k) => `${k} {"all":true}`));
  });

  it('a namespace: only when created, relabelled or deleted; then every cluster policy', () => {
    const w = world();
    w.router.namespace({ metadata: { name: 'blog', labels: { team: 'b' } } }, false);
    expect(w.added).toEqual(['blog/mine', 'ClusterLoopbackPolicy/teams', 'ClusterLoopbackPolicy/all']);
    w.router.namespace({ metadata: { name: 'blog', labels: { team: 'b' } } }, false);
    expect(w.added).toHaveLength(3);
    w.router.namespace({ metadata: { name: 'blog', labels: { team: 'a' } } }, false);
    expect(w.added).toHaveLength(6);
    w.router.namespace({ metadata: { name: 'blog' } }, true);
    expect(w.added).toHaveLength(9);
    expect(w.touched.slice(0, 3)).toEqual([
      ['blog/mine', { all: true }],
      ['ClusterLoopbackPolicy/teams', { namespace: 'blog' }],
      ['ClusterLoopbackPolicy/all', { namespace: 'blog' }],
    ]);
  });
});
