// /healthz (liveness), /readyz (informer caches synced, and nothing known to stop the operator from acting)
// and, unless metrics are secured (--metrics-secure: runtime/metrics-server.ts), /metrics on one small HTTP server.
// Readiness is deliberately not tied to leadership: standbys are ready too (controller-runtime's pkg/healthz). A
// failing check may say why, so `curl /readyz` answers the question a 503 raises.
import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { MetricsSource } from './metrics.js';

export interface HealthCheck {
  name: string;
  check: () => boolean;
  /** Cause and fix, shown after a failing check (one line). */
  reason?: () => string | undefined;
}

export interface ProbeServerOptions {
  host: string;
  port: number;
  /** Served at /metrics, unauthenticated; absent when the metrics server serves them (then /metrics says where). */
  metrics?: MetricsSource;
  liveness: HealthCheck[];
  readiness: HealthCheck[];
}

function report(checks: HealthCheck[], verbose: boolean): { ok: boolean; body: string } {
  const results = checks.map((c) => {
    const ok = safely(c.check, false);
    return { name: c.name, ok, reason: ok ? undefined : safely(() => c.reason?.()?.replace(/\s*\n\s*/g, ' '), undefined) };
  });
  const ok = results.every((r) => r.ok);
  const lines = results.map((r) => `[${r.ok ? '+' : '-'}]${r.name} ${r.ok ? 'ok' : 'failed'}${r.reason ? `: ${r.reason}` : ''}`);
  const summary = ok ? 'ok' : 'failed';
  return { ok, body: verbose || !ok ? `${lines.join('\n')}\n${summary}\n` : `${summary}\n` };
}

/** A check or its reason that throws counts as failed, with no reason. */
function safely<T>(f: () => T, otherwise: T): T {
  try {
    return f();
  } catch {
    return otherwise;
  }
}

export class ProbeServer {
  private server: HttpServer | undefined;

  constructor(private readonly options: ProbeServerOptions) {}

  async start(): Promise<AddressInfo> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const verbose = url.searchParams.has('verbose');
      if (url.pathname === '/healthz' || url.pathname === '/readyz') {
        const checks = url.pathname === '/healthz' ? this.options.liveness : this.options.readiness;
        const { ok, body } = report(checks, verbose);
        res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(body);
        return;
      }
      if (url.pathname === '/metrics') {
        if (this.options.metrics) sendMetrics(this.options.metrics, res, false);
        else res.writeHead(404, { 'content-type': 'text/plain' }).end('/metrics is served over HTTPS on --metrics-port, to ServiceAccounts allowed to get it (--metrics-secure)\n');
        return;
      }
      res.writeHead(404).end('not found\n');
    });
    return listen(this.server, this.options.host, this.options.port, 'probe');
  }

  async stop(): Promise<void> {
    if (this.server) await close(this.server);
  }
}

/** Writes what /metrics serves (the body left out for a HEAD); a render that fails is a 500 with its error. */
export function sendMetrics(metrics: MetricsSource, res: ServerResponse, head: boolean): void {
  metrics.render().then(
    (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(head ? undefined : text),
    (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
  );
}

/** Listens on host:port; a port in use or an address not ours fails with one line naming the flags (main.ts prints it). */
export async function listen(server: HttpServer | HttpsServer, host: string, port: number, which: 'probe' | 'metrics'): Promise<AddressInfo> {
  const portFlag = `--${which}-port (LOOPGUARD_${which.toUpperCase()}_PORT`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') {
        reject(new Error(`The ${which} port ${where} is in use (EADDRINUSE). Fix: stop what listens there (another loopguard?) or set ${portFlag}; 0 = any free port).`, { cause: err }));
      } else if (err.code === 'EADDRNOTAVAIL' || err.code === 'EACCES') {
        reject(new Error(`Cannot listen on ${where} (${err.code}). Fix: set --probe-host (LOOPGUARD_PROBE_HOST) and ${portFlag}) to an address and port this process may use.`, { cause: err }));
      } else reject(err);
    });
    server.listen(port, host, () => resolve());
  });
  return server.address() as AddressInfo;
}

/** Stops accepting, waits for the listener to close and drops kept-alive connections. */
export async function close(server: HttpServer | HttpsServer): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
}
