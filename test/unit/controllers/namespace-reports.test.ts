// One report per namespace, fed by every policy governing it (docs/reports.md): when its key runs, the union of what
// each policy covering the namespace says there now (targets.ts namespaceResults, tested in policy-targets.test.ts,
// which also keeps a loser's conflict out); nothing written or pruned while a live policy has no outcomes yet; a round
// queues only the namespaces it changed; the writes are the controller's own work on the queue (a key per namespace
// and one for the prune), a failure the queue's retry.
import { describe, expect, it } from '@jest/globals';
import { NamespaceReports, PRUNE_KEY, reportKey } from '../../../src/controllers/policy/namespace-reports.js';
import type { ReportTarget } from '../../../src/model/namespace-report.js';

const RESYNC_MS = 60_000;
const t = (name: string, policy: string): ReportTarget => ({ apiVersion: 'v1', kind: 'Service', name, verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded', message: 'm', mode: 'Audit', policy, plan: [] });

/** A policy as the reports read it: what it says per namespace it covers ([]: no target there); unplanned: no outcomes yet. */
interface Policy {
  covers: Record<string, ReportTarget[]>;
  planned: boolean;
}

function world(policies: Record<string, Policy>) {
  /** The writes, as report-writer.ts makes them: only when the report differs from the one stored. */
  const synced: [string, string[]][] = [];
  const stored = new Map<string, string>();
  const pruned: string[][] = [];
  /** Namespaces whose sync fails (until removed), whether the next prune fails, whether OpenReports is installed. */
  const failing = { sync: new Set<string>(), prune: false };
  const served = { value: true };
  const writer = {
    sync: async (ns: string, targets: readonly ReportTarget[]) => {
      if (failing.sync.has(ns)) throw new Error(`apiserver refused ${ns}`);
      if (!served.value) return undefined;
      const content = targets.map((x) => `${x.policy}:${x.name}`).sort();
      if (stored.get(ns) !== JSON.stringify(content)) synced.push([ns, content]);
      stored.set(ns, JSON.stringify(content));
      return 'loopguard';
    },
    prune: async (covered: ReadonlySet<string>) => {
      if (failing.prune) {
        failing.prune = false;
        throw new Error('apiserver refused the prune');
      }
      pruned.push([...covered].sort());
      for (const ns of [...stored.keys()]) if (!covered.has(ns)) stored.delete(ns);
    },
    available: async () => served.value,
  };
  const all = () => Object.values(policies);
  const results = (ns: string) => {
    const covering = Object.entries(policies).filter(([, p]) => ns in p.covers);
    return covering.some(([, p]) => !p.planned) ? undefined : new Map(covering.map(([owner, p]) => [owner, p.covers[ns]!]));
  };
  const covered = () => (all().some((p) => !p.planned) ? undefined : new Set(all().flatMap((p) => Object.keys(p.covers))));
  /** The work queue as far as the controller sees it: a set of keys (a key queued twice runs once). */
  const queued = new Set<string>();
  let namesChanged = 0;
  const reports = new NamespaceReports(writer, results, covered, { add: (k) => void queued.add(k) }, RESYNC_MS, () => void namesChanged++);
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
  /** A policy's round: what it says now, then the namespaces it changed (`coverage`: which it covers may have too). */
  const round = async (owner: string, covers: Record<string, ReportTarget[]>, changed: string[] = Object.keys(covers), coverage = true) => {
    policies[owner] = { covers, planned: true };
    reports.changed(changed, coverage);
  };
  return { reports, synced, pruned, failing, served, policies, queued, drain, round, namesChanged: () => namesChanged };
}

const cluster = 'ClusterLoopbackPolicy/p';
const unplanned = (...namespaces: string[]): Policy => ({ covers: Object.fromEntries(namespaces.map((ns) => [ns, []])), planned: false });

describe('NamespaceReports', () => {
  it("a namespace's report holds every covering policy's targets, read when its key runs", async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog'), 'shop/own': unplanned('shop') });
    await w.round(cluster, { shop: [t('api', cluster)], blog: [] });
    await w.round('shop/own', { shop: [t('web', 'LoopbackPolicy/own')] });
    expect(await w.drain()).toEqual([]);
    expect(w.synced.sort()).toEqual([
      ['blog', []],
      ['shop', [`${cluster}:api`, 'LoopbackPolicy/own:web']],
    ]);
    // Both planned: the reports of namespaces nobody governs were pruned once, keeping shop and blog.
    expect(w.pruned).toEqual([['blog', 'shop']]);
    // The names as written, for the cluster policy's status.
    expect(w.reports.names).toEqual(new Map([['shop', 'loopguard'], ['blog', 'loopguard']]));
  });

  it('writes no namespace a live policy without outcomes covers (a new process), and prunes nothing, until its first round', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog'), 'shop/own': unplanned('shop') });
    await w.round(cluster, { shop: [], blog: [] });
    await w.drain();
    expect(w.pruned).toEqual([]);
    // blog is complete already: only the cluster policy covers it.
    expect(w.synced).toEqual([['blog', []]]);
    // The last policy's first round: its own namespace, and the prune, which queues every covered one not written yet.
    await w.round('shop/own', { shop: [] });
    await w.drain();
    expect(w.pruned).toHaveLength(1);
    expect(w.synced.map(([ns]) => ns)).toEqual(['blog', 'shop']);
    // The cluster policy leaves blog (a namespace relabelled): the prune removes its report.
    await w.round(cluster, { shop: [] }, ['blog']);
    await w.drain();
    expect(w.pruned.at(-1)).toEqual(['shop']);
    expect(w.reports.names).toEqual(new Map([['shop', 'loopguard']]));
  });

  it('a new policy holds only the namespaces it covers until its first round', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog') });
    await w.round(cluster, { shop: [t('api', cluster)], blog: [] });
    await w.drain();
    w.policies['shop/own'] = unplanned('shop');
    await w.round(cluster, { shop: [t('api', cluster), t('db', cluster)], blog: [t('x', cluster)] }, ['shop', 'blog'], false);
    await w.drain();
    // blog is written; shop waits for shop/own, and so does the prune.
    expect(w.synced.filter(([ns]) => ns === 'shop')).toEqual([['shop', [`${cluster}:api`]]]);
    expect(w.synced.at(-1)).toEqual(['blog', [`${cluster}:x`]]);
    await w.round('shop/own', { shop: [t('web', 'LoopbackPolicy/own')] });
    await w.drain();
    expect(w.synced.at(-1)).toEqual(['shop', [`${cluster}:api`, `${cluster}:db`, 'LoopbackPolicy/own:web']]);
  });

  it('a round queues only the namespaces it changed; the prune only when coverage may have changed', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog', 'docs') });
    await w.round(cluster, { shop: [], blog: [], docs: [] });
    await w.drain();
    await w.round(cluster, { shop: [t('api', cluster)], blog: [], docs: [] }, ['shop'], false);
    expect(w.queued).toEqual(new Set([reportKey('shop')]));
    await w.round(cluster, { shop: [t('api', cluster)], blog: [], docs: [] }, [], false);
    expect(w.queued).toEqual(new Set([reportKey('shop')]));
  });

  it('the prune comes back once per resync and queues every covered namespace (the writer reads each stored report again then); held, it waits for the round or the next resync', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog') });
    await w.round(cluster, { shop: [], blog: [] });
    w.queued.clear();
    expect(await w.reports.reconcile(PRUNE_KEY)).toEqual({ requeueAfterMs: RESYNC_MS });
    expect(w.queued).toEqual(new Set([reportKey('shop'), reportKey('blog')]));
    w.policies['shop/own'] = unplanned('shop');
    w.queued.clear();
    // Held: nothing pruned or queued now; back at the resync anyway (a policy whose rounds keep failing holds it no longer).
    expect(await w.reports.reconcile(PRUNE_KEY)).toEqual({ requeueAfterMs: RESYNC_MS });
    expect(w.queued).toEqual(new Set());
  });

  it('a policy gone leaves the reports; a namespace still governed by another keeps its report', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog'), 'shop/own': unplanned('shop') });
    await w.round(cluster, { shop: [t('api', cluster)], blog: [t('x', cluster)] });
    await w.round('shop/own', { shop: [t('web', 'LoopbackPolicy/own')] });
    await w.drain();
    // PolicyController.forgetPolicy: the namespaces it had targets in, and the prune.
    delete w.policies[cluster];
    w.reports.changed(['shop', 'blog'], true);
    expect(w.queued).toEqual(new Set([reportKey('shop'), reportKey('blog'), PRUNE_KEY]));
    await w.drain();
    expect(w.synced.at(-1)).toEqual(['shop', ['LoopbackPolicy/own:web']]);
    expect(w.pruned.at(-1)).toEqual(['shop']);
  });

  it("a namespace whose write fails holds back no other: its key is the queue's retry, from what the policies say then", async () => {
    const w = world({ [cluster]: unplanned('blog', 'shop', 'dev'), 'dev/own': unplanned('dev') });
    w.failing.sync.add('blog');
    await w.round('dev/own', { dev: [] });
    await w.round(cluster, { blog: [t('x', cluster)], shop: [t('api', cluster)], dev: [] });
    expect(await w.drain()).toEqual([reportKey('blog')]);
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['dev', 'shop']);
    expect(w.pruned).toEqual([['blog', 'dev', 'shop']]);
    w.failing.sync.delete('blog');
    w.policies[cluster]!.covers.blog = [t('y', cluster)];
    expect(await w.drain()).toEqual([]);
    expect(w.synced.at(-1)).toEqual(['blog', [`${cluster}:y`]]);
  });

  it('a failed prune is retried by the queue', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog') });
    await w.round(cluster, { shop: [], blog: [] });
    await w.drain();
    w.failing.prune = true;
    await w.round(cluster, { shop: [] }, []);
    expect(await w.drain()).toEqual([PRUNE_KEY]);
    expect(await w.drain()).toEqual([]);
    expect(w.pruned).toEqual([['blog', 'shop'], ['shop']]);
  });

  it("names changed: told when a namespace's report is first written or pruned; not when written again", async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog'), 'shop/own': unplanned('shop') });
    // shop waits for shop/own: only blog's name so far.
    await w.round(cluster, { shop: [], blog: [] });
    await w.drain();
    expect(w.namesChanged()).toBe(1);
    expect(w.reports.names).toEqual(new Map([['blog', 'loopguard']]));
    await w.round('shop/own', { shop: [] });
    await w.drain();
    expect(w.namesChanged()).toBe(2);
    // Written again, same names: nothing to tell (the cluster policies do not come back).
    await w.round(cluster, { shop: [], blog: [] });
    await w.drain();
    expect(w.namesChanged()).toBe(2);
    // The cluster policy leaves blog: its report is pruned, a change.
    await w.round(cluster, { shop: [] }, []);
    await w.drain();
    expect(w.pruned.at(-1)).toEqual(['shop']);
    expect(w.namesChanged()).toBe(3);
  });

  it('without OpenReports nothing is written and the prune comes back each resync; installed, it has every report written; removed, the names go', async () => {
    const w = world({ [cluster]: unplanned('shop', 'blog') });
    w.served.value = false;
    await w.round(cluster, { shop: [], blog: [] });
    expect(await w.reports.reconcile(reportKey('shop'))).toBeUndefined();
    expect(await w.reports.reconcile(PRUNE_KEY)).toEqual({ requeueAfterMs: RESYNC_MS });
    expect([w.synced, w.pruned]).toEqual([[], []]);
    w.served.value = true;
    w.queued.clear();
    await w.reports.reconcile(PRUNE_KEY);
    await w.drain();
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['blog', 'shop']);
    w.served.value = false;
    await w.reports.reconcile(reportKey('shop'));
    expect(w.reports.names).toEqual(new Map());
  });
});
