// Issue 24 on the local TKE: one ClusterLoopbackPolicy over three namespaces, two of them selected. Audit gives the
// verdicts and writes nothing; a mode override (staged rollout) enforces in the namespace that opts in by a label,
// spec.mode then everywhere it covers, and never in the namespace it does not select; a LoopbackPolicy meets the
// cluster policy's precedence both ways (visible in both statuses); skipAnnotation decides whether a tenant's
// loopguard.dev/skip opts out; a namespace whose label goes is released; deleting the policy reverts everything.
// Every namespace carries this suite's own label, so the policy never covers another suite's namespaces.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import type { ClusterLoopbackPolicy, ClusterLoopbackPolicySpec } from '../../src/api/clusterloopbackpolicy.js';
import { findCondition } from '../../src/api/conditions.js';
import type { LoopbackRecord } from '../../src/api/loopbackrecord.js';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';
import { bash } from '../support/checkout.js';
import { createNamespace, kubeConfig, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, policyManifest, waitForPolicy } from '../support/policy.js';
import { markdownSection, shellLines } from '../support/readme.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const SERVICE_LB_ID = 'service.kubernetes.io/loadbalance-id';
const API = { group: 'loopguard.dev', version: 'v1alpha1', plural: 'clusterloopbackpolicies' };
const ENFORCE_LABEL = 'loopguard.dev/enforce';
const OPENREPORTS_CRD = join(REPO_ROOT, 'test', 'fixtures', 'openreports', 'openreports.io_reports.yaml');
const REPORTS_CRD_NAME = 'crd/reports.openreports.io';

describe('ClusterLoopbackPolicy: namespaces, staged rollout, precedence, skip, release and revert', () => {
  let tke: LocalTke;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const suite = randomBytes(4).toString('hex');
  const name = `platform-${suite}`;
  const ns: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };
  const lb: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };
  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;

  const get = async () => (await custom.getClusterCustomObject({ ...API, name })) as ClusterLoopbackPolicy;
  const waitForCluster = (what: string, ok: (p: ClusterLoopbackPolicy) => boolean, timeoutMs = 60_000) =>
    waitFor(`ClusterLoopbackPolicy ${name}: ${what}`, async () => {
      const p = await get();
      const ready = findCondition(p.status?.conditions, 'Ready');
      return p.status?.observedGeneration === p.metadata.generation && ready?.status !== 'Unknown' && ok(p) ? p : undefined;
    }, { timeoutMs, context: async () => `${JSON.stringify((await get().catch(() => undefined))?.status ?? {}, null, 1).slice(0, 3000)}\n${logs()}` });
  const patchSpec = (spec: Partial<ClusterLoopbackPolicySpec>) =>
    custom.patchClusterCustomObject({ ...API, name, body: { spec } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const labelNamespace = (n: string, labels: Record<string, string | null>) =>
    core.patchNamespace({ name: n, body: { metadata: { labels } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  /** Health-check source types of the CLB's listeners: 1 = 100.64.0.0/10, 0 = the VIP. */
  const sources = async (id: string) => (await tke.emulator.admin.getLoadBalancer(id)).Listeners.map((l) => l.HealthCheck?.SourceIpType ?? 0);
  const waitSources = (which: 'a' | 'b' | 'c', want: number, timeoutMs = 60_000) =>
    waitFor(`listeners of ${which}'s CLB on ${want === 1 ? '100.64.0.0/10' : 'the VIP'}`, async () => {
      const s = await sources(lb[which]);
      return s.length === 2 && s.every((x) => x === want) ? true : undefined;
    }, { timeoutMs, context: logs });
  /** The listeners' sources now, with every write to that CLB since `seq` and the operator's logs when they differ. */
  const expectSources = async (which: 'a' | 'b' | 'c', want: number, seq: number) => {
    const s = await sources(lb[which]);
    if (s.length === 2 && s.every((x) => x === want)) return;
    const written = (await tke.emulator.admin.writes(seq)).filter((w) => w.loadBalancerId === lb[which]);
    throw new Error(`${which}'s listeners are on ${JSON.stringify(s)}, not ${want}; writes since ${seq}: ${JSON.stringify(written)}\n${logs()}`);
  };
  const target = (p: ClusterLoopbackPolicy, which: 'a' | 'b' | 'c') => p.status?.targets?.find((t) => t.namespace === ns[which] && t.name === 'web');

  beforeAll(async () => {
    // OpenReports installed: each governed namespace gets loopguard's Report (the namespace-report suite covers its absence).
    expect((await kubectl(['apply', '--server-side', '--field-manager=loopguard-tests', '-f', OPENREPORTS_CRD])).code).toBe(0);
    expect((await kubectl(['wait', '--for=condition=Established', '--timeout=60s', REPORTS_CRD_NAME])).code).toBe(0);
    tke = await startLocalTke({ emulator: { taskDurationMs: 30 }, resyncIntervalMs: 1_500, operator: { leaderElect: false, extraArgs: ['--drift-check-interval=3s', '--tke-grace-period=3s'] } });
    for (const k of ['a', 'b', 'c'] as const) {
      ns[k] = await createNamespace(`clbp-${k}`);
      tke.namespaces.add(ns[k]);
      await labelNamespace(ns[k], { 'loopguard.test/suite': suite, ...(k === 'c' ? {} : { 'loopguard.test/selected': 'true' }) });
      await core.createNamespacedService({ namespace: ns[k], body: lbService('web', AT_RISK_L4) });
    }
    for (const k of ['a', 'b', 'c'] as const) {
      lb[k] = await waitFor(`CLB of ${k}/web`, async () => (await core.readNamespacedService({ namespace: ns[k], name: 'web' })).metadata?.annotations?.[SERVICE_LB_ID]);
      await waitFor(`listeners of ${k}'s CLB`, async () => ((await sources(lb[k])).length === 2 ? true : undefined));
    }
  }, 120_000);

  afterAll(async () => {
    // Never leave a cluster policy behind for the next suite: its finalizer goes with it.
    for (const policy of [name, 'staged-rollout']) {
      const left = await custom.getClusterCustomObject({ ...API, name: policy }).catch(() => undefined);
      if (!left) continue;
      await custom.patchClusterCustomObject({ ...API, name: policy, body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
      await custom.deleteClusterCustomObject({ ...API, name: policy }).catch(() => undefined);
    }
    await tke?.stop();
    await kubectl(['delete', REPORTS_CRD_NAME, '--ignore-not-found', '--wait=false']);
  });

  it('Audit: verdicts in the two selected namespaces only, nothing written; kubectl wait works', async () => {
    const seq = (await tke.emulator.admin.writes()).at(-1)?.seq ?? 0;
    const manifest = `apiVersion: loopguard.dev/v1alpha1
kind: ClusterLoopbackPolicy
metadata: {name: ${name}}
spec:
  mode: Audit
  namespaceSelector:
    matchLabels: {loopguard.test/suite: "${suite}", loopguard.test/selected: "true"}
  modeOverrides:
    - mode: Enforce
      namespaceSelector: {matchLabels: {${ENFORCE_LABEL}: "true"}}
`;
    expect((await applyPolicy(manifest)).code).toBe(0);
    const waited = await kubectl(['wait', '--for=condition=Ready', `clbp/${name}`, '--timeout=60s']);
    expect(waited.stderr).toBe('');
    expect(waited.code).toBe(0);
    const p = await waitForCluster('two namespaces, both at risk', (x) => x.status?.counts?.atRisk === 2);
    expect(p.status?.namespaces).toEqual({ selected: 2, enforce: 0, audit: 2, excluded: 0 });
    expect(p.status?.byNamespace?.map((n) => n.namespace).sort()).toEqual([ns.a, ns.b].sort());
    expect(p.status?.targets?.every((t) => t.namespace !== ns.c)).toBe(true);
    expect(target(p, 'a')).toMatchObject({ verdict: 'AtRisk', loadBalancerId: lb.a });
    expect(target(p, 'a')?.plan?.length).toBeGreaterThan(0);
    expect(findCondition(p.status?.conditions, 'Ready')).toMatchObject({ status: 'True', reason: 'AuditComplete' });
    const written = (await tke.emulator.admin.writes(seq)).filter((w) => Object.values(lb).includes(w.loadBalancerId ?? ''));
    expect(written.filter((w) => w.caller === 'loopguard')).toEqual([]);
    const listed = await kubectl(['get', 'clbp', name, '--no-headers']);
    expect(listed.stdout).toMatch(new RegExp(`^${name}\\s+Audit\\s+2\\s+2\\s+0\\s+2\\s+True`));
  }, 120_000);

  it('staged rollout: the namespace labelled loopguard.dev/enforce=true is enforced, the other stays in Audit, the unselected one untouched', async () => {
    await labelNamespace(ns.a, { [ENFORCE_LABEL]: 'true' });
    await waitSources('a', 1);
    const p = await waitForCluster('a mitigated, b at risk', (x) => target(x, 'a')?.verdict === 'Mitigated' && target(x, 'b')?.verdict === 'AtRisk');
    expect(p.status?.namespaces).toMatchObject({ selected: 2, enforce: 1, audit: 1 });
    expect(p.status?.byNamespace?.find((n) => n.namespace === ns.a)).toMatchObject({ mode: 'Enforce', report: 'loopguard' });
    expect(await sources(lb.b)).toEqual([0, 0]);
    expect(await sources(lb.c)).toEqual([0, 0]);
    // The record names the cluster policy as its owner.
    const record = (await custom.getClusterCustomObject({ group: 'loopguard.dev', version: 'v1alpha1', plural: 'loopbackrecords', name: `service.${ns.a}.web` })) as LoopbackRecord;
    expect(record.spec.policy).toEqual({ kind: 'ClusterLoopbackPolicy', namespace: '', name });
  }, 120_000);

  it('spec.mode Enforce: every covered namespace is written, never the unselected one', async () => {
    const seq = (await tke.emulator.admin.writes()).at(-1)?.seq ?? 0;
    await patchSpec({ mode: 'Enforce' });
    await waitSources('b', 1);
    await waitForCluster('both mitigated', (x) => x.status?.counts?.mitigated === 2);
    // A TKE sync that read the Service before its prevent-loopback annotation may still put the sources back on the
    // VIP (sync scope all); the sync the annotation causes switches them again. Settled only after TKE has synced.
    await tke.simulator.resyncNow();
    await waitSources('b', 1);
    const toC = (await tke.emulator.admin.writes(seq)).filter((w) => w.loadBalancerId === lb.c && w.caller === 'loopguard');
    expect(toC).toEqual([]);
    expect(await sources(lb.c)).toEqual([0, 0]);
  }, 120_000);

  it('precedence: an Audit LoopbackPolicy never displaces; in Enforce it takes the target under NamespacedFirst; ClusterFirst takes it back; both statuses say so', async () => {
    const ref = { namespace: ns.b, name: 'own' };
    const seq = (await tke.emulator.admin.writes()).at(-1)?.seq ?? 0;
    const recordOwner = async () =>
      ((await custom.getClusterCustomObject({ group: 'loopguard.dev', version: 'v1alpha1', plural: 'loopbackrecords', name: `service.${ns.b}.web` })) as LoopbackRecord).spec.policy;
    expect((await applyPolicy(policyManifest(ref, { mode: 'Audit' }))).code).toBe(0);
    // NamespacedFirst decides between policies of one mode; this one is in Audit: the cluster policy keeps enforcing.
    const audit = await waitForPolicy(ref, 'web left to the enforcing cluster policy', (p) => p.status?.targets?.find((t) => t.name === 'web')?.rootCause === 'PolicyPrecedence', { timeoutMs: 60_000, context: logs });
    expect(audit.status?.targets?.find((t) => t.name === 'web')?.message).toMatch(new RegExp(`managed by ClusterLoopbackPolicy/${name}, which enforces it: this policy is in Audit here`));
    await tke.simulator.resyncNow();
    await expectSources('b', 1, seq);
    expect(target(await get(), 'b')?.verdict).toBe('Mitigated');

    // In Enforce the namespace's policy takes it: the cluster policy gives its changes back, then the new manager applies.
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).code).toBe(0);
    let cluster = await waitForCluster('b lost by precedence', (x) => target(x, 'b')?.rootCause === 'PolicyPrecedence');
    expect(target(cluster, 'b')?.message).toMatch(new RegExp(`managed by LoopbackPolicy ${ns.b}/own: the cluster policy's precedence is NamespacedFirst`));
    await waitForPolicy(ref, 'web mitigated by its own policy', (p) => p.status?.targets?.find((t) => t.name === 'web')?.verdict === 'Mitigated', { timeoutMs: 90_000, context: logs });
    await waitFor('the record held by LoopbackPolicy own', async () => ((await recordOwner().catch(() => undefined))?.name === 'own' ? true : undefined), { context: logs });
    await waitSources('b', 1);
    // The namespace's one Report lists web under the policy that manages it (the loser's conflict stays out), as a
    // pass (docs/reports.md §2: passes are listed).
    const report = await waitFor(`the Report in ${ns.b} naming LoopbackPolicy/own`, async () => {
      const r = await custom.getNamespacedCustomObject({ group: 'openreports.io', version: 'v1alpha1', plural: 'reports', namespace: ns.b, name: 'loopguard' }).catch(() => undefined);
      const results = (r as { results?: { policy: string; result?: string }[]; summary?: { pass?: number } } | undefined) ?? {};
      return results.summary?.pass === 1 && results.results?.[0]?.policy === 'LoopbackPolicy/own' ? results : undefined;
    }, { context: logs });
    expect(report.summary?.pass).toBe(1);
    expect(report.results?.map((x) => `${x.policy}:${x.result}`)).toEqual(['LoopbackPolicy/own:pass']);
    const inA = (await custom.getNamespacedCustomObject({ group: 'openreports.io', version: 'v1alpha1', plural: 'reports', namespace: ns.a, name: 'loopguard' })) as { summary?: Record<string, number> };
    expect(inA.summary).toMatchObject({ pass: 1 });
    // The namespace no policy governs has none.
    expect((await kubectl(['get', 'reps', 'loopguard', '-n', ns.c, '--ignore-not-found', '-o', 'name'])).stdout.trim()).toBe('');

    // ClusterFirst: the platform team's switch; the LoopbackPolicy reports the conflict naming the cluster policy.
    await patchSpec({ precedence: 'ClusterFirst' });
    const own = await waitForPolicy(ref, 'web lost to the cluster policy', (p) => p.status?.targets?.find((t) => t.name === 'web')?.rootCause === 'PolicyPrecedence', { timeoutMs: 60_000, context: logs });
    expect(own.status?.targets?.find((t) => t.name === 'web')?.message).toMatch(new RegExp(`managed by ClusterLoopbackPolicy/${name}, whose precedence is ClusterFirst`));
    cluster = await waitForCluster('b mitigated again', (x) => target(x, 'b')?.verdict === 'Mitigated', 90_000);
    expect(cluster.status?.counts?.conflict).toBe(0);
    await waitFor('the record back with the cluster policy', async () => ((await recordOwner().catch(() => undefined))?.kind === 'ClusterLoopbackPolicy' ? true : undefined), { context: logs });
    await waitSources('b', 1);
    expect((await kubectl(['delete', 'loopbackpolicy', 'own', '-n', ns.b, '--wait=true'])).code).toBe(0);
  }, 240_000);

  it("skipAnnotation: Honor lets a tenant's loopguard.dev/skip opt out (released); Ignore manages the target anyway and says so", async () => {
    await core.patchNamespacedService({ namespace: ns.a, name: 'web', body: { metadata: { annotations: { 'loopguard.dev/skip': 'true' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await waitForCluster('a skipped', (x) => target(x, 'a')?.verdict === 'Skipped');
    await waitSources('a', 0);
    await patchSpec({ skipAnnotation: 'Ignore' });
    await waitSources('a', 1);
    await waitForCluster('a mitigated despite the annotation', (x) => target(x, 'a')?.verdict === 'Mitigated');
    const events = await waitFor('the SkipAnnotationIgnored Event on a/web', async () => {
      const list = await core.listNamespacedEvent({ namespace: ns.a, fieldSelector: 'involvedObject.name=web,reason=SkipAnnotationIgnored' });
      return list.items.length > 0 ? list.items : undefined;
    }, { context: logs });
    expect(events[0]?.message).toMatch(new RegExp(`ClusterLoopbackPolicy/${name} sets skipAnnotation: Ignore`));
  }, 180_000);

  it('a namespace whose label goes leaves the policy, is released and loses its report; deleting the policy reverts the rest and prunes every report', async () => {
    const report = (which: 'a' | 'b') => custom.getNamespacedCustomObject({ group: 'openreports.io', version: 'v1alpha1', plural: 'reports', namespace: ns[which], name: 'loopguard' }).then(() => 'there', () => 'gone');
    // Someone deletes a report while nothing changes: its namespace's key comes back once per resync and writes it again.
    await custom.deleteNamespacedCustomObject({ group: 'openreports.io', version: 'v1alpha1', plural: 'reports', namespace: ns.b, name: 'loopguard' });
    await waitFor(`the Report in ${ns.b} put back`, async () => ((await report('b')) === 'there' ? true : undefined), { context: logs });
    await labelNamespace(ns.a, { 'loopguard.test/selected': null });
    await waitSources('a', 0);
    const p = await waitForCluster('one namespace left', (x) => x.status?.namespaces?.selected === 1);
    expect(target(p, 'a')).toBeUndefined();
    await waitFor(`the Report in ${ns.a} pruned`, async () => ((await report('a')) === 'gone' ? true : undefined), { context: logs });
    expect(await report('b')).toBe('there');
    await waitFor("a's record forgotten", async () => {
      const r = await custom.getClusterCustomObject({ group: 'loopguard.dev', version: 'v1alpha1', plural: 'loopbackrecords', name: `service.${ns.a}.web` }).then(() => 'there', () => 'gone');
      return r === 'gone' ? true : undefined;
    }, { context: logs });

    expect((await kubectl(['delete', 'clbp', name, '--wait=true', '--timeout=90s'])).code).toBe(0);
    expect(await sources(lb.b)).toEqual([0, 0]);
    expect(await sources(lb.c)).toEqual([0, 0]);
    const records = (await custom.listClusterCustomObject({ group: 'loopguard.dev', version: 'v1alpha1', plural: 'loopbackrecords' })) as { items: LoopbackRecord[] };
    expect(records.items.filter((r) => r.spec.policy.kind === 'ClusterLoopbackPolicy' && r.spec.policy.name === name)).toEqual([]);
    await waitFor(`the Report in ${ns.b} pruned`, async () => ((await report('b')) === 'gone' ? true : undefined), { context: logs });
  }, 180_000);

  it("the README's quick start on a cluster, its commands as written: the sample enforces only where a namespace opts in, and its deletion gives everything back", async () => {
    const section = markdownSection('### On your cluster: diagnose everywhere, enforce nowhere yet');
    const commands = shellLines(section);
    expect(commands[0]).toBe('kubectl apply -f config/samples/cluster-policy.yaml');
    // Here only namespace a carries loopguard.dev/enforce=true: the sample (every namespace) enforces there alone.
    await core.patchNamespacedService({ namespace: ns.a, name: 'web', body: { metadata: { annotations: { 'loopguard.dev/skip': null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const run = await bash(`set -e; export KUBECONFIG=${kubeconfigPath()}; ${commands.join('; ')}`, REPO_ROOT, 150_000);
    expect({ code: run.code, output: run.code === 0 ? '' : run.output }).toEqual({ code: 0, output: '' });
    expect(run.output).toContain('condition met');
    expect(run.output).toMatch(/staged-rollout\s+Audit\s+\d+/);
    await waitSources('a', 1);
    expect(await sources(lb.b)).toEqual([0, 0]);
    expect(await sources(lb.c)).toEqual([0, 0]);
    // The deletion, as the README says it.
    const deleted = await bash(`export KUBECONFIG=${kubeconfigPath()}; kubectl delete clbp staged-rollout --timeout=90s`, REPO_ROOT, 120_000);
    expect(section).toContain('`kubectl delete clbp staged-rollout`');
    expect(deleted.code).toBe(0);
    expect(await sources(lb.a)).toEqual([0, 0]);
  }, 240_000);
});
