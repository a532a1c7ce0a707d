// One report per namespace, fed by every policy governing it (docs/cluster-policy.md §8): the union of what each policy
// published last, a loser's conflict left out, and pruning only once every policy has published.
import { describe, expect, it } from '@jest/globals';
import { NamespaceReports } from '../../../src/controllers/policy/namespace-reports.js';
import type { ReportTarget } from '../../../src/model/namespace-report.js';

const t = (name: string, policy: string, rootCause = 'PodSourceNotMasqueraded', verdict: ReportTarget['verdict'] = 'AtRisk'): ReportTarget => ({ apiVersion: 'v1', kind: 'Service', name, verdict, rootCause, message: 'm', mode: 'Audit', policy, plan: [] });

function world(owners: string[]) {
  const synced: [string, string[]][] = [];
  const pruned: string[][] = [];
  const writer = {
    sync: async (ns: string, targets: readonly ReportTarget[]) => {
      synced.push([ns, targets.map((x) => `${x.policy}:${x.name}`).sort()]);
      return 'loopguard';
    },
    prune: async (covered: ReadonlySet<string>) => void pruned.push([...covered].sort()),
    available: async () => true,
  };
  const reports = new NamespaceReports(writer, { warn: () => undefined } as never, () => owners);
  return { reports, synced, pruned };
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
});
