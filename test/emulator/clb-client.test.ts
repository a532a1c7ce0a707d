/**
 * src/cloud's ClbClient against the CLB emulator through the real, unmodified SDK: batching and
 * pagination, task waiting, per-CLB write serialization, budgets vs the emulator's quota, retries of
 * injected faults, permanent errors surfacing typed and unretried, and no credentials in logs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import { caught, listenerId } from './clb-client-support.js';
import type { TencentClbClientOptions } from '../../src/cloud/index.js';
import { TencentClbClient, withSourceIpType } from '../../src/cloud/index.js';
import type { CloudCallEvent, CloudLogger } from '../../src/cloud/index.js';

let emu: ClbEmulator;
const clients: TencentClbClient[] = [];
/** Everything every client in this file logged, at every level, for the credentials check at the end. */
const logLines: string[] = [];
const logger: CloudLogger = {
  debug: (m, meta) => logLines.push(`debug ${m} ${JSON.stringify(meta)}`),
  info: (m, meta) => logLines.push(`info ${m} ${JSON.stringify(meta)}`),
  warn: (m, meta) => logLines.push(`warn ${m} ${JSON.stringify(meta)}`),
  error: (m, meta) => logLines.push(`error ${m} ${JSON.stringify(meta)}`),
};

/** Fast retries and polls for tests; RequestLimitExceeded still waits the real ≥ 1 s. */
function makeClient(overrides: Partial<TencentClbClientOptions> = {}, events: CloudCallEvent[] = []): TencentClbClient {
  const client = new TencentClbClient({
    region: emu.region,
    credentials: emu.credentials,
    endpoint: emu.url,
    requestTimeoutMs: 5_000,
    throttle: { defaultBudget: { rps: 500, concurrency: 32 } },
    retry: { baseDelayMs: 10, maxDelayMs: 100, minDelayMs: 5, maxAttempts: 10 },
    taskPoll: { initialDelayMs: 10, factor: 1.5, maxDelayMs: 50, timeoutMs: 10_000 },
    logger,
    onCall: (e) => events.push(e),
    ...overrides,
  });
  clients.push(client);
  return client;
}

async function seedMany(n: number): Promise<AdminLoadBalancer[]> {
  const out: AdminLoadBalancer[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await emu.admin.seedLoadBalancer({ LoadBalancerName: `svc-${i}`, Listeners: [{ Protocol: 'TCP', Port: 80 }] }));
  }
  return out;
}


beforeAll(async () => {
  // Quota off by default (tests that need it set it); short tasks keep the suite fast.
  emu = await startClbEmulator({ taskDurationMs: 40, rps: 0 });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await emu.close();
});
beforeEach(async () => {
  await emu.admin.reset();
});

describe('reads', () => {
  it('describes 45 CLBs in batches of 20, in the order asked, skipping unknown ids', async () => {
    const lbs = await seedMany(45);
    const ids = lbs.map((lb) => lb.LoadBalancerId).reverse();
    const client = makeClient();
    const got = await client.describeLoadBalancers([...ids.slice(0, 10), 'lb-doesnotexist', ...ids.slice(10)]);
    expect(got.map((lb) => lb.loadBalancerId)).toEqual(ids);
    expect(got[0]).toMatchObject({ type: 'INTERNAL', ipVersion: 'IPv4', status: 1, forward: 1 });
    expect(got[0]?.vips).toHaveLength(1);
    expect((await emu.admin.stats()).calls['DescribeLoadBalancers']).toBe(3);
  });

  it('finds CLBs by VIP', async () => {
    const [a, , c] = await seedMany(3);
    const client = makeClient();
    const got = await client.describeLoadBalancersByVip([a?.LoadBalancerVips[0] ?? '', c?.LoadBalancerVips[0] ?? '', '10.255.255.254']);
    expect(got.map((lb) => lb.loadBalancerId).sort()).toEqual([a?.LoadBalancerId, c?.LoadBalancerId].sort());
  });

  it('describes L4 and L7 listeners with full health checks and rules', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [
        { Protocol: 'TCP', Port: 80, HealthCheck: { IntervalTime: 7, TimeOut: 3, HealthNum: 4 } },
        { Protocol: 'UDP', Port: 53 },
        { Protocol: 'HTTP', Port: 8080, Rules: [{ Url: '/', Domain: 'a.example' }, { Url: '/api', Domain: 'a.example' }] },
      ],
    });
    const client = makeClient();
    const listeners = await client.describeListeners(lb.LoadBalancerId);
    expect(listeners.map((l) => `${l.protocol}:${l.port}`)).toEqual(['TCP:80', 'UDP:53', 'HTTP:8080']);
    expect(listeners[0]?.healthCheck).toMatchObject({ IntervalTime: 7, TimeOut: 3, HealthNum: 4, SourceIpType: 0, CheckType: 'TCP' });
    expect(Object.values(listeners[0]?.healthCheck ?? {})).not.toContain(null);
    expect(listeners[2]?.healthCheck).toBeUndefined();
    expect(listeners[2]?.keepaliveEnable).toBe(0);
    expect(listeners[2]?.rules.map((r) => r.url)).toEqual(['/', '/api']);
    expect(listeners[2]?.rules[0]?.healthCheck).toMatchObject({ CheckType: 'HTTP', SourceIpType: 0 });

    const only = await client.describeListeners(lb.LoadBalancerId, { listenerIds: [listenerId(lb, 1)] });
    expect(only.map((l) => l.listenerId)).toEqual([listenerId(lb, 1)]);
  });

  it('describes target health of 61 CLBs in batches of 30, skipping a deleted CLB', async () => {
    const lbs = await seedMany(61);
    const ids = lbs.map((lb) => lb.LoadBalancerId);
    await emu.admin.setVipBound(ids[0] ?? '', true);
    await emu.admin.deleteLoadBalancer(ids[40] ?? '');
    const client = makeClient();
    const health = await client.describeTargetHealth(ids);
    expect(health).toHaveLength(60);
    expect(health.map((h) => h.loadBalancerId)).not.toContain(ids[40]);
    const first = health.find((h) => h.loadBalancerId === ids[0]);
    expect(first?.listeners[0]?.rules[0]?.targets.map((t) => t.status)).toEqual(['Dead', 'Dead', 'Dead']);
    const second = health.find((h) => h.loadBalancerId === ids[1]);
    expect(second?.listeners[0]?.rules[0]?.targets.every((t) => t.healthy && t.status === 'Alive')).toBe(true);
    // 3 batches; the one with the deleted CLB costs one more call (its id is named in the error).
    expect((await emu.admin.stats()).calls['DescribeTargetHealth']).toBe(4);
  });

  it('ignores a stray http_proxy (the SDK would route through it without its own agent)', async () => {
    const [lb] = await seedMany(1);
    const saved = process.env['http_proxy'];
    process.env['http_proxy'] = 'http://127.0.0.1:9'; // discard port: nothing listens
    try {
      const client = makeClient({ retry: { maxAttempts: 1 } });
      expect(await client.describeLoadBalancers([lb?.LoadBalancerId ?? ''])).toHaveLength(1);
    } finally {
      if (saved === undefined) delete process.env['http_proxy'];
      else process.env['http_proxy'] = saved;
    }
  });

  it('reports an unknown CLB in describeListeners as ClbNotFound, without retrying', async () => {
    const client = makeClient();
    const err = await caught(client.describeListeners('lb-nope'));
    expect(err).toMatchObject({ reason: 'ClbNotFound', retryable: false, code: 'InvalidParameter.LBIdNotFound', attempts: 1 });
    expect((await emu.admin.stats()).calls['DescribeListeners']).toBe(1);
  });
});

describe('writes', () => {
  it('waits for the task, so a read right after sees the change, with every other health-check field intact', async () => {
    await emu.admin.setConfig({ taskDurationMs: 150 });
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [{ Protocol: 'TCP', Port: 80, HealthCheck: { IntervalTime: 9, TimeOut: 4, HealthNum: 5, UnHealthNum: 6 } }],
    });
    const client = makeClient();
    const [before] = await client.describeListeners(lb.LoadBalancerId);
    const started = Date.now();
    const result = await client.modifyListenerHealthCheck(lb.LoadBalancerId, listenerId(lb), withSourceIpType(before?.healthCheck ?? {}, 1));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(result.attempts).toBe(1);
    expect(result.taskId).toMatch(/[0-9a-f-]{36}/);
    const [after] = await client.describeListeners(lb.LoadBalancerId);
    expect(after?.healthCheck).toEqual({ ...before?.healthCheck, SourceIpType: 1 });
    const stats = await emu.admin.stats();
    expect(stats.tasks).toMatchObject({ started: 1, succeeded: 1, failed: 0 });
    expect(stats.calls['DescribeTaskStatus']).toBeGreaterThanOrEqual(1);
  });

  it('writes a rule health check, keepalive and PassToTarget', async () => {
    await emu.admin.setCapabilities({ l7KeepaliveSnat: true });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTP', Port: 80, Rules: [{ Url: '/' }] }] });
    const client = makeClient();
    const [http] = await client.describeListeners(lb.LoadBalancerId);
    const rule = http?.rules[0];
    await client.modifyRuleHealthCheck(lb.LoadBalancerId, listenerId(lb), rule?.locationId ?? '', withSourceIpType(rule?.healthCheck ?? {}, 1));
    await client.modifyListenerKeepalive(lb.LoadBalancerId, listenerId(lb), true);
    await client.modifyLoadBalancerPassToTarget(lb.LoadBalancerId, true);
    const [after] = await client.describeListeners(lb.LoadBalancerId);
    expect(after?.keepaliveEnable).toBe(1);
    expect(after?.rules[0]?.healthCheck).toEqual({ ...rule?.healthCheck, SourceIpType: 1 });
    const [info] = await client.describeLoadBalancers([lb.LoadBalancerId]);
    expect(info?.passToTarget).toBe(true);
  });

  it('serializes concurrent writes per CLB (no ResourceInOperating) and runs different CLBs in parallel', async () => {
    await emu.admin.setConfig({ taskDurationMs: 80 });
    const lbs = [];
    for (let i = 0; i < 3; i++) {
      lbs.push(
        await emu.admin.seedLoadBalancer({ Listeners: [80, 81, 82].map((Port) => ({ Protocol: 'TCP' as const, Port })) }),
      );
    }
    const client = makeClient();
    const writes = lbs.flatMap((lb) =>
      lb.Listeners.map((l) => client.modifyListenerHealthCheck(lb.LoadBalancerId, l.ListenerId, { ...l.HealthCheck, SourceIpType: 1 } as never)),
    );
    const results = await Promise.all(writes);
    expect(results.every((r) => r.attempts === 1)).toBe(true);

    const stats = await emu.admin.stats();
    expect(stats.errors['ModifyListener']?.['FailedOperation.ResourceInOperating']).toBeUndefined();
    expect(Object.values(stats.listenerWrites)).toEqual(Array(9).fill(1));
    const tasks = await emu.admin.tasks();
    for (const lb of lbs) {
      const mine = tasks.filter((t) => t.loadBalancerIds.includes(lb.LoadBalancerId)).sort((a, b) => a.startedAtMs - b.startedAtMs);
      expect(mine).toHaveLength(3);
      for (let i = 1; i < mine.length; i++) expect(mine[i]?.startedAtMs).toBeGreaterThanOrEqual(mine[i - 1]?.dueAtMs ?? Infinity);
    }
    const firsts = lbs.map((lb) => tasks.find((t) => t.loadBalancerIds.includes(lb.LoadBalancerId)));
    const overlapping = firsts.filter((t) => t && t.startedAtMs < (firsts[0]?.dueAtMs ?? 0));
    expect(overlapping.length).toBeGreaterThan(1);
    const state = await emu.admin.state();
    expect(state.loadBalancers.flatMap((lb) => lb.Listeners.map((l) => l.HealthCheck?.SourceIpType))).toEqual(Array(9).fill(1));
  });
});

describe('budgets against the quota', () => {
  it('stays under the emulator quota: no RequestLimitExceeded in normal operation', async () => {
    await emu.admin.setConfig({ rpsPerAction: { DescribeListeners: 10 } });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const events: CloudCallEvent[] = [];
    const client = makeClient({ throttle: { defaultBudget: { rps: 500 }, budgets: { DescribeListeners: { rps: 8 } } } }, events);
    await Promise.all(Array.from({ length: 16 }, () => client.describeListeners(lb.LoadBalancerId)));
    const stats = await emu.admin.stats();
    expect(stats.calls['DescribeListeners']).toBe(16);
    expect(stats.throttled['DescribeListeners']).toBeUndefined();
    expect(events.filter((e) => e.outcome !== 'ok')).toEqual([]);
  });

  it('reserve spends the budget of the action without calling the CLB: reads queued behind reservations wait their turn', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    // Congested (reserve spends only then): after two RequestLimitExceeded answers on another action (a refusal that
    // recurs is evidence of contention), DescribeListeners starts at the rate the account sustains (that action's cut
    // rate, here the floor of 4/s), below its budget of 5/s.
    await emu.admin.setFaults({ rules: [{ action: 'DescribeLoadBalancers', rate: 1, kind: 'error', code: 'RequestLimitExceeded' }] });
    let cleared: Promise<void> | undefined;
    let refused = 0;
    const client = makeClient({
      throttle: { defaultBudget: { rps: 500 }, budgets: { DescribeListeners: { rps: 5, burst: 1 } }, adaptive: { floor: 4 } },
      // The retry waits ≥ 1 s after a refusal: after the second, the fault is gone by then.
      onCall: (e) => void (e.outcome === 'throttled' && ++refused === 2 && (cleared ??= emu.admin.clearFaults())),
    });
    await client.describeLoadBalancers([lb.LoadBalancerId]);
    await cleared;
    expect(refused).toBe(2);
    expect(client.rateLimits()['DescribeLoadBalancers']).toBeLessThan(5);
    const before = (await emu.admin.stats()).calls['DescribeListeners'] ?? 0;
    const t0 = performance.now();
    await Promise.all([...Array.from({ length: 5 }, () => client.reserve('DescribeListeners')), client.describeListeners(lb.LoadBalancerId)]);
    // Six starts at 5/s at most, one at a time: the read is the sixth, a second or more after the first.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(((await emu.admin.stats()).calls['DescribeListeners'] ?? 0) - before).toBe(1);
    await client.close();
  });

  it('with a budget above the quota, throttled calls slow down and are retried to success', async () => {
    await emu.admin.setConfig({ rpsPerAction: { DescribeListeners: 4 } });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const events: CloudCallEvent[] = [];
    const client = makeClient({ throttle: { defaultBudget: { rps: 500 }, budgets: { DescribeListeners: { rps: 50 } } } }, events);
    const results = await Promise.all(Array.from({ length: 10 }, () => client.describeListeners(lb.LoadBalancerId)));
    expect(results.every((r) => r.length === 1)).toBe(true);
    const throttled = events.filter((e) => e.outcome === 'throttled');
    expect(throttled.length).toBeGreaterThan(0);
    expect(throttled.every((e) => e.action === 'DescribeListeners' && e.code === 'RequestLimitExceeded')).toBe(true);
    expect((await emu.admin.stats()).throttled['DescribeListeners']).toBe(throttled.length);
  });
});

describe('faults', () => {
  it('retries injected errors, 5xx, resets and busy CLBs (with failed tasks mixed in) to success', async () => {
    await emu.admin.setFaults({
      seed: 42,
      rules: [
        { action: '*', rate: 0.1, kind: 'error', code: 'InternalError' },
        { action: '*', rate: 0.05, kind: 'error', code: 'FailedOperation.ResourceInOperating' },
        { action: '*', rate: 0.05, kind: 'http5xx', status: 503 },
        { action: '*', rate: 0.05, kind: 'reset' },
        { action: 'ModifyListener', rate: 0.15, kind: 'taskFailure', message: 'InternalError: task failed (injected)' },
      ],
    });
    const lbs = await seedMany(25);
    const ids = lbs.map((lb) => lb.LoadBalancerId);
    const client = makeClient();
    expect(await client.describeLoadBalancers(ids)).toHaveLength(25);
    expect(await client.describeTargetHealth(ids)).toHaveLength(25);
    for (const lb of lbs.slice(0, 12)) {
      const [l] = await client.describeListeners(lb.LoadBalancerId);
      await client.modifyListenerHealthCheck(lb.LoadBalancerId, l?.listenerId ?? '', withSourceIpType(l?.healthCheck ?? {}, 1));
    }
    const stats = await emu.admin.stats();
    const codes = new Set(Object.values(stats.errors).flatMap((byCode) => Object.keys(byCode)));
    for (const code of ['InternalError', 'HTTP503', 'ConnectionReset']) expect(codes).toContain(code);
    await emu.admin.clearFaults();
    const state = await emu.admin.state();
    const switched = state.loadBalancers.filter((lb) => lb.Listeners[0]?.HealthCheck?.SourceIpType === 1).map((lb) => lb.LoadBalancerId);
    expect(switched.sort()).toEqual(ids.slice(0, 12).sort());
  });

  it('re-submits a write whose task failed, until it succeeds', async () => {
    // Only ModifyListener draws from the fault RNG and the writes are sequential: the same seed gives
    // the same failures every run.
    await emu.admin.setFaults({ seed: 7, rules: [{ action: 'ModifyListener', rate: 0.5, kind: 'taskFailure', message: 'InternalError: task failed (injected)' }] });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [80, 81, 82, 83, 84, 85].map((Port) => ({ Protocol: 'TCP' as const, Port })) });
    const client = makeClient();
    const listeners = await client.describeListeners(lb.LoadBalancerId);
    let attempts = 0;
    for (const l of listeners) {
      attempts += (await client.modifyListenerHealthCheck(lb.LoadBalancerId, l.listenerId, withSourceIpType(l.healthCheck ?? {}, 1))).attempts;
    }
    const stats = await emu.admin.stats();
    expect(stats.tasks.failed).toBeGreaterThan(0);
    expect(stats.tasks.succeeded).toBe(6);
    expect(attempts).toBe(stats.tasks.started);
    expect((await client.describeListeners(lb.LoadBalancerId)).map((l) => l.healthCheck?.SourceIpType)).toEqual(Array(6).fill(1));
  });

  it('does not re-submit a write whose task outlived polling: the task may still succeed', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const client = makeClient({ taskPoll: { initialDelayMs: 10, factor: 1.5, maxDelayMs: 50, timeoutMs: 150 } });
    const [l] = await client.describeListeners(lb.LoadBalancerId);
    await emu.admin.setConfig({ taskDurationMs: 1_000 });
    try {
      const err = await caught(client.modifyListenerHealthCheck(lb.LoadBalancerId, l?.listenerId ?? '', withSourceIpType(l?.healthCheck ?? {}, 1)));
      expect(err.info()).toMatchObject({ reason: 'ClbTaskTimeout' });
      expect((await emu.admin.stats()).calls.ModifyListener).toBe(1);
    } finally {
      await emu.admin.setConfig({ taskDurationMs: 40 }); // as beforeAll started it
    }
  });

  it('retries request timeouts', async () => {
    await emu.admin.setFaults({ seed: 3, rules: [{ action: 'DescribeListeners', rate: 0.5, kind: 'latency', latencyMs: 1_000 }] });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const events: CloudCallEvent[] = [];
    const client = makeClient({ requestTimeoutMs: 150 }, events);
    for (let i = 0; i < 4; i++) expect(await client.describeListeners(lb.LoadBalancerId)).toHaveLength(1);
    expect(events.some((e) => e.code === 'NetworkError')).toBe(true);
  });

  it('stops retrying at once when the caller aborts (shutdown)', async () => {
    await emu.admin.setFaults({ rules: [{ action: 'DescribeListeners', rate: 1, kind: 'error', code: 'InternalError' }] });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const events: CloudCallEvent[] = [];
    const client = makeClient({ retry: { baseDelayMs: 30_000, minDelayMs: 30_000, maxDelayMs: 30_000, deadlineMs: 600_000 } }, events);
    const ac = new AbortController();
    const pending = caught(client.describeListeners(lb.LoadBalancerId, { signal: ac.signal }));
    while (events.length === 0) await new Promise((r) => setImmediate(r));
    const t0 = Date.now();
    ac.abort();
    const err = await pending;
    expect(err.reason).toBe('Aborted');
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});

describe('permanent errors surface typed, with cause and fix, and are not retried', () => {
  it('the 100.64 health-check source capability is off', async () => {
    await emu.admin.setCapabilities({ healthCheckSource100_64: false });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const client = makeClient();
    const [l] = await client.describeListeners(lb.LoadBalancerId);
    const err = await caught(client.modifyListenerHealthCheck(lb.LoadBalancerId, listenerId(lb), withSourceIpType(l?.healthCheck ?? {}, 1)));
    expect(err).toMatchObject({ reason: 'HealthCheckSourceCapabilityMissing', retryable: false, attempts: 1, loadBalancerId: lb.LoadBalancerId });
    expect(err.message).toMatch(/100\.64\.0\.0\/10.*ticket/s);
    expect((await emu.admin.stats()).calls['ModifyListener']).toBe(1);
  });

  it('the L7 keepalive/SNAT capability is off', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTPS', Port: 443, Rules: [{ Url: '/' }] }] });
    const client = makeClient();
    const err = await caught(client.modifyListenerKeepalive(lb.LoadBalancerId, listenerId(lb), true));
    expect(err).toMatchObject({ reason: 'KeepaliveCapabilityMissing', retryable: false, attempts: 1 });
    expect(err.message).toContain('ticket');
    expect((await emu.admin.stats()).calls['ModifyListener']).toBe(1);
  });

  it('an invalid request quotes what was sent', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'HTTP', Port: 80, Rules: [{ Url: '/' }] }] });
    const client = makeClient();
    const err = await caught(client.modifyListenerHealthCheck(lb.LoadBalancerId, listenerId(lb), { HealthSwitch: 1, SourceIpType: 1 }));
    expect(err).toMatchObject({ reason: 'InvalidRequest', code: 'InvalidParameter', attempts: 1 });
    expect(err.message).toContain('per rule');
    expect(err.message).toContain('"SourceIpType":1');
  });

  it.each([
    ['a wrong SecretKey', (e: ClbEmulator) => ({ secretId: e.credentials.secretId, secretKey: 'wrong-secret-key-0000001' }), 'AuthFailure.SignatureFailure'],
    ['an unknown SecretId', () => ({ secretId: 'AKIDunknownKey00000000001', secretKey: 'unknown-secret-key-00001' }), 'AuthFailure.SecretIdNotFound'],
  ])('%s', async (_label, credentials, code) => {
    const client = makeClient({ credentials: credentials(emu) });
    const err = await caught(client.describeLoadBalancers(['lb-1']));
    expect(err).toMatchObject({ reason: 'CredentialsRejected', retryable: false, code, attempts: 1 });
    expect(err.message).toMatch(/Secret/);
    expect((await emu.admin.stats()).calls['DescribeLoadBalancers']).toBe(1);
  });
});

describe('logs', () => {
  it('never contain the credentials (after every scenario above, at every level)', async () => {
    // One more noisy scenario at debug level: retries of throttling and faults.
    await emu.admin.setFaults({ seed: 5, rules: [{ action: '*', rate: 0.3, kind: 'error', code: 'InternalError' }] });
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const client = makeClient();
    const [l] = await client.describeListeners(lb.LoadBalancerId);
    await client.modifyListenerHealthCheck(lb.LoadBalancerId, listenerId(lb), withSourceIpType(l?.healthCheck ?? {}, 1));

    expect(logLines.length).toBeGreaterThan(10);
    expect(logLines.some((line) => line.includes('retrying CLB call'))).toBe(true);
    expect(logLines.some((line) => line.includes('CLB write done'))).toBe(true);
    const text = logLines.join('\n');
    for (const secret of [emu.credentials.secretId, emu.credentials.secretKey, 'wrong-secret-key-0000001', 'unknown-secret-key-00001', 'AKIDunknownKey00000000001']) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/TC3-HMAC-SHA256 Credential=/);
  });
});
