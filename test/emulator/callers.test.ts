/**
 * Caller attribution: several named credential pairs on one account, calls counted by (caller, action, outcome),
 * and stats marks for measuring one phase. Everything through the real SDK client.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { callsByCallerAndAction, DEFAULT_TEST_CREDENTIALS, startClbEmulator, UNAUTHENTICATED_CALLER } from '../../sim/clb-emulator/index.js';
import { clbClient, expectSdkError, outcome, rawSignedCall, writeAndWait } from './support.js';

const LOOPGUARD = { caller: 'loopguard', secretId: 'AKIDloopguardCaller01', secretKey: 'loopguard-key-01' };
const TKE = { caller: 'tke', secretId: 'AKIDtkeCaller01', secretKey: 'tke-key-01' };
const TKE_ROTATED = { caller: 'tke', secretId: 'AKIDtkeCaller02', secretKey: 'tke-key-02' };
const PLAIN = { secretId: 'AKIDplainAccount01', secretKey: 'plain-key-01' };

let emu: ClbEmulator;

beforeAll(async () => {
  emu = await startClbEmulator({ callers: [LOOPGUARD, TKE, TKE_ROTATED], accounts: { [PLAIN.secretId]: PLAIN.secretKey }, taskDurationMs: 20 });
});
afterAll(() => emu.close());
beforeEach(() => emu.admin.reset());

describe('caller configuration', () => {
  it('reports the first pair as `credentials`, each caller by name, and lists callers without keys', async () => {
    expect(emu.credentials).toEqual({ secretId: LOOPGUARD.secretId, secretKey: LOOPGUARD.secretKey });
    expect(emu.callers).toEqual({
      loopguard: { secretId: LOOPGUARD.secretId, secretKey: LOOPGUARD.secretKey },
      tke: { secretId: TKE.secretId, secretKey: TKE.secretKey },
      [PLAIN.secretId]: PLAIN,
    });
    const listed = await emu.admin.callers();
    expect(listed).toEqual([
      { caller: 'loopguard', secretId: LOOPGUARD.secretId },
      { caller: 'tke', secretId: TKE.secretId },
      { caller: 'tke', secretId: TKE_ROTATED.secretId },
      { caller: PLAIN.secretId, secretId: PLAIN.secretId },
    ]);
    expect(JSON.stringify(listed)).not.toContain('key-0');
  });

  it('keeps the single-account options: the default test account, counted under its SecretId', async () => {
    const plain = await startClbEmulator();
    try {
      expect(plain.credentials).toEqual(DEFAULT_TEST_CREDENTIALS);
      await clbClient(plain).DescribeLoadBalancers({});
      expect((await plain.admin.stats()).byCaller).toEqual({ [DEFAULT_TEST_CREDENTIALS.secretId]: { DescribeLoadBalancers: { OK: 1 } } });
    } finally {
      await plain.close();
    }
  });

  it('refuses a SecretId configured twice with different keys, and the reserved caller name', async () => {
    await expect(startClbEmulator({ callers: [LOOPGUARD, { ...LOOPGUARD, secretKey: 'other' }] })).rejects.toThrow(/configured twice/);
    await expect(startClbEmulator({ callers: [{ ...TKE, caller: UNAUTHENTICATED_CALLER }] })).rejects.toThrow(/reserved/);
  });
});

describe('counting by caller, action and outcome', () => {
  it('counts two callers apart, through the SDK, and sums to `calls`', async () => {
    const lg = clbClient(emu, emu.callers['loopguard']);
    const tke = clbClient(emu, emu.callers['tke']);
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const listenerId = lb.Listeners[0]?.ListenerId ?? '';

    await tke.DescribeLoadBalancers({});
    await tke.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId });
    await lg.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId });
    await lg.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId });
    const write = await lg.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: listenerId, ListenerName: 'x' });
    await expectSdkError(lg.DescribeListeners({ LoadBalancerId: 'lb-missing0' }), 'InvalidParameter.LBIdNotFound');
    // A second SecretId of the same caller (a rotated key) adds to that caller.
    await clbClient(emu, TKE_ROTATED).DescribeLoadBalancers({});

    const stats = await emu.admin.stats();
    expect(stats.byCaller).toEqual({
      loopguard: {
        DescribeListeners: { OK: 2, 'InvalidParameter.LBIdNotFound': 1 },
        ModifyListener: { OK: 1 },
      },
      tke: { DescribeLoadBalancers: { OK: 2 }, DescribeListeners: { OK: 1 } },
    });
    const total = Object.values(callsByCallerAndAction(stats)).flatMap((a) => Object.values(a)).reduce((x, y) => x + y, 0);
    expect(total).toBe(Object.values(stats.calls).reduce((x, y) => x + y, 0));
    expect(write.RequestId).toBeTruthy();
  });

  it('rejects a wrong key for a known SecretId and counts it as unauthenticated, not as that caller', async () => {
    const forged = clbClient(emu, { secretId: TKE.secretId, secretKey: LOOPGUARD.secretKey });
    await expectSdkError(forged.DescribeLoadBalancers({}), 'AuthFailure.SignatureFailure');
    await expectSdkError(clbClient(emu, { secretId: 'AKIDnobody', secretKey: 'x' }).DescribeLoadBalancers({}), 'AuthFailure.SecretIdNotFound');
    const missing = await rawSignedCall(emu, { action: 'DescribeListeners', authorization: null });
    expect(missing.Response.Error?.Code).toBe('AuthFailure.InvalidAuthorization');

    expect((await emu.admin.stats()).byCaller).toEqual({
      [UNAUTHENTICATED_CALLER]: {
        DescribeLoadBalancers: { 'AuthFailure.SignatureFailure': 1, 'AuthFailure.SecretIdNotFound': 1 },
        DescribeListeners: { 'AuthFailure.InvalidAuthorization': 1 },
      },
    });
  });

  it('charges a throttled call to its caller: both callers share the one quota', async () => {
    await emu.admin.setConfig({ rpsPerAction: { DescribeLoadBalancers: 1 } });
    const first = await outcome(clbClient(emu, emu.callers['tke']).DescribeLoadBalancers({}));
    const second = await outcome(clbClient(emu, emu.callers['loopguard']).DescribeLoadBalancers({}));
    expect([first, second]).toEqual(['OK', 'RequestLimitExceeded']);
    expect((await emu.admin.stats()).byCaller).toEqual({
      tke: { DescribeLoadBalancers: { OK: 1 } },
      loopguard: { DescribeLoadBalancers: { RequestLimitExceeded: 1 } },
    });
  });

  it('records transport faults by caller as HTTP<status> / ConnectionReset', async () => {
    await emu.admin.setFaults({ rules: [{ action: 'DescribeLoadBalancers', rate: 1, kind: 'http5xx', status: 502 }] });
    await outcome(clbClient(emu, emu.callers['tke']).DescribeLoadBalancers({}));
    expect((await emu.admin.stats()).byCaller).toEqual({ tke: { DescribeLoadBalancers: { HTTP502: 1 } } });
  });
});

describe('stats marks', () => {
  it('counts only what came after the mark, per caller, without resetting the counters', async () => {
    const lg = clbClient(emu, emu.callers['loopguard']);
    const tke = clbClient(emu, emu.callers['tke']);
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    await tke.DescribeLoadBalancers({});
    const atMark = await emu.admin.markStats('enforce');
    expect(atMark.byCaller).toEqual({ tke: { DescribeLoadBalancers: { OK: 1 } } });

    await writeAndWait(lg, lg.ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lb.Listeners[0]?.ListenerId ?? '', ListenerName: 'y' }));
    await tke.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId });

    const since = await emu.admin.statsSince('enforce');
    expect(callsByCallerAndAction(since)).toEqual({
      loopguard: { ModifyListener: 1, DescribeTaskStatus: since.calls['DescribeTaskStatus'] },
      tke: { DescribeListeners: 1 },
    });
    expect(since.calls['DescribeLoadBalancers']).toBeUndefined();
    expect(since.tasks).toEqual({ started: 1, succeeded: 1, failed: 0 });
    expect(Object.values(since.listenerWrites)).toEqual([1]);
    // The running totals are untouched.
    expect((await emu.admin.stats()).byCaller['tke']).toEqual({ DescribeLoadBalancers: { OK: 1 }, DescribeListeners: { OK: 1 } });
  });

  it('answers 404 for an unknown mark, and forgets marks on a stats reset', async () => {
    await expect(emu.admin.statsSince('nope')).rejects.toMatchObject({ status: 404 });
    await emu.admin.markStats('m');
    await emu.admin.resetStats();
    await expect(emu.admin.statsSince('m')).rejects.toMatchObject({ status: 404 });
  });
});
