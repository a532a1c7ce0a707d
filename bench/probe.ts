// bench/probe: what the loopback probe agent costs (issue 41 #6, docs/probe.md §4 and §7). K agents run as the
// DaemonSet runs them — the built bundle's `loopguard probe`, each a process with a node of its own — against the test
// apiserver, with one plan of T targets pointing at listeners this bench starts on 127.0.0.1 (the agents'
// --allow-cidr admits loopback for this; every fifth target is an HTTP HEAD, the rest TCP connects). Once every agent
// has written W full windows, it prints per node the probes per second against its --rate bound, the fewest probes
// any target got in a window (the schedule promises every target at least once per window while window × rate ≥
// targets), the report writes per minute against the one-per-node-per-window bound, and the agents' memory:
//
//   probe: nodes=K targets=T window=Ws rate=R probes/s/node=X (X/R of the rate) min_probes_per_target=M
//     writes/min=Y (bound K×60/W=Z, Y/Z) agent_rss_peak=P MiB agent_rss_settled=S MiB
//
// The latency a loopback listener answers in is not the point here (the lab measures faults); the counts are.
// Figures only; no timed assertion.
//
//   npm run bench:probe                                  (defaults: --nodes 5 --targets 1000 --window 300s --windows 2)
//   npm run bench:probe -- --nodes 2 --targets 50 --window 20s --windows 1      (CI)
import { parseArgs } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../src/api/loopbackpolicy.js';
import { PROBE_PLAN_KEY, PROBE_PLAN_NAME, PROBE_REPORT_PLURAL, type ProbePlan, type ProbeReport } from '../src/api/probe.js';
import { parseDuration } from '../src/runtime/config.js';
import { kubeConfig, waitFor } from '../test/support/kube.js';
import { OPERATOR_NAMESPACE } from '../test/support/operator.js';
import { MiB, procStatus } from './operator-sampler.js';
import { benchCluster, buildOperator, runBench } from './support.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5' },
    targets: { type: 'string', default: '1000' },
    window: { type: 'string', default: '300s' },
    windows: { type: 'string', default: '2' },
    rate: { type: 'string', default: '5' },
  },
});
const NODES = Number(values.nodes);
const TARGETS = Number(values.targets);
const WINDOW_S = (parseDuration(values.window) ?? NaN) / 1000;
const WINDOWS = Number(values.windows);
const RATE = Number(values.rate);
for (const [name, v] of Object.entries({ nodes: NODES, targets: TARGETS, window: WINDOW_S, windows: WINDOWS, rate: RATE })) {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be positive, got ${String(values[name as keyof typeof values])}`);
}

const listen = (server: Server | ReturnType<typeof createHttpServer>): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

/** The plan: T targets on two local listeners (an id each, as the operator names its targets). */
function plan(tcp: number, http: number): ProbePlan {
  return {
    version: 1,
    windowSeconds: WINDOW_S,
    timeoutMs: 2000,
    targets: Array.from({ length: TARGETS }, (_, i) =>
      i % 5 === 4
        ? { id: `Ingress/bench/web-${i}/web-${i}.example.com/healthz`, vip: '127.0.0.1', port: http, protocol: 'HTTP' as const, host: `web-${i}.example.com`, path: '/healthz' }
        : { id: `Service/bench/svc-${i}:80`, vip: '127.0.0.1', port: tcp, protocol: 'TCP' as const },
    ),
  };
}

interface NodeSeen {
  /** The report's resourceVersions seen: each new one is a write. */
  versions: Set<string>;
  /** Full windows reported (a window that started before the plan is not full). */
  full: ProbeReport['spec'][];
}

async function main(): Promise<void> {
  const cluster = await benchCluster();
  const agents: ChildProcess[] = [];
  const servers: { close(): void }[] = [];
  try {
    const bundle = await buildOperator();
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    await core.createNamespace({ body: { metadata: { name: OPERATOR_NAMESPACE } } }).catch(() => undefined);

    const tcpServer = createServer((s) => {
      s.on('error', () => {});
      s.end();
    });
    const httpServer = createHttpServer((_req, res) => res.writeHead(204).end());
    servers.push(tcpServer, httpServer);
    const [tcp, http] = await Promise.all([listen(tcpServer), listen(httpServer)]);
    await core.createNamespacedConfigMap({ namespace: OPERATOR_NAMESPACE, body: { metadata: { name: PROBE_PLAN_NAME }, data: { [PROBE_PLAN_KEY]: JSON.stringify(plan(tcp, http)) } } });
    const planAt = Date.now();

    for (let i = 0; i < NODES; i++) {
      const agent = spawn(
        process.execPath,
        [bundle, 'probe', `--kubeconfig=${process.env.KUBECONFIG}`, `--node=bench-node-${i}`, `--namespace=${OPERATOR_NAMESPACE}`, '--allow-cidr=127.0.0.0/8', `--min-window-seconds=${Math.min(60, WINDOW_S)}`, `--rate=${RATE}`, '--log-level=warn'],
        { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', POD_NAME: `loopguard-probe-${i}`, POD_UID: `uid-${i}` }, stdio: ['ignore', 'inherit', 'inherit'] },
      );
      agents.push(agent);
    }

    const seen = new Map<string, NodeSeen>();
    const rss: number[][] = agents.map(() => []);
    const poll = async (): Promise<boolean> => {
      agents.forEach((a, i) => {
        const s = a.pid !== undefined ? procStatus(a.pid) : undefined;
        if (s) rss[i]!.push(s.rss);
      });
      const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: OPERATOR_NAMESPACE, plural: PROBE_REPORT_PLURAL })) as { items: ProbeReport[] };
      for (const r of list.items) {
        const node = seen.get(r.spec.node) ?? { versions: new Set<string>(), full: [] };
        seen.set(r.spec.node, node);
        const rv = r.metadata.resourceVersion ?? '';
        if (node.versions.has(rv)) continue;
        node.versions.add(rv);
        if (Date.parse(r.spec.window.start) >= planAt) node.full.push(r.spec);
      }
      return seen.size === NODES && [...seen.values()].every((n) => n.full.length >= WINDOWS);
    };
    await waitFor(`${WINDOWS} full window(s) from each of ${NODES} agents`, poll, { until: (done) => done, timeoutMs: (WINDOWS + 2) * WINDOW_S * 1000 + 60_000, intervalMs: 1000 });
    // Every write since the plan, over the time since the plan: the first window's write comes at its end.
    const minutes = (Date.now() - planAt) / 60_000;

    const windows = [...seen.values()].flatMap((n) => n.full.slice(0, WINDOWS));
    const probesPerS = windows.map((w) => w.targets.reduce((sum, t) => sum + t.probes, 0) / w.window.seconds);
    const minPerTarget = Math.min(...windows.flatMap((w) => w.targets.map((t) => t.probes)));
    const writes = [...seen.values()].reduce((sum, n) => sum + n.versions.size, 0);
    const writesPerMin = writes / minutes;
    const bound = (NODES * 60) / WINDOW_S;
    const peak = Math.max(...agents.map((a) => (a.pid !== undefined ? (procStatus(a.pid)?.hwm ?? 0) : 0)));
    const settled = rss.map((xs) => xs.slice(-Math.max(1, Math.floor(xs.length / 4)))).flat();
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const f = (n: number, d = 2) => n.toFixed(d);
    const perNode = mean(probesPerS);
    console.log(`per node, probes/s over each full window: ${probesPerS.map((x) => f(x)).join(' ')}`);
    console.log(
      `probe: nodes=${NODES} targets=${TARGETS} window=${WINDOW_S}s rate=${RATE} probes/s/node=${f(perNode)} (${f(perNode / RATE)} of the rate) min_probes_per_target=${minPerTarget} ` +
        `writes/min=${f(writesPerMin)} (bound ${NODES}×60/${WINDOW_S}=${f(bound)}, ${f(writesPerMin / bound)}) agent_rss_peak=${f(peak / MiB, 1)} MiB agent_rss_settled=${f(mean(settled) / MiB, 1)} MiB`,
    );
  } finally {
    for (const a of agents) a.kill('SIGTERM');
    await Promise.all(agents.map((a) => (a.exitCode !== null ? undefined : new Promise((r) => a.once('exit', r)))));
    for (const s of servers) s.close();
    await cluster.stop();
  }
}

runBench(main);
