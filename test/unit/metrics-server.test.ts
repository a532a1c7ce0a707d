// The HTTPS metrics server (src/runtime/metrics-server.ts) with loopguard's own Reviewer faked: only /metrics, only
// GET/HEAD, the authorizer's decision as the status, and a certificate from --metrics-cert-dir that is read again
// when it is renewed in place (cert-manager). The apiserver's reviews are the integration suite's (metrics-auth).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MetricsAuthorizer, type Reviewer } from '../../src/runtime/metrics-auth.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { MetricsServer } from '../../src/runtime/metrics-server.js';
import { selfSignedCert } from '../../src/runtime/self-signed-cert.js';

const reviewer: Reviewer = {
  tokenReview: async (token) => (token === 'good' || token === 'other' ? { authenticated: true, user: { username: token } } : { authenticated: false }),
  accessReview: async (user) => ({ allowed: user.username === 'good' }),
};

function call(port: number, options: { method?: string; path?: string; token?: string; ca?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/metrics',
        servername: 'localhost',
        agent: false, // a new TLS handshake each time: a kept-alive connection would show the old certificate
        ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('MetricsServer', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => server?.stop());

  const start = async (certDir = '', certReloadMs?: number) => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.recordCloudCall('ModifyListener', 'ok');
    server = new MetricsServer({ host: '127.0.0.1', port: 0, metrics, authorizer: new MetricsAuthorizer(reviewer), certDir, ...(certReloadMs ? { certReloadMs } : {}) });
    return (await server.start()).port;
  };

  it('answers /metrics by the decision; nothing else', async () => {
    const port = await start();
    expect((await call(port, {})).status).toBe(401);
    expect((await call(port, { token: 'bad' })).status).toBe(401);
    expect((await call(port, { token: 'other' })).status).toBe(403);
    const ok = await call(port, { token: 'good' });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('loopguard_cloud_requests_total{action="ModifyListener",outcome="ok"} 1');
    expect(await call(port, { token: 'good', method: 'HEAD' })).toEqual({ status: 200, body: '' });
    expect((await call(port, { token: 'good', method: 'POST' })).status).toBe(405);
    expect((await call(port, { token: 'good', path: '/healthz' })).status).toBe(404);
  });

  it('serves the certificate of --metrics-cert-dir and picks up a renewed one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopguard-metrics-cert-'));
    const first = selfSignedCert(['localhost']);
    writeFileSync(join(dir, 'tls.crt'), first.cert);
    writeFileSync(join(dir, 'tls.key'), first.key);
    const port = await start(dir, 50);
    expect((await call(port, { token: 'good', ca: first.cert })).status).toBe(200);
    const second = selfSignedCert(['localhost']);
    writeFileSync(join(dir, 'tls.key'), second.key);
    writeFileSync(join(dir, 'tls.crt'), second.cert);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const renewed = await call(port, { token: 'good', ca: second.cert }).then((r) => r.status, () => 0);
      if (renewed === 200) break;
      if (Date.now() > deadline) throw new Error('the renewed certificate was not served within 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    await expect(call(port, { token: 'good', ca: first.cert })).rejects.toThrow();
  });

  it('refuses to start without the certificate it was told to use, saying what to do', async () => {
    await expect(start('/nonexistent/metrics-certs')).rejects.toThrow(/^Cannot read the metrics certificate in \/nonexistent\/metrics-certs \(ENOENT\)\. Fix: mount a Secret with tls\.crt and tls\.key/);
  });
});
