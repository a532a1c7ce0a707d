// The per-namespace OpenReports Report (docs/cluster-policy.md §8, §9) on the real kube-apiserver: ReportWriter without
// the CRD (nothing written, nothing thrown), with the upstream CRD (test/fixtures/openreports/) installed later (found
// at the next resync, no restart), writes that the real schema accepts, no write when nothing changed (the
// resourceVersion stays, also for a new writer that reads the stored report once), a rewrite when a verdict changes,
// read access through the loopguard-view role bound in one namespace only, and prune.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ReportWriter } from '../../src/kube/report-writer.js';
import { namespaceReport, type Report, type ReportTarget } from '../../src/model/namespace-report.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { createNamespace, deleteNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';

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

async function stored(namespace: string, name = 'loopguard'): Promise<Report | undefined> {
  const r = await kubectl(['get', 'reports.openreports.io', name, '-n', namespace, '-o', 'json', '--show-managed-fields', '--ignore-not-found']);
  if (r.code !== 0) throw new Error(`kubectl get report: ${r.stderr}`);
  return r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as Report);
}

describe('ReportWriter: per-namespace OpenReports reports on the real apiserver', () => {
  let nsA = '';
  let nsB = '';
  let clock = Date.parse('2026-11-26T04:00:00Z');
  const logs: string[] = [];
  const writer = () => new ReportWriter(kubeConfig(), { resyncMs: RESYNC_MS, now: () => new Date(clock), logger: { info: (m) => logs.push(m) } });
  let first: ReportWriter;

  beforeAll(async () => {
    nsA = await createNamespace('reports-a');
    nsB = await createNamespace('reports-b');
    // Another suite may have installed OpenReports and deleted it without waiting: start from a cluster without it.
    const gone = await kubectl(['delete', CRD_NAME, '--ignore-not-found', '--wait=true', '--timeout=60s']);
    expect({ code: gone.code, stderr: gone.stderr }).toEqual({ code: 0, stderr: '' });
    first = writer();
  });

  afterAll(async () => {
    await kubectl(['delete', 'rolebinding', 'alice-loopguard-view', '-n', nsA, '--ignore-not-found']);
    await kubectl(['delete', '-f', VIEW_ROLE, '--ignore-not-found']);
    // Other suites share the apiserver and must meet a cluster without OpenReports unless they install it.
    await kubectl(['delete', CRD_NAME, '--ignore-not-found', '--wait=false']);
    if (nsA) await deleteNamespace(nsA);
    if (nsB) await deleteNamespace(nsB);
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
    expect(report).toMatchObject({
      metadata: { name: 'loopguard', namespace: nsA, labels: { 'app.kubernetes.io/managed-by': 'loopguard' } },
      source: 'loopguard',
      configuration: expected.configuration,
      summary: { pass: 2, fail: 1, warn: 1, error: 1, skip: 1 },
      results: expected.results,
    });
    expect(report?.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'loopguard', operation: 'Apply' })]);
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

  it('writes nothing when nothing changed (same writer, and a new one that reads once); a changed verdict rewrites', async () => {
    const before = await stored(nsA);
    const written = clock;
    clock += 60_000;
    await expect(first.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    const restarted = writer();
    await expect(restarted.sync(nsA, TARGETS)).resolves.toBe('loopguard');
    expect((await stored(nsA))?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);

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

  it('prune deletes the report of a namespace no policy covers, and leaves the covered one and other tools\' reports', async () => {
    const foreign = await kubectl(['apply', '-n', nsB, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'openreports.io/v1alpha1', kind: 'Report', metadata: { name: 'other-tool' }, source: 'kyverno', results: [] }),
    });
    expect(foreign.code).toBe(0);
    const w = writer();
    await expect(w.sync(nsB, TARGETS)).resolves.toBe('loopguard'); // read and remembered
    const kept = (await stored(nsB))?.metadata.resourceVersion;
    await w.prune(new Set([nsA]));
    expect(await stored(nsB)).toBeUndefined();
    expect(await stored(nsB, 'other-tool')).toBeDefined();
    expect(await stored(nsA)).toBeDefined();
    // Pruned: the next sync for that namespace writes it again (what was remembered of it is forgotten).
    await expect(w.sync(nsB, TARGETS)).resolves.toBe('loopguard');
    expect((await stored(nsB))?.metadata.resourceVersion).not.toBe(kept);
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
