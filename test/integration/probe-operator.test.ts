// The operator's side of the loopback probe (issue 41 #2, #3; docs/probe.md §11) on the local TKE: real apiserver, the
// CLB emulator, the TKE simulator and the operator as its own process under config/'s ServiceAccount and RBAC
// (config/rbac/probe_role.yaml). A policy with probe.enabled makes the operator write the plan; reports written with
// kubectl as the agents write them (one per node, the plan's resourceVersion as planVersion) show as evidence in the
// policy's status; a target the model calls NotApplicable, then one it calls Mitigated, that measures failures over a
// full window gets the MeasuredLoopback condition and a Warning Event, and loopguard writes nothing more for it;
// `loopguard doctor` shows the same lines.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Report } from '../../src/cli/report.js';
import type { ProbePlan, ProbeReport, ProbeTargetResult } from '../../src/api/probe.js';
import { createNamespace, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE, type OperatorProcess } from '../support/operator.js';
import { runDoctor } from '../support/doctor.js';
import { applyPolicy, getPolicy, policyManifest, reportedStatus, waitForCondition, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { lbService, PRIVATE_SUBNET } from '../support/workload.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const WINDOW_MS = 300_000;

async function must(args: string[], input?: string): Promise<string> {
  const res = await kubectl(args, input === undefined ? {} : { input });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

async function plan(): Promise<{ plan: ProbePlan; version: string } | undefined> {
  const res = await kubectl(['get', 'configmap', 'loopguard-probe-plan', '-n', OPERATOR_NAMESPACE, '-o', 'json']);
  if (res.code !== 0) return undefined;
  const cm = JSON.parse(res.stdout) as { data?: Record<string, string>; metadata: { resourceVersion: string } };
  return { plan: JSON.parse(cm.data?.['plan.json'] ?? '{}') as ProbePlan, version: cm.metadata.resourceVersion };
}

/** A report as an agent writes it after a window: named after its node, in loopguard's namespace. */
async function writeReport(node: string, planVersion: string, start: number, targets: ProbeTargetResult[]): Promise<void> {
  const report: ProbeReport = {
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'LoopbackProbeReport',
    metadata: { name: node, namespace: OPERATOR_NAMESPACE },
    spec: { node, pod: { name: `loopguard-probe-${node}`, uid: `uid-${node}` }, planVersion, window: { start: new Date(start).toISOString(), end: new Date(start + WINDOW_MS).toISOString(), seconds: WINDOW_MS / 1000 }, targets },
  };
  await must(['apply', '-f', '-'], JSON.stringify(report));
}

const r = (id: string, probes: number, failures: number, stalls: number, p99Ms: number): ProbeTargetResult => ({ id, probes, failures, stalls, notRun: 0, p50Ms: 2, p99Ms });

describe('the probe, operator side, on the local TKE (ipvs-new)', () => {
  let tke: LocalTke;
  let operator: OperatorProcess;
  const nodes = [`probe-op-a-${process.pid}`, `probe-op-b-${process.pid}`];

  beforeAll(async () => {
    // A plan or reports another suite of this worker left behind would be judged too.
    await kubectl(['delete', 'configmap', 'loopguard-probe-plan', '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    tke = await startLocalTke({ operator: { extraArgs: ['--drift-check-interval=2s', '--tke-grace-period=3s'] } });
    operator = tke.operator!;
  });

  afterAll(async () => {
    await kubectl(['delete', 'loopbackprobereports', ...nodes, '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    await tke?.stop();
  });

  const logs = () => `--- operator logs (tail) ---\n${operator.logs().slice(-4000)}`;

  it('writes the plan, shows evidence before and after Enforce, and says when measurement contradicts the model', async () => {
    const ns = await createNamespace('probe-op');
    tke.namespaces.add(ns);
    const core = tke.kc.makeApiClient(CoreV1Api);
    // ETP Local: AtRisk (the pod's source reaches the CLB unmasqueraded); ETP Cluster: NotApplicable (masqueraded).
    await core.createNamespacedService({ namespace: ns, body: lbService('local', { annotations: PRIVATE_SUBNET, etp: 'Local', ports: [[80, 'TCP'], [53, 'UDP']] }) });
    await core.createNamespacedService({ namespace: ns, body: lbService('cluster', { annotations: PRIVATE_SUBNET }) });
    const ref: PolicyRef = { namespace: ns, name: 'probed' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Audit', probe: { enabled: true } }))).stderr).toBe('');

    // The plan: each Service's private VIP and TCP port (not the UDP one), sorted by id.
    const local = `Service/${ns}/local:80`;
    const cluster = `Service/${ns}/cluster:80`;
    // The plan is built from the caches when the policy's round queues it (probe-control.ts): it waits for no other
    // policy. Probing policies earlier suites of this worker left on its control plane have entries of their own.
    const mine = (p: ProbePlan) => p.targets.filter((t) => t.id.includes(`/${ns}/`));
    const written = await waitFor('the probe plan naming both Services', async () => {
      const p = await plan();
      return p && mine(p.plan).length === 2 ? p : undefined;
    }, { timeoutMs: 60_000, context: logs });
    expect(mine(written.plan).map((t) => [t.id, t.port, t.protocol])).toEqual([
      [cluster, 80, 'TCP'],
      [local, 80, 'TCP'],
    ]);
    for (const t of mine(written.plan)) expect(t.vip).toMatch(/^10\./);
    expect(written.plan).toMatchObject({ version: 1, windowSeconds: 300, timeoutMs: 5000 });

    // Before Enforce: the at-risk Service fails from node a; the NotApplicable one stalls from node b (a contradiction).
    const before = Date.now() - WINDOW_MS;
    const [a, b] = nodes as [string, string];
    await writeReport(a, written.version, before, [r(cluster, 20, 0, 0, 3), r(local, 20, 12, 12, 4200)]);
    await writeReport(b, written.version, before, [r(cluster, 20, 0, 3, 3400), r(local, 20, 0, 0, 3)]);
    const measured = (p: Awaited<ReturnType<typeof getPolicy>>, name: string) => reportedStatus(p).targets.find((t) => t.name === name)?.measured;
    const audit = await waitForPolicy(ref, 'evidence in status', (p) => measured(p, 'local') !== undefined && measured(p, 'local') !== 'measured: no probe report for this target yet' && measured(p, 'cluster')?.startsWith('contradicts') === true, { timeoutMs: 30_000, context: logs });
    expect(measured(audit, 'local')).toBe(`measured: 12/40 failed, 12 stalled from ${a}; p99 4.2 s`);
    expect(measured(audit, 'cluster')).toBe(`contradicts NotApplicable: measured 0/40 failed, 3 stalled from ${b}; p99 3.4 s`);
    const condition = await waitForCondition(ref, 'MeasuredLoopback', { reason: 'LoopbackMeasured' });
    expect(condition.message).toBe(`measured failures or stalls where loopguard finds no loopback: Service/${ns}/cluster (NotApplicable): 0/40 failed, 3 stalled from ${b}; p99 3.4 s`);
    const warning = await waitFor('the MeasuredLoopback Warning Event on the Service', async () => {
      const events = JSON.parse(await must(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=cluster,reason=MeasuredLoopback', '-o', 'json'])) as { items: { type: string; message: string }[] };
      return events.items[0];
    });
    expect(warning).toMatchObject({ type: 'Warning', message: expect.stringContaining(`loopguard calls this Service NotApplicable, but the probe measured 0/40 failed, 3 stalled from ${b}`) });
    // `kubectl describe` shows it as it shows every target field.
    expect(await must(['describe', 'lbp', ref.name, '-n', ns])).toMatch(new RegExp(`\\n +Measured: +measured: 12/40 failed, 12 stalled from ${a}; p99 4\\.2 s\\n`));

    // `loopguard doctor` shows the same, from the same plan and reports, judged against the verdicts it finds.
    // With the operator's own credentials (the emulator's `loopguard` caller), as before.
    const doctor = await runDoctor(['-n', ns, '-o', 'json'], { kubeconfig: kubeconfigPath(), emulator: tke.emulator, caller: 'loopguard' });
    expect({ code: doctor.code, stderr: doctor.stderr }).toEqual({ code: 1, stderr: '' });
    const scanned = JSON.parse(doctor.stdout) as Report;
    expect(scanned.notes).toEqual([]);
    expect(Object.fromEntries(scanned.targets.map((t) => [t.name, t.measured]))).toEqual({
      local: `measured: 12/40 failed, 12 stalled from ${a}; p99 4.2 s`,
      cluster: `contradicts NotApplicable: measured 0/40 failed, 3 stalled from ${b}; p99 3.4 s`,
    });

    // Enforce: the at-risk Service is mitigated; what is measured since counts windows that started after.
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', probe: { enabled: true } }))).stderr).toBe('');
    await waitForPolicy(ref, 'local Mitigated', (p) => reportedStatus(p).targets.find((t) => t.name === 'local')?.verdict === 'Mitigated', { timeoutMs: 60_000 });
    const after = Date.now() + 1000;
    await writeReport(a, written.version, after, [r(cluster, 150, 0, 0, 3), r(local, 150, 0, 0, 3)]);
    await writeReport(b, written.version, after, [r(cluster, 150, 0, 0, 3), r(local, 150, 0, 0, 2.5)]);
    const enforced = await waitForPolicy(ref, 'evidence since Enforce', (p) => measured(p, 'local')?.startsWith('measured since Enforce: 0/300') === true, { timeoutMs: 30_000 });
    expect(measured(enforced, 'local')).toBe('measured since Enforce: 0/300 failed; p99 3 ms');
    expect(measured(enforced, 'cluster')).toBe('measured: 0/300 failed; p99 3 ms');
    await waitForCondition(ref, 'MeasuredLoopback', { status: 'False', reason: 'MeasuredAsModelled' });

    // The fix undone behind loopguard's back: the Mitigated Service fails again from node b. A contradiction, said
    // in the target's line, the condition and a Warning Event; and nothing more is written to the target.
    const annotations = (await core.readNamespacedService({ namespace: ns, name: 'local' })).metadata?.annotations ?? {};
    expect(annotations[PREVENT]).toBe('true');
    const clusterAnnotations = (await core.readNamespacedService({ namespace: ns, name: 'cluster' })).metadata?.annotations ?? {};
    await writeReport(b, written.version, after + 1000, [r(cluster, 150, 0, 0, 3), r(local, 150, 40, 40, 5100)]);
    const contradicted = await waitForCondition(ref, 'MeasuredLoopback', { reason: 'LoopbackMeasured' });
    expect(contradicted.message).toBe(`measured failures or stalls where loopguard finds no loopback: Service/${ns}/local (Mitigated): 40/300 failed, 40 stalled from ${b}; p99 5.1 s`);
    const now = await getPolicy(ref);
    expect(measured(now, 'local')).toBe(`contradicts Mitigated: measured 40/300 failed, 40 stalled from ${b}; p99 5.1 s; measured since Enforce: 40/450 failed, 40 stalled from ${b}; p99 5.1 s`);
    expect(reportedStatus(now).targets.find((t) => t.name === 'local')?.verdict).toBe('Mitigated');
    await waitFor('the MeasuredLoopback Warning Event on the Mitigated Service', async () => {
      const events = JSON.parse(await must(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=local,reason=MeasuredLoopback', '-o', 'json'])) as { items: { type: string; message: string }[] };
      return events.items.find((e) => e.type === 'Warning' && e.message.includes('loopguard calls this Service Mitigated'));
    });
    expect((await core.readNamespacedService({ namespace: ns, name: 'local' })).metadata?.annotations).toEqual(annotations);
    expect((await core.readNamespacedService({ namespace: ns, name: 'cluster' })).metadata?.annotations).toEqual(clusterAnnotations);
  }, 240_000);
});
