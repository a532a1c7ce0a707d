// The per-namespace OpenReports Report (docs/reports.md) on the real kube-apiserver: ReportWriter without the CRD
// (nothing written, nothing thrown), with the upstream CRD (test/fixtures/openreports/) installed later (found at the
// next resync, no restart), writes that the real schema accepts, no write when nothing changed (the resourceVersion
// stays), a rewrite when a verdict changes, the rules Policy Reporter reads (docs/reports.md §2) checked on the stored
// objects, a report that is loopguard's whole (its own timestamps, another writer's additions replaced: §3), read
// access through the loopguard-view role bound in one namespace only, and prune of loopguard's own reports only,
// across a restart too: sealed with the observation checkpoint's key (a real Secret made by ObservationStore), an
// earlier process's reports are adopted by a new one, a user's look-alikes are not.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ObservationStore } from '../../src/kube/observation-store.js';
import { REPORT_SEAL_ANNOTATION } from '../../src/kube/report-seal.js';
import { ReportWriter } from '../../src/kube/report-writer.js';
import { MAX_REPORT_RESULTS, namespaceReport, sameReport, type Report, type ReportTarget } from '../../src/model/namespace-report.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { createNamespace, deleteNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { OPERATOR_NAMESPACE, operatorAccountKubeconfig } from '../support/operator.js';

const OPENREPORTS_CRD = join(REPO_ROOT, 'test', 'fixtures', 'openreports', 'openreports.io_reports.yaml');
const VIEW_ROLE = join(REPO_ROOT, 'config', 'rbac', 'aggregate_view_role.yaml');
const CRD_NAME = 'crd/reports.openreports.io';
const RESYNC_MS = 5 * 60_000;

function target(name: string, verdict: ReportTarget['verdict'], rootCause: string): ReportTarget {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    name,
    uid: `00000000-0000-4000-8000-${name.padStart(12, '0').slice(-12)}`,
    verdict,
    rootCause,
    message: `${rootCause}: what the assessment says`,
    mode: 'Audit',
    policy: 'ClusterLoopbackPolicy/platform',
    plan: verdict === 'AtRisk' ? ['set the listeners\' health-check source to 100.64.0.0/10', 'annotate prevent-loopback'] : [],
    ...(verdict === 'AtRisk' ? { loadBalancerId: 'lb-8m2ecfxk' } : {}),
  };
}

const TARGETS: ReportTarget[] = [
  target('checkout', 'AtRisk', 'PodSourceNotMasqueraded'),
  target('ipv6-api', 'Unsupported', 'Ipv6Clb'),
  target('new-svc', 'Pending', 'ClbNotObserved'),
  target('web', 'Mitigated', 'LoopbackPrevented'),
  target('public', 'NotApplicable', 'PublicClb'),
  target('opted-out', 'Skipped', 'SkipAnnotation'),
];

/** A Report another writer (a user, another tool) creates or replaces, as kubectl does it. */
async function writeAsOther(verb: 'create' | 'replace', namespace: string, body: unknown): Promise<void> {
  const r = await kubectl([verb, '-n', namespace, '-f', '-'], { input: JSON.stringify(body) });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
}

async function stored(namespace: string, name = 'loopguard'): Promise<Report | undefined> {
  const r = await kubectl(['get', 'reports.openreports.io', name, '-n', namespace, '-o', 'json', '--show-managed-fields', '--ignore-not-found']);
  if (r.code !== 0) throw new Error(`kubectl get report: ${r.stderr}`);
  return r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as Report);
}

describe('ReportWriter: per-namespace OpenReports reports on the real apiserver', () => {
  let nsA = '';
  let nsB = '';
  let nsC = '';
  let nsU = '';
  // The restart case: two covered namespaces, two a user owns.
  const sealNs = { kept: '', dropped: '', user: '', user2: '' };
  let clock = Date.parse('2026-11-26T04:00:00Z');
  const logs: string[] = [];
  const writer = (key?: () => Promise<Buffer>, kubeconfig?: string) =>
    new ReportWriter(kubeConfig(kubeconfig), { resyncMs: RESYNC_MS, now: () => new Date(clock), logger: { info: (m) => logs.push(m) }, ...(key ? { key } : {}) });
  let first: ReportWriter;

  beforeAll(async () => {
    nsA = await createNamespace('reports-a');
    nsB = await createNamespace('reports-b');
    nsC = await createNamespace('reports-c');
    nsU = await createNamespace('reports-uncovered');
    for (const k of Object.keys(sealNs) as (keyof typeof sealNs)[]) sealNs[k] = await createNamespace(`reports-seal-${k}`);
    // Another suite may have installed OpenReports and deleted it without waiting: start from a cluster without it.
    const gone = await kubectl(['delete', CRD_NAME, '--ignore-not-found', '--wait=true', '--timeout=60s']);
    expect({ code: gone.code, stderr: gone.stderr }).toEqual({ code: 0, stderr: '' });
    first = writer();
  });

  afterAll(async () => {
    await kubectl(['delete', 'rolebinding', 'alice-loopguard-view', '-n', nsA, '--ignore-not-found']);
    // loopguard-view stays: it is config/rbac's, which every worker's control plane has from the start (harness.ts).
    // Other suites share the apiserver and must meet a cluster without OpenReports unless they install it.
    await kubectl(['delete', CRD_NAME, '--ignore-not-found', '--wait=false']);
    if (nsA) await deleteNamespace(nsA);
    if (nsB) await deleteNamespace(nsB);
    if (nsC) await deleteNamespace(nsC);
    if (nsU) await deleteNamespace(nsU);
    for (const ns of Object.values(sealNs)) if (ns) await deleteNamespace(ns);
  });

  it('without the CRD: not available, sync writes nothing and returns undefined, prune does nothing; logged once', async () => {
    expect(await first.available()).toBe(false);
    await expect(first.sync(nsA, TARGETS)).resolves.toBeUndefined();
    await expect(first.prune(new Set())).resolves.toBeUndefined();
    clock += RESYNC_MS; // asked again after a resync, still absent: no second log line
    expect(await first.available()).toBe(false);
    expect(logs.filter((l) => l.includes('not installed'))).toHaveLength(1);
  });

  it('with the CRD installed later: found at the next resync; the report is written, accepted by the schema, as computed', async () => {
    const applied = await kubectl(['apply', '--server-side', '--field-manager=loopguard-tests', '-f', OPENREPORTS_CRD]);
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await kubectl(['wait', '--for=condition=Established', '--timeout=60s', CRD_NAME])).code).toBe(0);
    // Within the resync interval the writer keeps its answer (no discovery call per sync); after it, it asks again.
    expect(await first.available()).toBe(false);
    clock += RESYNC_MS;
    await waitFor('discovery to serve openreports.io/v1alpha1 reports', async () => {
      clock += RESYNC_MS;
      return (await first.available()) || undefined;
    });
    expect(logs.filter((l) => l.includes('OpenReports is installed'))).toHaveLength(1);

    await expect(first.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    const report = await stored(nsA);
    const expected = namespaceReport(nsA, TARGETS, undefined, new Date(clock));
    // Stored whole as computed (the apiserver's own metadata aside).
    expect(sameReport(report, expected)).toBe(true);
    expect(report?.summary).toEqual({ pass: 2, fail: 1, warn: 1, error: 1, skip: 1 });
    expect(report?.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'loopguard', operation: 'Update' })]);
    // Nothing was pruned by the schema: the same body sent with strict field validation is accepted as it is.
    const strict = await kubectl(['create', '--dry-run=server', '--validate=strict', '-n', nsA, '-o', 'json', '-f', '-'], {
      input: JSON.stringify({ ...expected, metadata: { ...expected.metadata, name: 'loopguard-strict' } }),
    });
    expect({ code: strict.code, stderr: strict.stderr }).toEqual({ code: 0, stderr: '' });
    expect((JSON.parse(strict.stdout) as Report).results).toEqual(expected.results);
    // `kubectl get reps` shows the counts in the CRD's printer columns.
    const table = await kubectl(['get', 'reps', 'loopguard', '-n', nsA]);
    expect(table.stdout.split('\n')[1]?.trim().split(/\s+/).slice(0, 6)).toEqual(['loopguard', '2', '1', '1', '1', '1']);
  });

  it('writes nothing when nothing changed (also after a resync re-reads it); without the key a new process writes once, with its own timestamps; a changed verdict rewrites', async () => {
    const before = await stored(nsA);
    clock += 60_000;
    await expect(first.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    clock += RESYNC_MS; // read again: still what first wrote
    await expect(first.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    expect((await stored(nsA))?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);

    // Without the key (no seal), a new process trusts no stored timestamp (anyone with write access may have set
    // it): it writes its own, once.
    const restarted = writer();
    const written = clock;
    await expect(restarted.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    const rewritten = await stored(nsA);
    expect(rewritten?.metadata.resourceVersion).not.toBe(before?.metadata.resourceVersion);
    expect(new Set(rewritten?.results?.map((r) => r.timestamp?.seconds))).toEqual(new Set([written / 1000]));
    clock += 60_000;
    await expect(restarted.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    expect((await stored(nsA))?.metadata.resourceVersion).toBe(rewritten?.metadata.resourceVersion);

    clock += 60_000;
    const changed = TARGETS.map((t) => (t.name === 'new-svc' ? target('new-svc', 'AtRisk', 'PodSourceNotMasqueraded') : t));
    await expect(restarted.sync(nsA, changed)).resolves.toBe('loopguard');
    const after = await stored(nsA);
    expect(after?.metadata.resourceVersion).not.toBe(before?.metadata.resourceVersion);
    expect(after?.summary).toEqual({ pass: 2, fail: 2, warn: 1, error: 0, skip: 1 });
    const stamp = (name: string) => after?.results?.find((r) => r.resources?.[0]?.name === name)?.timestamp;
    expect(stamp('new-svc')).toEqual({ seconds: clock / 1000, nanos: 0 }); // its verdict changed now
    expect(stamp('checkout')).toEqual({ seconds: written / 1000, nanos: 0 }); // unchanged since it was first reported
  });

  // docs/reports.md §2: each rule Policy Reporter (or the OpenReports API) sets, read back from what the apiserver stored.
  it('stores what Policy Reporter reads: resources in the namespace, warn unscored, the namespace as scope, passes listed (bounded), text sanitized', async () => {
    const w = writer();
    const bidi = target('spoof', 'AtRisk', 'PodSourceNotMasqueraded');
    bidi.message = 'annotation value "\u202egpj.exe\u200b" is not a CLB id';
    await expect(w.sync(nsC, [...TARGETS, bidi])).resolves.toBe('loopguard');
    const mixed = await stored(nsC);
    expect(mixed?.scope).toEqual({ apiVersion: 'v1', kind: 'Namespace', name: nsC });
    expect(mixed?.results?.map((r) => ({ result: r.result, scored: r.scored, namespaces: r.resources?.map((x) => x.namespace) }))).toEqual([
      { result: 'fail', scored: true, namespaces: [nsC] }, // checkout
      { result: 'fail', scored: true, namespaces: [nsC] }, // spoof
      { result: 'warn', scored: false, namespaces: [nsC] },
      { result: 'error', scored: true, namespaces: [nsC] },
      { result: 'pass', scored: true, namespaces: [nsC] }, // web (Mitigated)
      { result: 'pass', scored: true, namespaces: [nsC] }, // public (NotApplicable)
    ]);
    expect(mixed?.results?.find((r) => r.resources?.[0]?.name === 'spoof')?.message).toBe('annotation value "\ufffdgpj.exe\ufffd" is not a CLB id');

    // Every target passes: the report still lists them (so the `loopguard` source stays listed), at most 100.
    const passing = Array.from({ length: 150 }, (_, i) => target(`ok-${String(i).padStart(3, '0')}`, 'Mitigated', 'LoopbackPrevented'));
    await expect(w.sync(nsC, passing)).resolves.toBe('loopguard');
    const allPass = await stored(nsC);
    expect(allPass?.summary).toEqual({ pass: 150, fail: 0, warn: 0, error: 0, skip: 0 });
    expect(allPass?.results).toHaveLength(MAX_REPORT_RESULTS);
    expect(new Set(allPass?.results?.map((r) => `${r.result}/${String(r.scored)}/${r.resources?.[0]?.namespace}`))).toEqual(new Set([`pass/true/${nsC}`]));
  });

  // docs/reports.md §3: the report is loopguard's whole.
  it("another writer's additions and timestamps do not survive: the next write (after a resync) stores exactly loopguard's report", async () => {
    const w = writer();
    await expect(w.sync(nsC, TARGETS)).resolves.toBe('loopguard');
    const mine = await stored(nsC);
    const forged = structuredClone(mine) as Report & Record<string, unknown>;
    forged.scope = { apiVersion: 'v1', kind: 'Namespace', name: nsA };
    forged.metadata.labels = { ...forged.metadata.labels, team: 'someone-else' };
    forged.metadata['annotations'] = { 'example.com/note': 'added by hand' };
    for (const r of forged.results ?? []) r.timestamp = { seconds: 946684800, nanos: 0 };
    forged.results?.push({ policy: 'ClusterLoopbackPolicy/forged', result: 'pass', scored: true, resources: [{ apiVersion: 'v1', kind: 'Service', name: 'ghost', namespace: nsC }] });
    delete forged.metadata.managedFields;
    await writeAsOther('replace', nsC, forged);
    clock += RESYNC_MS;
    await expect(w.sync(nsC, TARGETS)).resolves.toBe('loopguard');
    const after = await stored(nsC);
    // Whole: the same object loopguard wrote before, timestamps included; nothing of the other writer's is left.
    expect(sameReport(after, mine!)).toBe(true);
    expect(after?.metadata['annotations']).toBeUndefined();
    expect(after?.metadata.uid).toBe(mine?.metadata.uid);
  });

  it('remembers what it wrote until the next resync, then puts back a report someone deleted', async () => {
    const w = writer();
    await w.sync(nsB, TARGETS);
    expect(await stored(nsB)).toBeDefined();
    expect((await kubectl(['delete', 'reports.openreports.io', 'loopguard', '-n', nsB])).code).toBe(0);
    // Between resyncs an unchanged namespace costs no API call: the deletion is not seen.
    await expect(w.sync(nsB, TARGETS)).resolves.toBe('loopguard');
    expect(await stored(nsB)).toBeUndefined();
    clock += RESYNC_MS;
    await expect(w.sync(nsB, TARGETS)).resolves.toBe('loopguard');
    expect((await stored(nsB))?.summary).toEqual({ pass: 2, fail: 1, warn: 1, error: 1, skip: 1 });
  });

  it('a namespace that does not exist gets no report and no error', async () => {
    await expect(writer().sync('no-such-namespace-for-reports', TARGETS)).resolves.toBeUndefined();
  });

  it('a user bound to loopguard-view in one namespace reads the report there, and nothing of the other namespace', async () => {
    const role = await kubectl(['apply', '-f', VIEW_ROLE]);
    expect({ code: role.code, stderr: role.stderr }).toEqual({ code: 0, stderr: '' });
    const bound = await kubectl(['create', 'rolebinding', 'alice-loopguard-view', '-n', nsA, '--clusterrole=loopguard-view', '--user=alice']);
    expect({ code: bound.code, stderr: bound.stderr }).toEqual({ code: 0, stderr: '' });
    const asAlice = (args: string[]) => kubectl(['--as', 'alice', ...args]);
    // RBAC takes the new binding at once on a single apiserver, but its cache may lag a moment.
    const own = await waitFor('alice to read reps/loopguard in her namespace', async () => {
      const r = await asAlice(['get', 'reps', 'loopguard', '-n', nsA, '-o', 'json']);
      return r.code === 0 ? r : undefined;
    });
    expect((JSON.parse(own.stdout) as Report).summary?.fail).toBe(2);
    expect((await asAlice(['get', 'loopbackpolicies', '-n', nsA])).code).toBe(0);
    const other = await asAlice(['get', 'reps', 'loopguard', '-n', nsB]);
    expect({ code: other.code, stderr: other.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('Forbidden') });
    expect((await asAlice(['get', 'loopbackpolicies', '-n', nsB])).stderr).toContain('Forbidden');
    // The rule names loopguard's report: listing every report of the namespace (other tools' too) is not granted,
    // and a RoleBinding never reaches the cluster-scoped kinds.
    expect((await asAlice(['get', 'reps', '-n', nsA])).stderr).toContain('Forbidden');
    expect((await asAlice(['get', 'clusterloopbackpolicies'])).stderr).toContain('Forbidden');
    expect((await asAlice(['auth', 'can-i', 'update', 'reports.openreports.io/loopguard', '-n', nsA])).stdout.trim()).toBe('no');
  });

  it("prune deletes only the reports this process wrote: not another tool's, not a user's copy of loopguard's, not one put in place of loopguard's", async () => {
    const foreign = await kubectl(['apply', '-n', nsB, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'openreports.io/v1alpha1', kind: 'Report', metadata: { name: 'other-tool' }, source: 'kyverno', results: [] }),
    });
    expect(foreign.code).toBe(0);
    // A user in a namespace no policy covers makes a report that looks like loopguard's: name, labels, content.
    const lookalike = namespaceReport(nsU, TARGETS, undefined, new Date(clock));
    await writeAsOther('create', nsU, lookalike);
    const w = writer();
    await expect(w.sync(nsB, TARGETS)).resolves.toBe('loopguard'); // read and written: loopguard's now
    const kept = (await stored(nsB))?.metadata.resourceVersion;
    await w.prune(new Set([nsA]));
    expect(await stored(nsB)).toBeUndefined();
    expect(await stored(nsB, 'other-tool')).toBeDefined();
    expect(await stored(nsA)).toBeDefined();
    expect(sameReport(await stored(nsU), lookalike)).toBe(true);
    // Another writer (the same one, or a new process) prunes with nsU uncovered as well: still not loopguard's to delete.
    await writer().prune(new Set());
    expect(await stored(nsU)).toBeDefined();
    // Pruned: the next sync for that namespace writes it again (what was remembered of it is forgotten).
    await expect(w.sync(nsB, TARGETS)).resolves.toBe('loopguard');
    expect((await stored(nsB))?.metadata.resourceVersion).not.toBe(kept);
    // Someone deletes loopguard's report and puts their own in its place (a new uid): prune leaves theirs.
    expect((await kubectl(['delete', 'reports.openreports.io', 'loopguard', '-n', nsB])).code).toBe(0);
    await writeAsOther('create', nsB, namespaceReport(nsB, TARGETS, undefined, new Date(clock)));
    const theirs = (await stored(nsB))?.metadata.uid;
    await w.prune(new Set([nsA]));
    expect((await stored(nsB))?.metadata.uid).toBe(theirs);
  });

  it("across a restart (sealed with the checkpoint's key): nothing unchanged is rewritten, and prune deletes an earlier process's report, never a look-alike or a moved copy", async () => {
    // As the operator runs: its ServiceAccount under config/rbac (list on reports to adopt, get on the key's Secret).
    const sa = await operatorAccountKubeconfig();
    await waitFor('config/rbac reaches the authorizer', async () => ((await kubectl(['auth', 'can-i', 'list', 'reports.openreports.io', '-A'], { kubeconfig: sa })).stdout.trim() === 'yes' ? true : undefined), { timeoutMs: 30_000 });
    const store = new ObservationStore(kubeConfig(sa), OPERATOR_NAMESPACE);
    const key = () => store.key(); // the Secret loopguard-observations-key, made by the first leader that needs it
    const before = writer(key, sa);
    const written = clock;
    await expect(before.sync(sealNs.kept, TARGETS)).resolves.toBe('loopguard');
    await expect(before.sync(sealNs.dropped, TARGETS)).resolves.toBe('loopguard');
    const kept = await stored(sealNs.kept);
    const dropped = await stored(sealNs.dropped);
    expect(dropped?.metadata['annotations']).toEqual({ [REPORT_SEAL_ANNOTATION]: expect.any(String) });
    // A user who may write Reports makes look-alikes in namespaces no policy covers: loopguard's name, labels and
    // content; and the whole sealed report copied, seal and all, into another namespace.
    await writeAsOther('create', sealNs.user, namespaceReport(sealNs.user, TARGETS, undefined, new Date(clock)));
    const copy = structuredClone(dropped) as Report;
    copy.metadata = { name: copy.metadata.name, namespace: sealNs.user2, labels: copy.metadata.labels, annotations: copy.metadata['annotations'] };
    await writeAsOther('create', sealNs.user2, copy);

    // A restart: a new process (a new key read from the same Secret) with the same results much later.
    clock += 2 * RESYNC_MS;
    const after = writer(() => new ObservationStore(kubeConfig(sa), OPERATOR_NAMESPACE).key(), sa);
    await expect(after.sync(sealNs.kept, TARGETS)).resolves.toBe('loopguard');
    const unchanged = await stored(sealNs.kept);
    expect(unchanged?.metadata.resourceVersion).toBe(kept?.metadata.resourceVersion);
    expect(new Set(unchanged?.results?.map((r) => r.timestamp?.seconds))).toEqual(new Set([written / 1000]));
    // sealNs.dropped stopped being covered while loopguard was down: the new process never wrote it, and deletes it.
    await after.prune(new Set([sealNs.kept]));
    expect(await stored(sealNs.dropped)).toBeUndefined();
    expect(await stored(sealNs.kept)).toBeDefined();
    expect(await stored(sealNs.user)).toBeDefined();
    expect((await stored(sealNs.user2))?.metadata['annotations']).toEqual(copy.metadata['annotations']);
    // Another restart: still not loopguard's.
    await writer(key, sa).prune(new Set([sealNs.kept]));
    expect(await stored(sealNs.user)).toBeDefined();
    expect(await stored(sealNs.user2)).toBeDefined();
    // A changed verdict after the restart: written, the unchanged results keep their first timestamps.
    clock += 60_000;
    const changed = TARGETS.map((t) => (t.name === 'new-svc' ? target('new-svc', 'AtRisk', 'PodSourceNotMasqueraded') : t));
    await expect(after.sync(sealNs.kept, changed)).resolves.toBe('loopguard');
    const rewritten = await stored(sealNs.kept);
    expect(rewritten?.metadata.resourceVersion).not.toBe(kept?.metadata.resourceVersion);
    expect(rewritten?.results?.find((r) => r.resources?.[0]?.name === 'checkout')?.timestamp).toEqual({ seconds: written / 1000, nanos: 0 });
  });

  it('OpenReports removed while the operator runs: the next read or write finds it gone, returns undefined, throws nothing', async () => {
    const reading = writer(); // knows OpenReports is there, remembers no report yet: its next sync reads
    const writing = writer(); // remembers nsA's report: its next sync with a change writes
    expect(await reading.available()).toBe(true);
    await expect(writing.sync(nsA, TARGETS.slice(1))).resolves.toBe('loopguard');
    const gone = await kubectl(['delete', CRD_NAME, '--wait=true', '--timeout=60s']);
    expect(gone.code).toBe(0);
    await waitFor('the reports resource to stop being served', async () => ((await kubectl(['get', '--raw', '/apis/openreports.io/v1alpha1'])).code !== 0 ? true : undefined));
    await expect(reading.sync(nsA, TARGETS)).resolves.toBeUndefined();
    await expect(writing.sync(nsA, TARGETS)).resolves.toBeUndefined();
    // Both now know, without asking discovery again before the next resync.
    expect(await reading.available()).toBe(false);
    expect(await writing.available()).toBe(false);
  });
});
