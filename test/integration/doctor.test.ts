// `loopguard doctor` end to end, on a private local TKE (its own kube-apiserver, so `-A` sees only this suite's
// objects): the demo workload, an Audit policy run by the operator, and the doctor as its own process the way a user
// runs it — under a ServiceAccount that may only get/list/watch (config/doctor), with its own CLB credentials so the
// emulator counts its calls apart. It must print the Audit policy's verdicts and plans, exit 1, and write nothing.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Report } from '../../src/cli/report.js';
import { diffStats, type StatsSnapshot } from '../../sim/clb-emulator/index.js';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds, REPO_ROOT } from '../controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { kubectl, waitFor } from '../support/kube.js';
import { localTkeCallers, startLocalTke, type LocalTke } from '../support/local-tke.js';
import { entrypointArgs, serviceAccountKubeconfig } from '../support/operator.js';
import { getPolicy, reportedStatus } from '../support/policy.js';

const NS = 'loopguard-demo';
const DOCTOR = { caller: 'doctor', secretId: `AKIDdoctor${randomBytes(8).toString('hex')}`, secretKey: randomBytes(24).toString('hex') };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('loopguard doctor on the local TKE', () => {
  let cp: ControlPlaneState;
  let tke: LocalTke;
  let doctorKubeconfig: string;
  const admin = () => ({ kubeconfig: cp.kubeconfig });

  /** `loopguard doctor …` as a user runs it: its own process, only the environment a shell would give it. */
  function doctor(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: mkdtempSync(join(tmpdir(), 'loopguard-home-')),
      KUBECONFIG: doctorKubeconfig,
      TENCENTCLOUD_REGION: tke.emulator.region,
      TENCENTCLOUD_SECRET_ID: DOCTOR.secretId,
      TENCENTCLOUD_SECRET_KEY: DOCTOR.secretKey,
      LOOPGUARD_CLB_ENDPOINT: tke.emulator.endpoint,
      LOOPGUARD_CLB_PROTOCOL: 'http',
    };
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete base[k];
      else base[k] = v;
    }
    return new Promise((resolve) => {
      execFile(process.execPath, entrypointArgs(['doctor', ...args]), { cwd: REPO_ROOT, env: base, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  }

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    tke = await startLocalTke({ kubeconfig: cp.kubeconfig, allNamespaces: true, emulator: { callers: [...localTkeCallers(), DOCTOR] } });

    expect((await kubectl(['apply', '-f', join(REPO_ROOT, 'config/samples/demo-workload.yaml')], admin())).code).toBe(0);
    // Every CLB built with its listeners before anyone reads them (a target whose listeners are missing is Pending).
    await waitFor(
      'the demo CLBs and their listeners',
      async () => {
        const svc = JSON.parse((await kubectl(['get', 'svc,ingress', '-n', NS, '-o', 'json'], admin())).stdout) as { items: { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: { ports?: unknown[] } }[] };
        const ids = svc.items
          .filter((o) => o.metadata.name !== 'legacy')
          .map((o) => [o.metadata.annotations?.['service.kubernetes.io/loadbalance-id'] ?? o.metadata.annotations?.['kubernetes.io/ingress.qcloud-loadbalance-id'], o.kind === 'Service' ? (o.spec?.ports?.length ?? 0) : 1] as const);
        const built = await Promise.all(ids.map(async ([id, ports]) => (id ? (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length >= ports : false)));
        return built.length === 3 && built.every(Boolean) ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect((await kubectl(['apply', '-n', NS, '-f', join(REPO_ROOT, 'config/samples/audit-policy.yaml')], admin())).code).toBe(0);
    expect((await kubectl(['wait', '--for=condition=Ready', '-n', NS, 'lbp/audit-all', '--timeout=60s'], admin())).code).toBe(0);
    expect((await kubectl(['wait', '--for=jsonpath={.status.counts.pending}=0', '-n', NS, 'lbp/audit-all', '--timeout=60s'], admin())).code).toBe(0);

    // A read-only account, as config/doctor describes: the two roles bound to a ServiceAccount.
    for (const args of [
      ['apply', '-k', join(REPO_ROOT, 'config/doctor')],
      ['create', 'namespace', 'ci'],
      ['create', 'serviceaccount', 'doctor', '-n', 'ci'],
      ['create', 'clusterrolebinding', 'doctor', '--clusterrole=loopguard-doctor', '--serviceaccount=ci:doctor'],
      ['create', 'rolebinding', 'doctor', '-n', 'kube-system', '--role=loopguard-doctor-kube-proxy-reader', '--serviceaccount=ci:doctor'],
    ]) {
      const res = await kubectl(args, admin());
      expect(`${args.join(' ')}: ${res.code} ${res.stderr}`).toBe(`${args.join(' ')}: 0 `);
    }
    doctorKubeconfig = await serviceAccountKubeconfig(cp.kubeconfig, { name: 'doctor', namespace: 'ci' });
    // The sum of what it waits for: a control plane (60 s ready bound), the CLBs (30 s), two kubectl waits (60 s each).
  }, 300_000);

  afterAll(async () => {
    await tke?.stop();
    if (cp) await stopControlPlane(cp);
  });

  it('runs under an account that can only read', async () => {
    const can = async (verb: string, resource: string) => (await kubectl(['auth', 'can-i', verb, resource, '--all-namespaces'], { kubeconfig: doctorKubeconfig })).stdout.trim();
    expect(await can('list', 'services')).toBe('yes');
    expect(await can('list', 'loopbackrecords.loopguard.dev')).toBe('yes');
    expect(await can('list', 'clusterloopbackpolicies.loopguard.dev')).toBe('yes');
    expect(await can('list', 'namespaces')).toBe('yes');
    expect(await can('update', 'namespaces')).toBe('no');
    for (const verb of ['create', 'update', 'patch', 'delete']) {
      expect(`${verb} services: ${await can(verb, 'services')}`).toBe(`${verb} services: no`);
      expect(`${verb} tkeserviceconfigs: ${await can(verb, 'tkeserviceconfigs.cloud.tencent.com')}`).toBe(`${verb} tkeserviceconfigs: no`);
    }
  });

  it('-A prints the Audit policy verdicts and plans, exits 1, and the emulator sees no write', async () => {
    const before: StatsSnapshot = await tke.emulator.admin.stats();
    const run = await doctor(['-A', '-o', 'json']);
    const after: StatsSnapshot = await tke.emulator.admin.stats();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as Report;

    const status = reportedStatus(await getPolicy({ namespace: NS, name: 'audit-all', kubeconfig: cp.kubeconfig }));
    const audit = Object.fromEntries(status.targets.map((t) => [`${t.kind}/${t.name}`, { verdict: t.verdict, rootCause: t.rootCause, plan: t.plan ?? [], loadBalancerId: t.loadBalancerId }]));
    const scanned = Object.fromEntries(
      report.targets.filter((t) => t.namespace === NS).map((t) => [`${t.kind}/${t.name}`, { verdict: t.verdict, rootCause: t.rootCause, plan: t.plan, loadBalancerId: t.loadBalancerId }]),
    );
    expect(scanned).toEqual(audit);
    expect(Object.keys(scanned).sort()).toEqual(['Ingress/api', 'Service/legacy', 'Service/orders', 'Service/storefront']);
    expect(scanned['Service/orders']).toMatchObject({ verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded' });
    expect(scanned['Ingress/api']).toMatchObject({ verdict: 'AtRisk', rootCause: 'L7Loopback' });
    expect(report.targets.find((t) => t.name === 'orders')?.policy).toBe(`LoopbackPolicy ${NS}/audit-all`);
    // The operator's profile detection, reading the same DaemonSet.
    expect(report.clusterProfile).toEqual(status.clusterProfile);
    // Audit shows the same topology alternatives (status carries them as one line each).
    expect(status.targets.find((t) => t.name === 'orders')?.alternatives?.length).toBe(report.targets.find((t) => t.name === 'orders')?.alternatives.length);
    expect(report.notes).toEqual([]);

    // Nothing written anywhere: no CLB write, no task, and the doctor's own calls are reads only.
    const diff = diffStats(after, before);
    expect(diff.listenerWrites).toEqual({});
    expect(diff.ruleWrites).toEqual({});
    expect(diff.tasks).toEqual({ started: 0, succeeded: 0, failed: 0 });
    const doctorCalls = Object.keys(diff.byCaller['doctor'] ?? {}).sort();
    expect(doctorCalls).toEqual(['DescribeListeners', 'DescribeLoadBalancers', 'DescribeTargetHealth']);
    expect(Object.keys(diff.calls).filter((a) => !a.startsWith('Describe'))).toEqual([]);
    expect(report.scan?.clbCalls).toEqual(Object.fromEntries(Object.entries(diff.byCaller['doctor'] ?? {}).map(([a, o]) => [a, Object.values(o).reduce((x, y) => x + y, 0)])));
    // Nor on the cluster: the targets carry no annotation loopguard would add.
    const svc = JSON.parse((await kubectl(['get', 'svc/orders', '-n', NS, '-o', 'json'], admin())).stdout) as { metadata: { annotations?: Record<string, string> } };
    expect(svc.metadata.annotations?.['service.cloud.tencent.com/prevent-loopback']).toBeUndefined();
    // Credentials never reach the output.
    expect(run.stdout + run.stderr).not.toContain(DOCTOR.secretKey);
  });

  it('prints a table for people; -n and -l narrow the scan', async () => {
    const table = await doctor(['-n', NS]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/loopguard-demo\s+Service\s+orders\s+lb-\w+\s+AtRisk\s+PodSourceNotMasqueraded\s+4 steps/);
    expect(table.stdout).toContain('Enforce would:');
    expect(table.stdout).toContain('orders.loopguard-demo.svc.cluster.local');
    expect(table.stdout).toMatch(/scanned namespace loopguard-demo \(context c\): 4 CLBs read with \d+ read-only CLB API calls, nothing written/);
    const none = await doctor(['-n', NS, '-l', 'app.kubernetes.io/name=nothing']);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('no Service or Ingress selected');
  });

  it('cannot scan: one line and exit 2 for a wrong kubeconfig, missing credentials, an unknown region, no permission', async () => {
    const oneLine = (r: Run) => {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      return r.stderr.trim();
    };
    const badToken = join(mkdtempSync(join(tmpdir(), 'loopguard-bad-')), 'kubeconfig');
    writeFileSync(badToken, (await import('node:fs')).readFileSync(doctorKubeconfig, 'utf8').replace(/token: [^}]+}/, 'token: not-a-token}'));
    expect(oneLine(await doctor(['-A'], { KUBECONFIG: badToken }))).toMatch(/^loopguard doctor: cannot list Services in all namespaces: the Kubernetes API server at https:\/\/127\.0\.0\.1:\d+ does not accept the kubeconfig's credentials \(HTTP 401\)/);
    expect(oneLine(await doctor(['-A'], { KUBECONFIG: '/nonexistent/kubeconfig' }))).toMatch(/^loopguard doctor: cannot read kubeconfig \/nonexistent\/kubeconfig: ENOENT/);
    expect(oneLine(await doctor(['-A'], { TENCENTCLOUD_SECRET_KEY: undefined }))).toMatch(/^loopguard doctor: cannot read CLBs in region ap-guangzhou: .*TENCENTCLOUD_SECRET_KEY/);
    expect(oneLine(await doctor(['-A'], { TENCENTCLOUD_SECRET_KEY: 'wrong' }))).toMatch(/^loopguard doctor: cannot read CLBs in region ap-guangzhou: .*(SignatureFailure|credentials)/i);
    expect(oneLine(await doctor(['-A', '--region', 'ap-nowhere']))).toMatch(/^loopguard doctor: cannot read CLBs in region ap-nowhere: .*RegionNotFound.*--region/);
    expect(oneLine(await doctor(['-A'], { KUBECONFIG: cp.userKubeconfig }))).toMatch(/^loopguard doctor: cannot list Services in all namespaces: HTTP 403: .*Fix: grant get and list/);
  });

  // Issue 24: which policy covers each target, a ClusterLoopbackPolicy included, and what no policy covers. The
  // cluster policy selects only namespaces carrying a label unique to this run, and is deleted afterwards.
  describe('with a ClusterLoopbackPolicy', () => {
    const run = randomBytes(4).toString('hex');
    const LABEL = `loopguard.dev/doctor-test-${run}`;
    const POLICY = `doctor-test-${run}`;
    const COVERED = `doctor-covered-${run}`;
    const BARE = `doctor-bare-${run}`;
    const NO_NAMESPACES = `loopguard-doctor-no-namespaces-${run}`;
    // Private CLB, ETP Local: at risk, as the demo's orders.
    const service = (namespace: string) => `apiVersion: v1
kind: Service
metadata:
  name: orders
  namespace: ${namespace}
  annotations:
    service.kubernetes.io/qcloud-loadbalancer-internal-subnetid: subnet-demo0001
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector: { app: orders }
  ports:
    - { name: http, port: 80, targetPort: 8080 }
`;

    beforeAll(async () => {
      const ok = async (args: string[], input?: string) => {
        const res = await kubectl(args, { ...admin(), ...(input ? { input } : {}) });
        expect(`${args.join(' ')}: ${res.code} ${res.stderr}`).toBe(`${args.join(' ')}: 0 `);
      };
      await ok(['create', 'namespace', COVERED]);
      await ok(['label', 'namespace', COVERED, `${LABEL}=covered`]);
      await ok(['create', 'namespace', BARE]);
      await ok(['apply', '-f', '-'], `${service(COVERED)}---\n${service(BARE)}`);
      await ok(
        ['apply', '-f', '-'],
        `apiVersion: loopguard.dev/v1alpha1\nkind: ClusterLoopbackPolicy\nmetadata: { name: ${POLICY} }\nspec:\n  mode: Audit\n  namespaceSelector: { matchLabels: { ${LABEL}: covered } }\n`,
      );
      // Both CLBs built with their listener before the doctor reads them (else the targets are Pending).
      await waitFor(
        'the CLBs of the two new Services',
        async () => {
          const ids = await Promise.all(
            [COVERED, BARE].map(async (ns) => (JSON.parse((await kubectl(['get', 'svc/orders', '-n', ns, '-o', 'json'], admin())).stdout || '{}') as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations?.['service.kubernetes.io/loadbalance-id']),
          );
          const built = await Promise.all(ids.map(async (id) => (id ? (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length >= 1 : false)));
          return built.every(Boolean) ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
    });

    afterAll(async () => {
      // The operator's finalizer goes first: nothing of this policy may outlive the suite, operator running or not.
      await kubectl(['patch', 'clusterloopbackpolicy', POLICY, '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], admin());
      await kubectl(['delete', 'clusterloopbackpolicy', POLICY, '--ignore-not-found', '--wait=false'], admin());
      await kubectl(['patch', 'clusterloopbackpolicy', POLICY, '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], admin());
      await kubectl(['delete', 'namespace', COVERED, BARE, '--ignore-not-found', '--wait=false'], admin());
      await kubectl(['delete', 'clusterrolebinding,clusterrole', NO_NAMESPACES, '--ignore-not-found'], admin());
    });

    it('names the cluster policy for the labelled namespace and reports the at-risk target of the other one uncovered', async () => {
      const result = await doctor(['-A', '-o', 'json']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as Report;
      const orders = (ns: string) => report.targets.find((t) => t.namespace === ns && t.kind === 'Service' && t.name === 'orders');
      expect(orders(COVERED)).toMatchObject({ verdict: 'AtRisk', policy: `ClusterLoopbackPolicy/${POLICY}` });
      expect(orders(COVERED)?.uncovered).toBeUndefined();
      expect(orders(BARE)).toMatchObject({ verdict: 'AtRisk', uncovered: true });
      expect(orders(BARE)?.policy).toBeUndefined();
      // The demo's LoopbackPolicy still covers its namespace (the cluster policy does not select it).
      expect(orders(NS)?.policy).toBe(`LoopbackPolicy ${NS}/audit-all`);
      expect(report.uncovered).toBe(1);
      // The read-only account reads the cluster policies and the namespaces' labels: nothing is missing.
      expect(report.notes).toEqual([]);
    });

    it("an account that may not read Namespaces: one note, cluster policies unresolved, nothing called uncovered", async () => {
      // config/doctor's ClusterRole without its namespaces rule, bound to a ServiceAccount of its own.
      const role = JSON.parse((await kubectl(['get', 'clusterrole', 'loopguard-doctor', '-o', 'json'], admin())).stdout) as { rules: { resources: string[] }[] };
      const rules = role.rules.filter((r) => !r.resources.includes('namespaces'));
      expect(rules.length).toBe(role.rules.length - 1);
      const body = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: NO_NAMESPACES }, rules };
      for (const [args, input] of [
        [['apply', '-f', '-'], JSON.stringify(body)],
        [['create', 'serviceaccount', 'doctor-no-ns', '-n', 'ci']],
        [['create', 'clusterrolebinding', NO_NAMESPACES, `--clusterrole=${NO_NAMESPACES}`, '--serviceaccount=ci:doctor-no-ns']],
        [['create', 'rolebinding', 'doctor-no-ns', '-n', 'kube-system', '--role=loopguard-doctor-kube-proxy-reader', '--serviceaccount=ci:doctor-no-ns']],
      ] as [string[], string?][]) {
        const res = await kubectl(args, { ...admin(), ...(input ? { input } : {}) });
        expect(`${args.join(' ')}: ${res.code} ${res.stderr}`).toBe(`${args.join(' ')}: 0 `);
      }
      const kubeconfig = await serviceAccountKubeconfig(cp.kubeconfig, { name: 'doctor-no-ns', namespace: 'ci' });
      const result = await doctor(['-A', '-o', 'json'], { KUBECONFIG: kubeconfig });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as Report;
      expect(report.notes).toHaveLength(1);
      expect(report.notes[0]).toMatch(/^could not read Namespaces \(.*forbidden.*\): which ClusterLoopbackPolicy covers a target is unresolved/);
      const orders = (ns: string) => report.targets.find((t) => t.namespace === ns && t.kind === 'Service' && t.name === 'orders');
      expect(orders(COVERED)?.policy).toBeUndefined();
      expect(report.targets.filter((t) => t.uncovered)).toEqual([]);
      expect(report.uncovered).toBeUndefined();
      expect(orders(NS)?.policy).toBe(`LoopbackPolicy ${NS}/audit-all`);
    });
  });
});
