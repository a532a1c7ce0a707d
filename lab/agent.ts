// The lab's agent: runs inside one network namespace (`ip netns exec NS node <bundle>`, lab/agent-bundle.ts) and
// does what needs a socket there: a node's NodePort backends, the client's connections and requests, the health
// checker's probes, the L7 CLB's proxy, and windows of loopguard's own probe agent (src/probe, not a copy). Requests arrive as JSON lines on stdin; it exits when stdin closes,
// so it never outlives the lab that started it.
import http from 'node:http';
import net from 'node:net';
import { createInterface } from 'node:readline';
import type { ProbeReport } from '../src/api/probe.js';
import { ProbeAgent } from '../src/probe/agent.js';
import { allowedRanges, parsePlan } from '../src/probe/plan.js';
import { createLogger } from '../src/runtime/logger.js';
import type { AgentRequest, AgentResponse, Outcome, ProbeWindowRequest, ProxyConfig } from './agent-protocol.js';

const servers: net.Server[] = [];
let proxy: { server: http.Server; config: ProxyConfig; agent: http.Agent } | undefined;

async function handle(req: AgentRequest): Promise<unknown> {
  switch (req.op) {
    case 'ping':
      return 'pong';
    case 'serve':
      return serve(req.name, req.tcpPort, req.httpPort);
    case 'connect':
      return pool(req.count, req.concurrency, () => connectOnce(req.host, req.port, req.timeoutMs, req.localAddress, req.read));
    case 'http':
      return pool(req.count, req.concurrency, () => httpOnce(req.host, req.port, req.timeoutMs));
    case 'proxy':
      return configureProxy(req.config);
    case 'probe':
      return probeWindow(req.window);
  }
}

/** A node's backends: TCP writes the node's name and closes; HTTP answers it as the body. */
async function serve(name: string, tcpPort: number, httpPort: number): Promise<string> {
  const tcp = net.createServer((s) => {
    s.on('error', () => undefined); // a health check resets the connection once it is up: that is its success
    s.end(`${name}\n`);
  });
  const web = http.createServer((_req, res) => {
    res.setHeader('connection', 'close');
    res.end(name);
  });
  await Promise.all([listen(tcp, '0.0.0.0', tcpPort), listen(web, '0.0.0.0', httpPort)]);
  servers.push(tcp, web);
  return 'listening';
}

function listen(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, backlog: 1024 }, () => resolve());
  });
}

async function pool(count: number, concurrency: number, task: () => Promise<Outcome>): Promise<Outcome[]> {
  const out: Outcome[] = new Array<Outcome>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await task();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  return out;
}

/** A TCP connect (a CLB TCP health check, or an L4 client connection that reads the node's name). */
function connectOnce(host: string, port: number, timeoutMs: number, localAddress: string | undefined, read: boolean): Promise<Outcome> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let data = '';
    let settled = false;
    const done = (o: Omit<Outcome, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...o, ms: performance.now() - t0 });
    };
    const socket = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
    const timer = setTimeout(() => done({ ok: false, error: 'timeout' }), timeoutMs);
    socket.on('connect', () => {
      if (!read) done({ ok: true });
    });
    socket.on('data', (d) => (data += d.toString()));
    socket.on('end', () => done(data ? { ok: true, answer: data.trim() } : { ok: false, error: 'closed without an answer' }));
    socket.on('error', (err) => done({ ok: false, error: (err as NodeJS.ErrnoException).code ?? err.message }));
  });
}

function httpOnce(host: string, port: number, timeoutMs: number): Promise<Outcome> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: '/', agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d.toString()));
      res.on('end', () =>
        resolve({
          ok: res.statusCode === 200,
          ms: performance.now() - t0,
          answer: body,
          attempts: Number(res.headers['x-lab-attempts'] ?? 0),
          ...(res.statusCode === 200 ? {} : { error: `HTTP ${res.statusCode}` }),
        }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ ok: false, ms: performance.now() - t0, error: err.message }));
  });
}

/** (Re)starts the L7 CLB: an HTTP listener on the VIP that forwards to real servers, retrying on timeout. */
async function configureProxy(config: ProxyConfig): Promise<string> {
  if (proxy) {
    proxy.agent.destroy();
    await new Promise<void>((resolve) => proxy?.server.close(() => resolve()));
    proxy.server.closeAllConnections();
  }
  // snat mode keeps connections to real servers open (keepalive, TKE-LOOPBACK in tencent-cloud.md §7); pass-through opens one per request.
  const agent = new http.Agent({ keepAlive: config.mode === 'snat' });
  const server = http.createServer((req, res) => void forward(config, agent, req, res));
  await listen(server, config.listenHost, config.listenPort);
  proxy = { server, config, agent };
  return 'listening';
}

async function forward(config: ProxyConfig, agent: http.Agent, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const client = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  const localAddress = config.mode === 'snat' ? config.snatSource : config.shadows[client];
  res.setHeader('connection', 'close');
  if (!localAddress) {
    res.writeHead(502).end(`no source for client ${client}`);
    return;
  }
  const n = config.nodes.length;
  const first = Math.floor(Math.random() * n);
  for (let k = 0; k < n; k++) {
    const node = config.nodes[(first + k) % n] ?? '';
    try {
      const upstream = await attempt(node, config, agent, localAddress, client);
      res.writeHead(upstream.statusCode ?? 502, { 'x-lab-attempts': String(k + 1), connection: 'close' });
      upstream.pipe(res);
      return;
    } catch {
      // this real server did not answer in time: the next one (a CLB retries only when the RS timed out)
    }
  }
  res.writeHead(504, { 'x-lab-attempts': String(n) }).end('every real server timed out');
}

function attempt(node: string, config: ProxyConfig, agent: http.Agent, localAddress: string, client: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: node, port: config.nodePort, path: '/', agent, localAddress, headers: { 'x-forwarded-for': client } });
    const timer = setTimeout(() => r.destroy(new Error('real server timeout')), config.attemptTimeoutMs);
    r.on('response', (resp) => {
      clearTimeout(timer);
      resolve(resp);
    });
    r.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    r.end();
  });
}

/**
 * One window of the product's probe agent from this namespace: its plan parsing (with the agent's default ranges:
 * RFC 1918 only), schedule, wire (measure.ts) and report, exactly as `loopguard probe` runs them; only the plan
 * arrives here instead of from a watch, and the report comes back here instead of going to the apiserver (the lab's
 * namespaces have no route to one).
 */
async function probeWindow(w: ProbeWindowRequest): Promise<ProbeReport> {
  const ranges = allowedRanges([]);
  if ('error' in ranges) throw new Error(ranges.error);
  const rules = { ranges: ranges.ranges, minWindowSeconds: w.minWindowSeconds };
  // The agent logs a refused plan or target and carries on; the lab stops instead, naming why.
  const parsed = parsePlan(w.planText, rules);
  if (!parsed.ok) throw new Error(`the probe agent refuses the lab's plan: ${parsed.error}`);
  if (parsed.refused.length > 0) throw new Error(`the probe agent refuses the lab's targets: ${parsed.refused.map((r) => `${r.id}: ${r.reason}`).join('; ')}`);
  let report: ProbeReport | undefined;
  const agent: ProbeAgent = new ProbeAgent({
    node: w.node,
    pod: { name: w.pod, uid: '' },
    namespace: w.namespace,
    rules,
    ratePerSecond: w.ratePerSecond,
    minIntervalSeconds: w.minIntervalSeconds,
    // stdout is this agent's protocol: the probe agent's own log lines go to stderr (shown if the agent dies).
    logger: createLogger({ level: 'warn', stream: process.stderr }),
    write: (r) => {
      report = r;
      agent.stop(); // one window: the loop ends after this write
      return Promise.resolve();
    },
  });
  agent.onPlan({ text: w.planText, version: w.planVersion });
  await agent.run();
  if (!report) throw new Error('the probe agent stopped without a report');
  return report;
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let id = -1;
  void (async () => {
    let answer: AgentResponse;
    try {
      const msg = JSON.parse(line) as { id: number; req: AgentRequest };
      id = msg.id;
      answer = { id, ok: true, result: await handle(msg.req) };
    } catch (err) {
      answer = { id, ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  })();
});
rl.on('close', () => process.exit(0));
