// The loopback probe agent (issue 41, agent side; docs/probe.md) as the DaemonSet runs it: `loopguard probe`
// (the image's entrypoint, test/support/operator.ts entrypointArgs) under config/components/probe's ServiceAccount and Role, with a token bound to a pod on
// its node (as the kubelet projects it), and config/components/probe-own-node's admission policy, against the test
// apiserver. Its plan ConfigMap points at listeners this test starts on 127.0.0.1 (the agent's --allow-cidr admits
// loopback only for this): a TCP port that accepts, one that refuses, an HTTP server that answers and one that never
// does. After one window the node's LoopbackProbeReport holds exact counts; after the next one it has been updated in
// place, and the listeners saw exactly the probes the reports count (the plan is deleted once the first window is
// written, so the agent finishes the window it is in and sends nothing more: src/probe/agent.ts runs a window to its
// end with the plan it started with). A public address in the plan is refused with a log line and never dialled. The
// same token cannot write another node's report, and a token bound to no pod cannot write any.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '../controlplane/crds.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { entrypointArgs, OPERATOR_NAMESPACE, serviceAccountKubeconfig } from '../support/operator.js';
import type { ProbeReport } from '../../src/api/probe.js';
import { selfSignedCert } from '../../src/runtime/self-signed-cert.js';

const WINDOW_SECONDS = 4;
const SA = { name: 'loopguard-probe', namespace: OPERATOR_NAMESPACE };
/** The agent's log line for each window it wrote (agent.ts). */
const WRITTEN = 'Probe window written';

async function must(args: string[], input?: string): Promise<string> {
  const res = await kubectl(args, input === undefined ? {} : { input });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

/** A kubeconfig with the probe ServiceAccount's token bound to a pod (whose node the apiserver writes into it). */
async function podBoundKubeconfig(pod: { name: string; uid: string }): Promise<string> {
  const token = (await must(['create', 'token', SA.name, '-n', SA.namespace, '--duration=1h', '--bound-object-kind=Pod', `--bound-object-name=${pod.name}`, `--bound-object-uid=${pod.uid}`])).trim();
  const cluster = kubeConfig().getCurrentCluster()!;
  const path = join(mkdtempSync(join(tmpdir(), 'loopguard-probe-sa-')), 'kubeconfig');
  const ca = cluster.caFile ? `certificate-authority: ${cluster.caFile}` : 'insecure-skip-tls-verify: true';
  writeFileSync(path, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${cluster.server}", ${ca}}}]\nusers: [{name: u, user: {token: ${token}}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`, { mode: 0o600 });
  return path;
}
const listen = <S extends Server | HttpServer>(server: S): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('loopguard probe', () => {
  const node = `probe-node-${process.pid}`;
  const sockets = new Set<Socket>();
  /**
   * What reached the listeners. Counted, not timed: an accept's callback runs when this process's event loop gets to
   * it, which under load is after the window it belongs to has ended (a probe sent 0.1 s before a window's end was
   * once seen 'after' it).
   */
  const heads: string[] = [];
  let connects = 0;
  let tcp: Server;
  let silent: Server;
  let http: HttpServer;
  let https: HttpsServer;
  /** The TLS server name each HTTPS probe asked for, and its request line. */
  const tlsHeads: string[] = [];
  let ports: { tcp: number; refused: number; http: number; silent: number; https: number };
  let agent: ChildProcess | undefined;
  let logs = '';
  let exited: Promise<number | null>;
  let kubeconfig: string;

  beforeAll(async () => {
    tcp = createServer((s) => {
      connects++;
      s.on('error', () => {});
      s.end();
    });
    // Accepts and never answers: an L7 probe to it times out (a stall past the timeout).
    silent = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    http = createHttpServer((req, res) => {
      heads.push(`${req.method} ${req.headers.host} ${req.url}`);
      res.writeHead(204).end();
    });
    // A certificate no one trusts: the probe measures reachability and does not check it (docs/probe.md §5).
    https = createHttpsServer(selfSignedCert(['secure.example.com']), (req, res) => {
      tlsHeads.push(`${(req.socket as { servername?: string }).servername} ${req.method} ${req.headers.host} ${req.url}`);
      res.writeHead(200).end();
    });
    const closed = createServer();
    ports = { tcp: await listen(tcp), silent: await listen(silent), http: await listen(http), https: await listen(https), refused: await listen(closed) };
    await new Promise((r) => closed.close(r));

    for (const f of ['config/manager/namespace.yaml', 'config/components/probe/service_account.yaml', 'config/components/probe/role.yaml', 'config/components/probe-own-node/validating_admission_policy.yaml']) {
      await must(['apply', '--server-side', '-f', join(REPO_ROOT, f)]);
    }
    // The node and the agent's pod, as the DaemonSet would place it (no kubelet runs it: the agent runs here).
    await must(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } }));
    // The component's pod template, so the namespace's restricted Pod Security admits it as it admits the DaemonSet's.
    const ds = parse(readFileSync(join(REPO_ROOT, 'config/components/probe/daemonset.yaml'), 'utf8')) as { spec: { template: { spec: object } } };
    const pod = JSON.parse(
      await must(['create', '-o', 'json', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: node, namespace: OPERATOR_NAMESPACE }, spec: { ...ds.spec.template.spec, nodeName: node } })),
    ) as { metadata: { name: string; uid: string } };
    kubeconfig = await podBoundKubeconfig(pod.metadata);
    const plan = {
      version: 1,
      windowSeconds: WINDOW_SECONDS,
      // Below the 3 s stall threshold but long enough for a TLS handshake on a loaded 2-core machine: a 1 s timeout
      // once counted a failure against the HTTPS target while the whole suite ran beside it.
      timeoutMs: 2500,
      targets: [
        { id: 'Service/app/accepts:80', vip: '127.0.0.1', port: ports.tcp, protocol: 'TCP' },
        { id: 'Service/app/refuses:80', vip: '127.0.0.1', port: ports.refused, protocol: 'TCP' },
        { id: 'Ingress/app/answers/www.example.com/healthz', vip: '127.0.0.1', port: ports.http, protocol: 'HTTP', host: 'www.example.com', path: '/healthz' },
        // Past the 3 s stall threshold: a failure and a stall.
        { id: 'Ingress/app/stalls/slow.example.com/', vip: '127.0.0.1', port: ports.silent, protocol: 'HTTP', host: 'slow.example.com', timeoutMs: 3100 },
        { id: 'Ingress/app/tls/secure.example.com/', vip: '127.0.0.1', port: ports.https, protocol: 'HTTPS', host: 'secure.example.com' },
        { id: 'Service/app/public:80', vip: '8.8.8.8', port: 80, protocol: 'TCP' },
      ],
    };
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'loopguard-probe-plan', namespace: OPERATOR_NAMESPACE }, data: { 'plan.json': JSON.stringify(plan) } };
    const res = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: JSON.stringify(cm) });
    if (res.code !== 0) throw new Error(`kubectl apply plan: ${res.stderr}`);

    agent = spawn(
      process.execPath,
      entrypointArgs(['probe', `--kubeconfig=${kubeconfig}`, `--node=${node}`, `--namespace=${OPERATOR_NAMESPACE}`,
        '--allow-cidr=127.0.0.0/8', '--min-window-seconds=1', '--rate=5', '--min-interval-seconds=1']),
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', POD_NAME: 'loopguard-probe-test', POD_UID: 'uid-test' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
    agent.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
    exited = new Promise((resolve) => agent!.on('exit', (code) => resolve(code)));
  }, 60_000);

  afterAll(async () => {
    if (agent && agent.exitCode === null) {
      agent.kill('SIGKILL');
      await exited;
    }
    for (const s of sockets) s.destroy();
    await Promise.all([tcp, silent, http, https].map((s) => new Promise((r) => s?.close(r))));
    await kubectl(['delete', 'loopbackprobereport', node, '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    await kubectl(['delete', 'pod', node, '-n', OPERATOR_NAMESPACE, '--ignore-not-found', '--grace-period=0', '--force']);
    await kubectl(['delete', 'node', node, '--ignore-not-found']);
    await kubectl(['delete', '-f', join(REPO_ROOT, 'config/components/probe-own-node/validating_admission_policy.yaml'), '--ignore-not-found']);
    await kubectl(['delete', 'configmap', 'loopguard-probe-plan', '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
  });

  const report = async (): Promise<ProbeReport | undefined> => {
    const res = await kubectl(['get', 'loopbackprobereport', node, '-n', OPERATOR_NAMESPACE, '-o', 'json']);
    return res.code === 0 ? (JSON.parse(res.stdout) as ProbeReport) : undefined;
  };

  // rate 5/s x 4 s = 20 probes a window for 5 targets: 4 each (the per-target floor, 1 s apart, allows 4 too).
  const expected = [
    { id: 'Service/app/accepts:80', probes: 4, failures: 0, stalls: 0, notRun: 0 },
    { id: 'Service/app/refuses:80', probes: 4, failures: 4, stalls: 0, notRun: 0 },
    { id: 'Ingress/app/answers/www.example.com/healthz', probes: 4, failures: 0, stalls: 0, notRun: 0 },
    { id: 'Ingress/app/stalls/slow.example.com/', probes: 4, failures: 4, stalls: 4, notRun: 0 },
    { id: 'Ingress/app/tls/secure.example.com/', probes: 4, failures: 0, stalls: 0, notRun: 0 },
  ];
  const counts = (r: ProbeReport) => r.spec.targets.map(({ id, probes, failures, stalls, notRun }) => ({ id, probes, failures, stalls, notRun }));

  it('writes its node report after one window with exact counts, and updates it after the next', async () => {
    const first = await waitFor('the first report', report, { timeoutMs: 60_000, intervalMs: 250, context: () => logs.slice(-3000) });
    expect(counts(first)).toEqual(expected);
    expect(first.spec).toMatchObject({ node, pod: { name: 'loopguard-probe-test', uid: 'uid-test' }, window: { seconds: WINDOW_SECONDS } });
    expect(Date.parse(first.spec.window.end) - Date.parse(first.spec.window.start)).toBe(WINDOW_SECONDS * 1000);
    const [accepts, , answers, stalls] = first.spec.targets;
    expect(accepts!.p99Ms).toBeLessThan(1000);
    expect(answers!.p99Ms).toBeLessThan(1000);
    // Timed out at 3.1 s: the bucket's middle is within 9.1 % of it.
    expect(stalls!.p50Ms).toBeGreaterThan(3100 / 1.0906);
    expect(stalls!.p50Ms).toBeLessThan(3100 * 1.0906 + 200);
    // The agent logs a written window and starts the next one in the same turn of its event loop (agent.ts), so once
    // the line is out a deletion of the plan reaches it in its second window (or a later one, on a slow machine):
    // without a plan it finishes that window, writes it, and probes no more.
    await waitFor('the first window written', () => (logs.includes(WRITTEN) ? true : undefined), { timeoutMs: 10_000, intervalMs: 50, context: () => logs.slice(-3000) });
    await kubeConfig().makeApiClient(CoreV1Api).deleteNamespacedConfigMap({ name: 'loopguard-probe-plan', namespace: OPERATOR_NAMESPACE });
    // The public address: refused when the plan was read, never probed.
    expect(logs).toContain('Probe target Service/app/public:80 refused: vip 8.8.8.8 is not a private IPv4 address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 127.0.0.0/8): the probe sends only to private CLB VIPs');

    const second = await waitFor('the next window\'s report', report, { until: (r) => r !== undefined && r.spec.window.start !== first.spec.window.start, timeoutMs: 60_000, intervalMs: 250, context: () => logs.slice(-3000) });
    expect(counts(second!)).toEqual(expected);
    expect(Date.parse(second!.spec.window.start)).toBeGreaterThanOrEqual(Date.parse(first.spec.window.end));
    // The window the deletion came in is written too; then the agent waits for a plan.
    await waitFor('the last window written after the deletion', () => {
      const at = logs.indexOf('The probe plan was deleted');
      return at >= 0 && logs.indexOf(WRITTEN, at) >= 0 ? true : undefined;
    }, { timeoutMs: 15_000, intervalMs: 100, context: () => logs.slice(-3000) });

    agent!.kill('SIGTERM');
    expect(await exited).toBe(0);
    // What reached the listeners, now that nothing more can: exactly the HEADs with the plan's Host and path, and
    // the TCP connects, of the windows written (each connection accepted before the agent exited; callbacks may lag).
    const windows = logs.split(WRITTEN).length - 1;
    expect(windows).toBeGreaterThanOrEqual(2);
    const sent = windows * 4;
    await waitFor('the listeners to count every probe', async () => (connects >= sent && heads.length >= sent && tlsHeads.length >= sent ? true : undefined), { timeoutMs: 10_000, intervalMs: 50, context: () => JSON.stringify({ connects, heads, tlsHeads }) });
    await new Promise((r) => setImmediate(r));
    expect({ connects, heads, tlsHeads }).toEqual({ connects: sent, heads: Array(sent).fill('HEAD www.example.com /healthz'), tlsHeads: Array(sent).fill('secure.example.com HEAD secure.example.com /') });
  }, 120_000);

  it("refuses the agent's token a report of another node, and a token bound to no pod any report", async () => {
    const other = { apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackProbeReport', metadata: { name: 'someone-else', namespace: OPERATOR_NAMESPACE }, spec: { node: 'someone-else', pod: { name: 'x', uid: 'y' }, planVersion: '1', window: { start: '2026-11-29T07:00:00Z', end: '2026-11-29T07:05:00Z', seconds: 300 }, targets: [] } };
    const forged = await kubectl(['--kubeconfig', kubeconfig, 'create', '-f', '-'], { input: JSON.stringify(other) });
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain(`loopguard: the probe agent on node ${node} may write only the LoopbackProbeReport named ${node} with spec.node ${node}, not someone-else`);
    const unbound = await kubectl(['--kubeconfig', await serviceAccountKubeconfig(undefined, SA), 'create', '-f', '-'], { input: JSON.stringify(other) });
    expect(unbound.code).not.toBe(0);
    expect(unbound.stderr).toContain('this one names no node');
  });

  it('applies server-side as a user installs it: config/default with the probe and probe-own-node components', async () => {
    const overlay = mkdtempSync(join(tmpdir(), 'loopguard-probe-overlay-'));
    const rel = relative(overlay, REPO_ROOT);
    writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${rel}/config/default]\ncomponents: [${rel}/config/components/probe, ${rel}/config/components/probe-own-node]\n`);
    const rendered = await must(['kustomize', overlay]);
    // A server-side dry run: every object admitted and validated by the real apiserver, nothing left behind for other suites.
    const res = await kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], { input: rendered });
    // Another suite on this control plane may have applied config/default client-side: kubectl then warns, once per
    // such object, that it could not migrate the last-applied annotation (non-fatal). Every other line counts.
    const stderr = res.stderr
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('Warning: failed to migrate kubectl.kubernetes.io/last-applied-configuration'))
      .join('\n');
    expect({ code: res.code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(res.stdout).toContain('daemonset.apps/loopguard-probe serverside-applied (server dry run)');
    expect(res.stdout).toContain('validatingadmissionpolicy.admissionregistration.k8s.io/loopguard-probe-own-node serverside-applied (server dry run)');
  });
});
