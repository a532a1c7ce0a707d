// /metrics over HTTPS for authenticated and authorized scrapers only (--metrics-secure, the default in a pod):
// the pattern of controller-runtime's secure metrics server (kubebuilder ≥ 4.1): its own port, TLS with a
// certificate from --metrics-cert-dir (tls.crt, tls.key: a cert-manager Secret) or a self-signed one made at start,
// and every request through MetricsAuthorizer. The probes stay on their plain-HTTP port for the kubelet.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { MetricsAuthorizer } from './metrics-auth.js';
import type { MetricsSource } from './metrics.js';
import { selfSignedCert, type ServingCert } from './self-signed-cert.js';
import { close, listen, sendMetrics } from './server.js';

export interface MetricsServerOptions {
  host: string;
  port: number;
  metrics: MetricsSource;
  authorizer: MetricsAuthorizer;
  /** Directory holding tls.crt and tls.key; empty: a self-signed certificate. */
  certDir: string;
  /** A denied or failed request (never the token). */
  onDenied?: (status: number, message: string) => void;
  /** How often a certificate from certDir is read again; default CERT_RELOAD_MS. */
  certReloadMs?: number;
}

/** How often a certificate from --metrics-cert-dir is read again (cert-manager renews it in place). */
const CERT_RELOAD_MS = 60_000;

function readCert(dir: string): ServingCert {
  try {
    return { cert: readFileSync(join(dir, 'tls.crt'), 'utf8'), key: readFileSync(join(dir, 'tls.key'), 'utf8') };
  } catch (err) {
    throw new Error(
      `Cannot read the metrics certificate in ${dir} (${(err as NodeJS.ErrnoException).code ?? String(err)}). Fix: mount a Secret with tls.crt and tls.key there, or leave --metrics-cert-dir (LOOPGUARD_METRICS_CERT_DIR) empty for a self-signed certificate.`,
      { cause: err },
    );
  }
}

export class MetricsServer {
  private server: Server | undefined;
  private reload: NodeJS.Timeout | undefined;

  constructor(private readonly options: MetricsServerOptions) {}

  async start(): Promise<AddressInfo> {
    const { certDir, host, port } = this.options;
    let current = certDir ? readCert(certDir) : selfSignedCert(['localhost', hostname(), '127.0.0.1', '::1']);
    const text = { 'content-type': 'text/plain' };
    const server = createServer({ ...current, minVersion: 'TLSv1.2' }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://localhost').pathname;
      const method = req.method ?? '';
      if (path !== '/metrics') return void res.writeHead(404, text).end('not found\n');
      if (method !== 'GET' && method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD', ...text }).end('method not allowed\n');
      this.options.authorizer
        .check(req.headers.authorization, method, path)
        .then((decision) => {
          if (decision.status === 200) return sendMetrics(this.options.metrics, res, method === 'HEAD');
          this.options.onDenied?.(decision.status, decision.message);
          res.writeHead(decision.status, decision.status === 401 ? { ...text, 'www-authenticate': 'Bearer' } : text).end(`${decision.message}\n`);
        })
        // A failed review, or a throw while answering (onDenied): the request still gets an answer.
        .catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(500, text);
          res.end(`${String(err)}\n`);
        });
    });
    this.server = server;
    const address = await listen(server, host, port, 'metrics');
    if (certDir) {
      this.reload = setInterval(() => {
        try {
          const next = readCert(certDir);
          if (next.cert === current.cert && next.key === current.key) return;
          server.setSecureContext({ ...next, minVersion: 'TLSv1.2' });
          current = next;
        } catch {
          // Keep serving the certificate already loaded; a half-written Secret is read again next time.
        }
      }, this.options.certReloadMs ?? CERT_RELOAD_MS).unref();
    }
    return address;
  }

  async stop(): Promise<void> {
    if (this.reload) clearInterval(this.reload);
    if (this.server) await close(this.server);
  }
}
