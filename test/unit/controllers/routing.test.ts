// Which policies an informer event concerns: a namespace's changes reach its own policies and the cluster policies
// covering it (delayed, to coalesce bursts), never every cluster policy; status writes and label-less namespace updates
// reach nobody.
import { describe, expect, it } from '@jest/globals';
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
  const router = new PolicyEventRouter(
    { add: (k) => void added.push(k), addAfter: (k, ms) => void later.push([k, ms]) },
    {
      policies: (ns?: string) => policies.filter((p) => ns === undefined || p.metadata.namespace === ns),
      clusterPolicies: () => clusters,
      namespace: (name) => (labels[name] ? { name, labels: labels[name] } : undefined),
      ownNamespace: 'loopguard-system',
      livePolicy: () => true,
      liveClusterPolicy: () => true,
    },
    () => void changes.push(1),
  );
  return { router, added, later, changes };
}

describe('PolicyEventRouter', () => {
  it("a target's change: its namespace's policies at once, the covering cluster policies after a delay", () => {
    const w = world();
    w.router.target('shop');
    expect(w.added).toEqual(['shop/own']);
    expect(w.later).toEqual([
      ['ClusterLoopbackPolicy/teams', CLUSTER_CHURN_DELAY_MS],
      ['ClusterLoopbackPolicy/all', CLUSTER_CHURN_DELAY_MS],
    ]);
    const k = world();
    k.router.target('kube-system');
    expect(k.later).toEqual([]);
  });

  it('a LoopbackPolicy: itself and the cluster policies covering its namespace; its own status write: nothing', () => {
    const w = world();
    w.router.policy(lbp('blog', 'mine'));
    expect(w.added).toEqual(['blog/mine', 'ClusterLoopbackPolicy/all']);
    w.router.policy(lbp('blog', 'mine'));
    expect(w.added).toHaveLength(2);
    w.router.policy(lbp('blog', 'mine', 2));
    expect(w.added).toHaveLength(4);
    expect(w.changes).toHaveLength(2);
  });

  it('a cluster policy: itself and every LoopbackPolicy', () => {
    const w = world();
    w.router.clusterPolicy(clbp('teams', {}));
    expect(w.added).toEqual(['ClusterLoopbackPolicy/teams', 'shop/own', 'blog/mine']);
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
  });
});
