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
      registry: metrics.registry,
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
});
