// One report per namespace, fed by every policy governing it (docs/reports.md): the union of what each policy
// published last, a loser's conflict left out, and pruning only once every policy has published.
import { describe, expect, it } from '@jest/globals';
import { NamespaceReports, RETRY_MAX_MS, RETRY_MIN_MS } from '../../../src/controllers/policy/namespace-reports.js';
import type { ReportTarget } from '../../../src/model/namespace-report.js';

const t = (name: string, policy: string, rootCause = 'PodSourceNotMasqueraded', verdict: ReportTarget['verdict'] = 'AtRisk'): ReportTarget => ({ apiVersion: 'v1', kind: 'Service', name, verdict, rootCause, message: 'm', mode: 'Audit', policy, plan: [] });

function world(owners: string[]) {
  const synced: [string, string[]][] = [];
  const pruned: string[][] = [];
  /** Namespaces whose sync fails (until removed), and whether the next prune fails. */
  const failing = { sync: new Set<string>(), prune: false };
  /** Every sync asked for, failed or not. */
  const tried: string[] = [];
  const writer = {
    sync: async (ns: string, targets: readonly ReportTarget[]) => {
      tried.push(ns);
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
  let namesChanged = 0;
  const reports = new NamespaceReports(writer, { warn: () => undefined } as never, () => owners, () => void namesChanged++);
  return { reports, synced, pruned, failing, tried, owners, namesChanged: () => namesChanged };
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

  it('a namespace whose write keeps failing holds back no other; retry writes it again after a backoff, from the results kept', async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'dev/own']);
    w.failing.sync.add('blog');
    const t0 = Date.now();
    await w.reports.publish('dev/own', new Map([['dev', []]]));
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['blog', [t('x', 'ClusterLoopbackPolicy/p')]], ['shop', [t('api', 'ClusterLoopbackPolicy/p')]], ['dev', []]]));
    // blog failed; shop and dev after it were written, and the first prune made.
    expect(w.synced.map(([ns]) => ns).sort()).toEqual(['dev', 'shop']);
    expect(w.pruned).toEqual([['blog', 'dev', 'shop']]);
    const blogTries = () => w.tried.filter((ns) => ns === 'blog').length;
    // Another policy's round goes through while blog is still failing, and does not try blog before its backoff.
    await w.reports.publish('dev/own', new Map([['dev', [t('web', 'LoopbackPolicy/own')]]]));
    expect(w.synced.at(-1)).toEqual(['dev', ['LoopbackPolicy/own:web']]);
    expect(blogTries()).toBe(1);
    await w.reports.retry(t0 + 1_000);
    expect(blogTries()).toBe(1);
    w.failing.sync.delete('blog');
    await w.reports.retry(Date.now() + RETRY_MIN_MS + 1);
    expect(w.synced.at(-1)).toEqual(['blog', ['ClusterLoopbackPolicy/p:x']]);
    // Nothing owed: retry writes nothing.
    const done = w.tried.length;
    await w.reports.retry(Date.now() + RETRY_MAX_MS * 2);
    expect(w.tried).toHaveLength(done);
    expect(w.pruned).toHaveLength(1);
  });

  it('a failed prune (a namespace every policy left) is owed until a write makes it', async () => {
    const w = world(['ClusterLoopbackPolicy/p']);
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    w.failing.prune = true;
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    expect(w.pruned).toEqual([['blog', 'shop']]);
    await w.reports.retry(Date.now() + RETRY_MIN_MS + 1);
    expect(w.pruned).toEqual([['blog', 'shop'], ['shop']]);
  });

  it('writes one at a time: two policies publishing at once never sync or prune concurrently', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
    };
    const reports = new NamespaceReports({ sync: async () => (await slow(), 'loopguard'), prune: slow, available: async () => true }, { warn: () => undefined } as never, () => ['a/p', 'b/p']);
    await reports.publish('a/p', new Map([['a', []]]));
    await reports.publish('b/p', new Map([['b', []]]));
    most = 0;
    await Promise.all([reports.publish('a/p', new Map([['a', []]])), reports.publish('b/p', new Map([['b', []]]))]);
    expect(most).toBe(1);
  });

  it("names changed: told when a namespace's report is first written, written after failing, or pruned; not when written again", async () => {
    const w = world(['ClusterLoopbackPolicy/p', 'shop/own']);
    // Waiting for shop/own: nothing written, nothing changed; the names are not complete yet.
    const early = await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    expect(early).toEqual(new Map());
    expect(w.namesChanged()).toBe(0);
    const first = await w.reports.publish('shop/own', new Map([['shop', []]]));
    expect(first).toEqual(new Map([['blog', 'loopguard'], ['shop', 'loopguard']]));
    expect(w.namesChanged()).toBe(2);
    // Written again, same names: nothing to tell (the cluster policies do not come back).
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    expect(w.namesChanged()).toBe(2);
    // blog fails: left out of the names, no change yet; through on the retry: a change the cluster policy must see.
    w.failing.sync.add('blog');
    const failed = await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    expect(failed).toEqual(new Map([['shop', 'loopguard']]));
    expect(w.namesChanged()).toBe(2);
    w.failing.sync.delete('blog');
    await w.reports.retry(Date.now() + RETRY_MIN_MS + 1);
    expect(w.namesChanged()).toBe(3);
    // A new policy appears: the cluster policy's next publish is held back until it has published (no names), and the
    // write that ends the wait is a change, although the names it writes are the ones written before.
    w.owners.push('shop/new');
    const held = await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []], ['blog', []]]));
    expect(held).toEqual(new Map());
    await w.reports.publish('shop/new', new Map([['shop', []]]));
    expect(w.namesChanged()).toBe(5);
    // The cluster policy leaves blog: its report is pruned, another change.
    await w.reports.publish('ClusterLoopbackPolicy/p', new Map([['shop', []]]));
    expect(w.pruned.at(-1)).toEqual(['shop']);
    expect(w.namesChanged()).toBe(6);
  });

  it('retry: callers while one runs share it (one write, not one per caller), and it never rejects', async () => {
    let release: () => void = () => undefined;
    let prunes = 0;
    const writer = {
      sync: async () => 'loopguard',
      // The prune keeps failing (so a retry is owed), slowly: four drift passes ask for a retry meanwhile.
      prune: async () => {
        prunes++;
        await new Promise<void>((r) => (release = r));
        throw new Error('webhook timed out');
      },
      available: async () => true,
    };
    const reports = new NamespaceReports(writer, { warn: () => undefined } as never, () => ['a/p']);
    const first = reports.publish('a/p', new Map([['a', []]]));
    await new Promise((r) => setImmediate(r));
    release();
    await first;
    expect(prunes).toBe(1);
    const later = Date.now() + RETRY_MIN_MS + 1;
    const calls = [reports.retry(later), reports.retry(later), reports.retry(later), reports.retry(later)];
    await new Promise((r) => setImmediate(r));
    release();
    await Promise.all(calls);
    expect(prunes).toBe(2);
    // A writer that throws outside sync (the owners' lookup) is logged, not thrown at its caller.
    const broken = new NamespaceReports(writer, { warn: () => undefined } as never, () => {
      throw new Error('cache gone');
    });
    (broken as unknown as { failed: Set<string> }).failed.add('a');
    await expect(broken.retry(later)).resolves.toBeUndefined();
  });
});
