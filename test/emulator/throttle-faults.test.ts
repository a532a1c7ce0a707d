/** Per-action rate limits (tencent-cloud.md §3 "Rate limits"), seeded fault injection and the call counters. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator, FaultPlan } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { RateLimitConfig } from '../../sim/clb-emulator/throttle.js';
import { ActionThrottle } from '../../sim/clb-emulator/throttle.js';
import type { ClbClient } from './support.js';
import { clbClient, eventually, expectSdkError, outcome, TencentCloudSDKHttpException, writeAndWait } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 30 });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.admin.reset());

describe('rate limits', () => {
  it('allows 20 rps per action by default and throttles a burst beyond the bucket', async () => {
    expect(await emu.admin.getConfig()).toMatchObject({ rps: 20, rpsPerAction: {} });
    // 60 at once: the burst of 20 passes (plus whatever refills while they are in flight), the rest is throttled.
    const results = await Promise.all(Array.from({ length: 60 }, () => outcome(client.DescribeLoadBalancers({}))));
    const ok = results.filter((r) => r === 'OK').length;
    expect(ok).toBeGreaterThanOrEqual(20);
    expect(ok).toBeLessThan(45);
    expect(results.filter((r) => r !== 'OK').every((r) => r === 'RequestLimitExceeded')).toBe(true);
    expect((await emu.admin.stats()).throttled['DescribeLoadBalancers']).toBe(60 - ok);
  });

  it('honours per-action overrides, keeps buckets per action and refills over time', async () => {
    await emu.admin.setConfig({ rpsPerAction: { DescribeLoadBalancers: 3 } });
    const results = await Promise.all(Array.from({ length: 12 }, () => outcome(client.DescribeLoadBalancers({}))));
    const ok = results.filter((r) => r === 'OK').length;
    expect(ok).toBeGreaterThanOrEqual(3);
    expect(ok).toBeLessThanOrEqual(8);
    expect(results).toContain('RequestLimitExceeded');
    // Another action has its own (default) bucket.
    expect(await outcome(client.DescribeTaskStatus({ TaskId: 'x' }))).toBe('InvalidParameter');
    // Refill: at 3 rps a token is back within ~333 ms.
    await eventually(async () => ((await outcome(client.DescribeLoadBalancers({}))) === 'OK' ? true : undefined), 'bucket refill', 3000, 50);
  });

  it('checks the rate limit after the signature: unauthenticated calls do not use the quota', async () => {
    await emu.admin.setConfig({ rpsPerAction: { DescribeLoadBalancers: 2 } });
    const intruder = clbClient(emu, { secretId: emu.credentials.secretId, secretKey: 'wrong' });
    for (let i = 0; i < 5; i++) await expectSdkError(intruder.DescribeLoadBalancers({}), 'AuthFailure.SignatureFailure');
    expect(await outcome(client.DescribeLoadBalancers({}))).toBe('OK');
    expect(await outcome(client.DescribeLoadBalancers({}))).toBe('OK');
    expect(await outcome(client.DescribeLoadBalancers({}))).toBe('RequestLimitExceeded');
  });

  it('rps 0 disables the limit', async () => {
    await emu.admin.setConfig({ rps: 0 });
    const results = await Promise.all(Array.from({ length: 40 }, () => outcome(client.DescribeLoadBalancers({}))));
    expect(results.every((r) => r === 'OK')).toBe(true);
  });
});

/**
 * The quota as a rate, on the throttle's own clock (`admit(action, now)`): which calls of a schedule pass, in ms.
 * Exact, so the edges are pinned: a refill one millisecond early or late fails.
 */
describe('rate model (the throttle on its own clock)', () => {
  const admitted = (rps: number, schedule: number[], action = 'ModifyListener'): number[] => {
    const config: RateLimitConfig = { rps: 20, rpsPerAction: { [action]: rps } };
    const throttle = new ActionThrottle(() => config);
    const passed: number[] = [];
    for (const now of schedule) {
      try {
        throttle.admit(action, now);
        passed.push(now);
      } catch (err) {
        expect(err).toMatchObject({ code: 'RequestLimitExceeded' });
      }
    }
    return passed;
  };
  const every = (stepMs: number, untilMs: number): number[] => Array.from({ length: Math.floor(untilMs / stepMs) + 1 }, (_, i) => i * stepMs);

  it.each([
    // rps, schedule, admitted
    ['0.2/s: one call, then the next exactly 5 s later', 0.2, [0, 1, 4_999, 5_000, 5_001, 9_999, 10_000], [0, 5_000, 10_000]],
    ['0.5/s: one every 2 s', 0.5, [0, 1_999, 2_000, 3_999, 4_000], [0, 2_000, 4_000]],
    ['0.2/s: a long idle stores one call, not twelve (burst max(1, rps))', 0.2, [0, 60_000, 60_000, 60_000, 64_999, 65_000], [0, 60_000, 65_000]],
    ['1/s: one per second', 1, [0, 0, 999, 1_000, 1_000], [0, 1_000]],
    ['20/s: a burst of 20 at once, then one per 50 ms', 20, [...Array<number>(21).fill(0), 49, 50, 50, 1_050], [...Array<number>(20).fill(0), 50, 1_050]],
  ])('%s', (_what, rps, schedule, expected) => {
    expect(admitted(rps, schedule)).toEqual(expected);
  });

  it('a client calling every 100 ms for a minute gets exactly rps × 60 s calls through (a rate, below 1/s too)', () => {
    const minute = every(100, 59_999);
    expect(admitted(0.2, minute)).toEqual(every(5_000, 59_999)); // 12: at 0, 5 s, …, 55 s
    expect(admitted(0.5, minute)).toHaveLength(30);
    expect(admitted(3, minute)).toHaveLength(3 + Math.floor(59.9 * 3)); // a full bucket of 3, then 3/s until the last call at 59.9 s
  });

  it('names the fractional rate in the refusal', () => {
    const throttle = new ActionThrottle(() => ({ rps: 0.2, rpsPerAction: {} }));
    throttle.admit('DescribeTaskStatus', 0);
    expect(() => throttle.admit('DescribeTaskStatus', 10)).toThrow(/exceeds the frequency limit `0\.2` per second/);
  });
});

describe('fractional rates through the SDK', () => {
  it('serves 0.2 req/s: the first call passes, the next within 5 s is throttled, another action is not', async () => {
    await emu.admin.setConfig({ rpsPerAction: { DescribeLoadBalancers: 0.2 } });
    expect(await emu.admin.getConfig()).toMatchObject({ rpsPerAction: { DescribeLoadBalancers: 0.2 } });
    expect(await outcome(client.DescribeLoadBalancers({}))).toBe('OK');
    expect(await outcome(client.DescribeLoadBalancers({}))).toBe('RequestLimitExceeded');
    expect(await outcome(client.DescribeTaskStatus({ TaskId: 'x' }))).toBe('InvalidParameter');
    expect((await emu.admin.stats()).throttled).toEqual({ DescribeLoadBalancers: 1 });
  });
});

describe('fault injection', () => {
  const sequence = async (plan: FaultPlan): Promise<string[]> => {
    await emu.admin.setFaults(plan);
    const out: string[] = [];
    for (let i = 0; i < 40; i++) out.push(await outcome(client.DescribeListeners({ LoadBalancerId: 'lb-missing0' })));
    return out;
  };
  const plan = (seed: number): FaultPlan => ({
    seed,
    rules: [
      { action: 'DescribeListeners', rate: 0.3, kind: 'error', code: 'InternalError' },
      { action: '*', rate: 0.2, kind: 'error', code: 'ResourceUnavailable' },
    ],
  });

  it('is reproducible: same seed and calls → same error sequence; another seed → another sequence', async () => {
    await emu.admin.setConfig({ rps: 0 });
    const a = await sequence(plan(42));
    const b = await sequence(plan(42));
    const c = await sequence(plan(43));
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    // Unfaulted calls reach the action (unknown CLB); both fault rules fire sometimes.
    expect(a).toContain('InvalidParameter.LBIdNotFound');
    expect(a).toContain('InternalError');
    expect(a).toContain('ResourceUnavailable');
    expect(await emu.admin.getFaults()).toEqual(plan(43));
  });

  it('surfaces an HTTP 5xx fault as an SDK error with httpCode and no code', async () => {
    await emu.admin.setFaults({ rules: [{ action: 'DescribeLoadBalancers', rate: 1, kind: 'http5xx', status: 502 }] });
    const err = await expectSdkError(client.DescribeLoadBalancers({}), undefined);
    expect(err.httpCode).toBe(502);
    expect((await emu.admin.stats()).errors['DescribeLoadBalancers']).toEqual({ HTTP502: 1 });
  });

  it('surfaces a connection reset as an SDK network error', async () => {
    await emu.admin.setFaults({ rules: [{ action: 'DescribeLoadBalancers', rate: 1, kind: 'reset' }] });
    const err = await expectSdkError(client.DescribeLoadBalancers({}), undefined);
    expect(err.httpCode).toBeUndefined();
    expect(err.requestId).toBe('');
    expect(err.message).toMatch(/socket hang up|ECONNRESET/);
    // The server survives and other actions are unaffected.
    expect(await outcome(client.DescribeTaskStatus({ TaskId: 'x' }))).toBe('InvalidParameter');
  });

  it('aims a fault at one CLB: requests naming it (LoadBalancerId or LoadBalancerIds) fail, others do not', async () => {
    await emu.admin.seedLoadBalancer({ LoadBalancerId: 'lb-hit' });
    await emu.admin.seedLoadBalancer({ LoadBalancerId: 'lb-miss' });
    await emu.admin.setFaults({ rules: [{ action: '*', rate: 1, kind: 'error', code: 'UnauthorizedOperation', message: 'denied (injected)', loadBalancerId: 'lb-hit' }] });
    await expectSdkError(client.DescribeListeners({ LoadBalancerId: 'lb-hit' }), 'UnauthorizedOperation');
    await expectSdkError(client.DescribeLoadBalancers({ LoadBalancerIds: ['lb-miss', 'lb-hit'] }), 'UnauthorizedOperation');
    expect(await outcome(client.DescribeListeners({ LoadBalancerId: 'lb-miss' }))).toBe('OK');
    expect(await outcome(client.DescribeLoadBalancers({ LoadBalancerIds: ['lb-miss'] }))).toBe('OK');
    expect(await outcome(client.DescribeLoadBalancers({}))).toBe('OK');
    // A rule naming no CLB id is refused with the field named.
    await expect(emu.admin.setFaults({ rules: [{ action: '*', rate: 1, kind: 'error', loadBalancerId: '' }] })).rejects.toThrow(/loadBalancerId/);
  });

  it('adds latency', async () => {
    await emu.admin.setFaults({ rules: [{ action: 'DescribeLoadBalancers', rate: 1, kind: 'latency', latencyMs: 200 }] });
    const started = Date.now();
    await client.DescribeLoadBalancers({});
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('an error fault on a write changes nothing and starts no task', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    await emu.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'error', code: 'InternalError' }] });
    await expectSdkError(
      client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lb.Listeners[0]?.ListenerId ?? '', ListenerName: 'x' }),
      'InternalError',
    );
    expect((await emu.admin.getLoadBalancer(lb.LoadBalancerId)).lockedByTask).toBeNull();
    await emu.admin.clearFaults();
    expect(await emu.admin.getFaults()).toEqual({ rules: [] });
  });

  it('rejects invalid fault plans', async () => {
    await expect(emu.admin.setFaults({ rules: [{ action: '*', rate: 2, kind: 'error' }] })).rejects.toMatchObject({ status: 400 });
  });
});

describe('stats', () => {
  it('counts calls, throttles, errors and listener/rule writes; resets on demand', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [{ Protocol: 'TCP', Port: 80 }, { Protocol: 'HTTP', Port: 8080, Rules: [{ Url: '/' }] }],
    });
    const [tcp, http] = lb.Listeners;
    const loc = http?.Rules[0]?.LocationId ?? '';
    await emu.admin.setConfig({ rpsPerAction: { DescribeLoadBalancers: 1 } });
    await Promise.all([client.DescribeLoadBalancers({}), outcome(client.DescribeLoadBalancers({}))]);
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: tcp?.ListenerId ?? '', ListenerName: 'a' }));
    await writeAndWait(client, client.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: tcp?.ListenerId ?? '', ListenerName: 'b' }));
    await writeAndWait(client, client.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: http?.ListenerId ?? '', LocationId: loc, Url: '/x' }));
    await expectSdkError(client.DescribeListeners({ LoadBalancerId: 'lb-missing0' }), 'InvalidParameter.LBIdNotFound');

    const stats = await emu.admin.stats();
    expect(stats.calls).toMatchObject({ DescribeLoadBalancers: 2, ModifyListener: 2, ModifyRule: 1, DescribeListeners: 1 });
    expect(stats.calls['DescribeTaskStatus']).toBeGreaterThanOrEqual(3);
    expect(stats.throttled).toEqual({ DescribeLoadBalancers: 1 });
    expect(stats.errors).toEqual({
      DescribeLoadBalancers: { RequestLimitExceeded: 1 },
      DescribeListeners: { 'InvalidParameter.LBIdNotFound': 1 },
    });
    expect(stats.listenerWrites).toEqual({ [`${lb.LoadBalancerId}/${tcp?.ListenerId ?? ''}`]: 2 });
    expect(stats.ruleWrites).toEqual({ [`${lb.LoadBalancerId}/${http?.ListenerId ?? ''}/${loc}`]: 1 });
    expect(stats.tasks).toEqual({ started: 3, succeeded: 3, failed: 0 });

    await emu.admin.resetStats();
    expect(await emu.admin.stats()).toEqual({ calls: {}, byCaller: {}, throttled: {}, errors: {}, listenerWrites: {}, ruleWrites: {}, tasks: { started: 0, succeeded: 0, failed: 0 } });
  });

  it('the SDK exception class is what the client throws', async () => {
    await expect(client.DescribeListeners({ LoadBalancerId: 'lb-missing0' })).rejects.toBeInstanceOf(TencentCloudSDKHttpException);
  });
});
