// /healthz (liveness), /readyz (informer caches synced) and /metrics on one small HTTP server.
// Readiness is deliberately not tied to leadership: standbys are ready too (controller-conventions.md §1.9).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthCheck {
  name: string;
  check: () => boolean;
}

export interface ProbeServerOptions {
  host: string;
  port: number;
  registry: Registry;
  liveness: HealthCheck[];
  readiness: HealthCheck[];
}

function report(checks: HealthCheck[], verbose: boolean): { ok: boolean; body: string } {
  const results = checks.map((c) => ({ name: c.name, ok: safe(c.check) }));
  const ok = results.every((r) => r.ok);
  const lines = results.map((r) => `[${r.ok ? '+' : '-'}]${r.name} ${r.ok ? 'ok' : 'failed'}`);
  const summary = ok ? 'ok' : 'failed';
  return { ok, body: verbose || !ok ? `${lines.join('\n')}\n${summary}\n` : `${summary}\n` };
}

function safe(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

export class ProbeServer {
  private server: Server | undefined;

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
        this.options.registry
          .metrics()
          .then((text) => res.writeHead(200, { 'content-type': this.options.registry.contentType }).end(text))
          .catch((err: unknown) => res.writeHead(500).end(String(err)));
        return;
      }
      res.writeHead(404).end('not found\n');
    });
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    return server.address() as AddressInfo;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  }
}
