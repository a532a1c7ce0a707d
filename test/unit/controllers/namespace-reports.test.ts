// One report per namespace, fed by every policy governing it (docs/cluster-policy.md §8): the union of what each policy
// published last, a loser's conflict left out, and pruning only once every policy has published.
import { describe, expect, it } from '@jest/globals';
import { NamespaceReports } from '../../../src/controllers/policy/namespace-reports.js';
import type { ReportTarget } from '../../../src/model/namespace-report.js';

const t = (name: string, policy: string, rootCause = 'PodSourceNotMasqueraded', verdict: ReportTarget['verdict'] = 'AtRisk'): ReportTarget => ({ apiVersion: 'v1', kind: 'Service', name, verdict, rootCause, message: 'm', mode: 'Audit', policy, plan: [] });

function world(owners: string[]) {
  const synced: [string, string[]][] = [];
  const pruned: string[][] = [];
  /** Namespaces whose next sync fails (once each), and whether the next prune fails. */
  const failing = { sync: new Set<string>(), prune: false };
  const writer = {
    sync: async (ns: string, targets: readonly ReportTarget[]) => {
      if (failing.sync.delete(ns)) throw new Error(`apiserver refused ${ns}`);
      synced.push([ns, targets.map((x) => `${x.policy}:${x.name}`).sort()]);
      return 'loopguard';
    },
    prune: async (covered: ReadonlySet<string>) => {
      if (failing.prune) {
        failing.prune = false;
        throw new Error('apiserver refused the prune');
      }
      pruned.push([...covered].sort());
    },
    available: async () => true,
  };
  const reports = new NamespaceReports(writer, { warn: () => undefined } as never, () => owners);
  return { reports, synced, pruned, failing };
}

describe('NamespaceReports', () => {
  it("a namespace's report holds every policy's targets; a loser's conflict stays out", async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', [t('web', 'ClusterLoopbackPolicy/p', 'PolicyPrecedence', 'Conflict'), t('api', 'ClusterLoopbackPolicy/p')]], ['blog', []]]));
    const names = await w.reports.publish('shop/own', new Map([['shop', [t('web', 'LoopbackPolicy/own')]]]));
    expect(names).toEqual(new Map([['blog', 'loopguard'], ['shop', 'loopguard']]));
    expect(w.synced).toContainEqual(['shop', ['ClusterLoopbackPolicy/p:api', 'LoopbackPolicy/own:web']]);
    expect(w.synced).toHaveLength(2);
    // Both published: the reports of namespaces nobody governs were pruned once, keeping shop and blog.
    expect(w.pruned).toEqual([['blog', 'shop']]);
  });

  it('writes and prunes nothing before every policy has published (a new process), then prunes a namespace a policy left', async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    expect(w.pruned).toEqual([]);
    expect(w.synced).toEqual([]);
    await w.reports.publish('shop/own', new Map([['shop', []]]));
    expect(w.pruned).toHaveLength(1);
    // The reports held back are written once, complete.
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['blog', 'shop']);
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    expect(w.pruned.at(-1)).toEqual(['shop']);
  });

  it('a forgotten policy leaves the reports; a namespace still governed by another keeps its report', async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', [t('api', 'ClusterLoopbackPolicy/p')]], ['blog', [t('x', 'ClusterLoopbackPolicy/p')]]]));
    await w.reports.publish('shop/own', new Map([['shop', [t('web', 'LoopbackPolicy/own')]]]));
    await w.reports.forget('ClusterLoopbackPolicy/p');
    expect(w.synced.at(-1)).toEqual(['shop', ['LoopbackPolicy/own:web']]);
    expect(w.pruned.at(-1)).toEqual(['shop']);
  });

  it('a failed write is written by retry (a quiet round publishes nothing) from the results kept; nothing owed, retry writes nothing', async () => {
    const w = world(['ClusterLoopbackPolicy/p']);
    w.failing.sync.add('blog');
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', [t('api', 'ClusterLoopbackPolicy/p')]], ['blog', [t('x', 'ClusterLoopbackPolicy/p')]], ['dev', []]]));
    // shop went through; blog failed, and dev after it was not reached; the first prune was not made either.
    expect(w.synced.map(([ns]) => ns)).toEqual(['shop']);
    expect(w.pruned).toEqual([]);
    await w.reports.retry();
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['blog', 'dev', 'shop']);
    expect(w.synced).toContainEqual(['blog', ['ClusterLoopbackPolicy/p:x']]);
    expect(w.pruned).toEqual([['blog', 'dev', 'shop']]);
    await w.reports.retry();
    expect(w.synced).toHaveLength(3);
    expect(w.pruned).toHaveLength(1);
  });

  it('a failed prune (a namespace every policy left) is owed until a write makes it', async () => {
    const w = world(['ClusterLoopbackPolicy/p']);
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    w.failing.prune = true;
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    expect(w.pruned).toEqual([['blog', 'shop']]);
    await w.reports.retry();
    expect(w.pruned).toEqual([['blog', 'shop'], ['shop']]);
  });
});
