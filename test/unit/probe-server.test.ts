import { afterEach, describe, expect, it } from '@jest/globals';
import { Metrics } from '../../src/runtime/metrics.js';
import { ProbeServer } from '../../src/runtime/server.js';

describe('probe server', () => {
  let server: ProbeServer | undefined;
  afterEach(async () => server?.stop());

  it('serves liveness, readiness (503 until synced) and Prometheus metrics on 127.0.0.1', async () => {
    const metrics = new Metrics({ processMetrics: false });
    let synced = false;
    server = new ProbeServer({
      host: '127.0.0.1',
      port: 0,
      metrics,
      liveness: [{ name: 'ping', check: () => true }],
      readiness: [{ name: 'informers-synced', check: () => synced }],
    });
    const { address, port } = await server.start();
    expect(address).toBe('127.0.0.1');
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain('[-]informers-synced failed');
    synced = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    metrics.recordCloudCall('ModifyListener', 'throttled', 'RequestLimitExceeded');
    const observer = metrics.workQueueObserver();
    observer.processed?.('service', 0.02, 'success');
    observer.processed?.('service', 0.5, 'error');
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('loopguard_cloud_throttled_total{action="ModifyListener"} 1');
    expect(text).toContain('loopguard_cloud_errors_total{action="ModifyListener",code="RequestLimitExceeded"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="service",result="success"} 1');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="service"} 1');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('with secured metrics, serves no /metrics and says where they are', async () => {
    server = new ProbeServer({ host: '127.0.0.1', port: 0, liveness: [{ name: 'ping', check: () => true }], readiness: [] });
    const { port } = await server.start();
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('/metrics is served over HTTPS on --metrics-port, to ServiceAccounts allowed to get it (--metrics-secure)\n');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  });

  it('counts a check that throws as failed, and a reason that throws as none', async () => {
    const boom = (): never => {
      throw new Error('boom');
    };
    server = new ProbeServer({ host: '127.0.0.1', port: 0, liveness: [], readiness: [{ name: 'throws', check: boom }, { name: 'reason-throws', check: () => false, reason: boom }] });
    const { port } = await server.start();
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('[-]throws failed\n[-]reason-throws failed\nfailed\n');
  });

  it('says why a failing readiness check fails, on one line', async () => {
    let problem: string | undefined = 'Cannot create Lease default/x: namespace "default" does not exist.\nFix: create it.';
    server = new ProbeServer({
      host: '127.0.0.1',
      port: 0,
      metrics: new Metrics({ processMetrics: false }),
      liveness: [{ name: 'ping', check: () => true }],
      readiness: [
        { name: 'informers-synced', check: () => true },
        { name: 'leader-election', check: () => problem === undefined, reason: () => problem },
      ],
    });
    const { port } = await server.start();
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe(
      '[+]informers-synced ok\n[-]leader-election failed: Cannot create Lease default/x: namespace "default" does not exist. Fix: create it.\nfailed\n',
    );
    problem = undefined;
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    // Liveness is not affected by readiness problems.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('a port in use is one line naming the flag to change', async () => {
    const metrics = new Metrics({ processMetrics: false });
    server = new ProbeServer({ host: '127.0.0.1', port: 0, metrics, liveness: [], readiness: [] });
    const { port } = await server.start();
    const second = new ProbeServer({ host: '127.0.0.1', port, metrics, liveness: [], readiness: [] });
    await expect(second.start()).rejects.toThrow(
      `The probe port 127.0.0.1:${port} is in use (EADDRINUSE). Fix: stop what listens there (another loopguard?) or set --probe-port (LOOPGUARD_PROBE_PORT; 0 = any free port).`,
    );
  });
});
