// One report per namespace, fed by every policy governing it (docs/reports.md): the union of what each policy
// published last, a loser's conflict left out, nothing written or pruned before every policy has published; the
// writes are the controller's own work on the queue (a key per namespace and one for the prune), a failure the
// queue's retry.
import { describe, expect, it } from '@jest/globals';
import { NamespaceReports, PRUNE_KEY, reportKey } from '../../../src/controllers/policy/namespace-reports.js';
import type { ReportTarget } from '../../../src/model/namespace-report.js';

const t = (name: string, policy: string, rootCause = 'PodSourceNotMasqueraded', verdict: ReportTarget['verdict'] = 'AtRisk'): ReportTarget => ({ apiVersion: 'v1', kind: 'Service', name, verdict, rootCause, message: 'm', mode: 'Audit', policy, plan: [] });

function world(owners: string[]) {
  const synced: [string, string[]][] = [];
  const pruned: string[][] = [];
  /** Namespaces whose sync fails (until removed), and whether the next prune fails. */
  const failing = { sync: new Set<string>(), prune: false };
  const writer = {
    sync: async (ns: string, targets: readonly ReportTarget[]) => {
      if (failing.sync.has(ns)) throw new Error(`apiserver refused ${ns}`);
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
  /** The work queue as far as the controller sees it: a set of keys (a key queued twice runs once). */
  const queued = new Set<string>();
  let namesChanged = 0;
  const reports = new NamespaceReports(writer, { warn: () => undefined } as never, () => owners, { add: (k) => void queued.add(k) }, () => void namesChanged++);
  /** Runs the queued keys as the queue would, until none is left; a failed key is kept, as for the queue's retry. */
  const drain = async () => {
    const failed: string[] = [];
    while (queued.size > 0) {
      const [key] = queued as unknown as [string];
      queued.delete(key);
      await reports.reconcile(key).catch(() => failed.push(key));
    }
    failed.forEach((k) => queued.add(k));
    return failed;
  };
  return { reports, synced, pruned, failing, owners, queued, drain, namesChanged: () => namesChanged };
}

describe('NamespaceReports', () => {
  it("a namespace's report holds every policy's targets; a loser's conflict stays out", async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', [t('web', 'ClusterLoopbackPolicy/p', 'PolicyPrecedence', 'Conflict'), t('api', 'ClusterLoopbackPolicy/p')]], ['blog', []]]));
    w.reports.publish('shop/own', new Map([['shop', [t('web', 'LoopbackPolicy/own')]]]));
    expect(await w.drain()).toEqual([]);
    expect(w.synced).toContainEqual(['shop', ['ClusterLoopbackPolicy/p:api', 'LoopbackPolicy/own:web']]);
    expect(w.synced).toHaveLength(2);
    // Both published: the reports of namespaces nobody governs were pruned once, keeping shop and blog.
    expect(w.pruned).toEqual([['blog', 'shop']]);
    // The names as written, for the cluster policy's status.
    expect(w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]))).toEqual(new Map([['shop', 'loopguard'], ['blog', 'loopguard']]));
  });

  it('writes and prunes nothing before every policy has published (a new process), then prunes a namespace a policy left', async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    await w.drain();
    expect(w.pruned).toEqual([]);
    expect(w.synced).toEqual([]);
    w.reports.publish('shop/own', new Map([['shop', []]]));
    await w.drain();
    expect(w.pruned).toHaveLength(1);
    // The reports held back are written once, complete.
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['blog', 'shop']);
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    await w.drain();
    expect(w.pruned.at(-1)).toEqual(['shop']);
  });

  it('a forgotten policy leaves the reports; a namespace still governed by another keeps its report', async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', [t('api', 'ClusterLoopbackPolicy/p')]], ['blog', [t('x', 'ClusterLoopbackPolicy/p')]]]));
    w.reports.publish('shop/own', new Map([['shop', [t('web', 'LoopbackPolicy/own')]]]));
    await w.drain();
    w.reports.forget('ClusterLoopbackPolicy/p');
    expect(w.queued).toEqual(new Set([reportKey('shop'), reportKey('blog')]));
    await w.drain();
    expect(w.synced.at(-1)).toEqual(['shop', ['LoopbackPolicy/own:web']]);
    expect(w.pruned.at(-1)).toEqual(['shop']);
  });

  it("a namespace whose write fails holds back no other: its key is the queue's retry, from the results kept", async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'dev/own']);
    w.failing.sync.add('blog');
    w.reports.publish('dev/own', new Map([['dev', []]]));
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['blog', [t('x', 'ClusterLoopbackPolicy/p')]], ['shop', [t('api', 'ClusterLoopbackPolicy/p')]], ['dev', []]]));
    expect(await w.drain()).toEqual([reportKey('blog')]);
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['dev', 'shop']);
    expect(w.pruned).toEqual([['blog', 'dev', 'shop']]);
    w.failing.sync.delete('blog');
    expect(await w.drain()).toEqual([]);
    expect(w.synced.at(-1)).toEqual(['blog', ['ClusterLoopbackPolicy/p:x']]);
  });

  it('a failed prune is retried by the queue', async () => {
    const w = world(['ClusterLoopbackPolicy/p']);
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    await w.drain();
    w.failing.prune = true;
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    expect(await w.drain()).toEqual([PRUNE_KEY]);
    expect(await w.drain()).toEqual([]);
    expect(w.pruned).toEqual([['blog', 'shop'], ['shop']]);
  });

  it("names changed: told when a namespace's report is first written or pruned; not when written again", async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    // Waiting for shop/own: nothing written, nothing changed; the names are not complete yet.
    expect(w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]))).toEqual(new Map());
    await w.drain();
    expect(w.namesChanged()).toBe(0);
    w.reports.publish('shop/own', new Map([['shop', []]]));
    await w.drain();
    expect(w.namesChanged()).toBe(2);
    // Written again, same names: nothing to tell (the cluster policies do not come back).
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    await w.drain();
    expect(w.namesChanged()).toBe(2);
    // The cluster policy leaves blog: its report is pruned, a change.
    w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    await w.drain();
    expect(w.pruned.at(-1)).toEqual(['shop']);
    expect(w.namesChanged()).toBe(3);
  });
});
