// The loopback probe agent (issue 41, agent side; docs/probe.md) as the DaemonSet runs it: `loopguard probe`
// (src/main.ts through tsx) under config/components/probe's ServiceAccount and Role, against the test apiserver. Its
// plan ConfigMap points at listeners this test starts on 127.0.0.1 (the agent's --allow-cidr admits loopback only for
// this): a TCP port that accepts, one that refuses, an HTTP server that answers and one that never does. After one
// window the node's LoopbackProbeReport holds exact counts; after the next one it has been updated in place. A public
// address in the plan is refused with a log line and never dialled.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';
import { kubectl, waitFor } from '../support/kube.js';
import { OPERATOR_NAMESPACE, serviceAccountKubeconfig } from '../support/operator.js';
import type { ProbeReport } from '../../src/api/probe.js';

const WINDOW_SECONDS = 4;
const listen = <S extends Server | HttpServer>(server: S): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('loopguard probe', () => {
  const node = `probe-node-${process.pid}`;
  const sockets = new Set<Socket>();
  /** What reached the listeners, with when (window 1's probes are all sent before its end, the next window's after). */
  const heads: { at: number; line: string }[] = [];
  const connects: number[] = [];
  let tcp: Server;
  let silent: Server;
  let http: HttpServer;
  let ports: { tcp: number; refused: number; http: number; silent: number };
  let agent: ChildProcess | undefined;
  let logs = '';
  let exited: Promise<number | null>;

  beforeAll(async () => {
    tcp = createServer((s) => {
      connects.push(Date.now());
      s.on('error', () => {});
      s.end();
    });
    // Accepts and never answers: an L7 probe to it times out (a stall past the timeout).
    silent = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    http = createHttpServer((req, res) => {
      heads.push({ at: Date.now(), line: `${req.method} ${req.headers.host} ${req.url}` });
      res.writeHead(204).end();
    });
    const closed = createServer();
    ports = { tcp: await listen(tcp), silent: await listen(silent), http: await listen(http), refused: await listen(closed) };
    await new Promise((r) => closed.close(r));

    for (const f of ['config/manager/namespace.yaml', 'config/components/probe/service_account.yaml', 'config/components/probe/role.yaml']) {
      const res = await kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, f)]);
      if (res.code !== 0) throw new Error(`kubectl apply ${f}: ${res.stderr}`);
    }
    const plan = {
      version: 1,
      windowSeconds: WINDOW_SECONDS,
      timeoutMs: 1000,
      targets: [
        { id: 'Service/app/accepts:80', vip: '127.0.0.1', port: ports.tcp, protocol: 'TCP' },
        { id: 'Service/app/refuses:80', vip: '127.0.0.1', port: ports.refused, protocol: 'TCP' },
        { id: 'Ingress/app/answers/www.example.com/healthz', vip: '127.0.0.1', port: ports.http, protocol: 'HTTP', host: 'www.example.com', path: '/healthz' },
        // Past the 3 s stall threshold: a failure and a stall.
        { id: 'Ingress/app/stalls/slow.example.com/', vip: '127.0.0.1', port: ports.silent, protocol: 'HTTP', host: 'slow.example.com', timeoutMs: 3100 },
        { id: 'Service/app/public:80', vip: '8.8.8.8', port: 80, protocol: 'TCP' },
      ],
    };
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'loopguard-probe-plan', namespace: OPERATOR_NAMESPACE }, data: { 'plan.json': JSON.stringify(plan) } };
    const res = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: JSON.stringify(cm) });
    if (res.code !== 0) throw new Error(`kubectl apply plan: ${res.stderr}`);

    const kubeconfig = await serviceAccountKubeconfig(undefined, { name: 'loopguard-probe', namespace: OPERATOR_NAMESPACE });
    agent = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'src/main.ts'), 'probe', `--kubeconfig=${kubeconfig}`, `--node=${node}`, `--namespace=${OPERATOR_NAMESPACE}`,
        '--allow-cidr=127.0.0.0/8', '--min-window-seconds=1', '--rate=5', '--min-interval-seconds=1'],
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
    await Promise.all([tcp, silent, http].map((s) => new Promise((r) => s?.close(r))));
    await kubectl(['delete', 'loopbackprobereport', node, '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    await kubectl(['delete', 'configmap', 'loopguard-probe-plan', '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
  });

  const report = async (): Promise<ProbeReport | undefined> => {
    const res = await kubectl(['get', 'loopbackprobereport', node, '-n', OPERATOR_NAMESPACE, '-o', 'json']);
    return res.code === 0 ? (JSON.parse(res.stdout) as ProbeReport) : undefined;
  };

  // rate 5/s x 4 s = 20 probes a window for 4 targets: 4 each (the per-target floor, 1 s apart, allows 4 too).
  const expected = [
    { id: 'Service/app/accepts:80', probes: 4, failures: 0, stalls: 0, notRun: 0 },
    { id: 'Service/app/refuses:80', probes: 4, failures: 4, stalls: 0, notRun: 0 },
    { id: 'Ingress/app/answers/www.example.com/healthz', probes: 4, failures: 0, stalls: 0, notRun: 0 },
    { id: 'Ingress/app/stalls/slow.example.com/', probes: 4, failures: 4, stalls: 4, notRun: 0 },
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
    // What reached the listeners: exactly the HEADs with the plan's Host and path, and the TCP connects.
    const end = Date.parse(first.spec.window.end);
    expect(heads.filter((h) => h.at < end).map((h) => h.line)).toEqual(Array(4).fill('HEAD www.example.com /healthz'));
    expect(connects.filter((at) => at < end)).toHaveLength(4);
    // The public address: refused when the plan was read, never probed.
    expect(logs).toContain('Probe target Service/app/public:80 refused: vip 8.8.8.8 is not a private IPv4 address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 127.0.0.0/8): the probe sends only to private CLB VIPs');

    const second = await waitFor('the next window\'s report', report, { until: (r) => r !== undefined && r.spec.window.start !== first.spec.window.start, timeoutMs: 60_000, intervalMs: 250, context: () => logs.slice(-3000) });
    expect(counts(second!)).toEqual(expected);
    expect(Date.parse(second!.spec.window.start)).toBeGreaterThanOrEqual(Date.parse(first.spec.window.end));

    agent!.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});
