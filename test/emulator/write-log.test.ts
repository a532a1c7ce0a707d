/**
 * The write log (`GET /_admin/writes`): who wrote which listener or rule, in order, and which writes were
 * effective (succeeded and changed a value). Through the real SDK, with two callers on one account.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import { changedFields } from '../../sim/clb-emulator/write-log.js';
import { clbClient, expectSdkError, waitForTask } from './support.js';

const A = { caller: 'replica-a', secretId: 'AKIDreplicaA0001', secretKey: 'replica-a-key' };
const B = { caller: 'replica-b', secretId: 'AKIDreplicaB0001', secretKey: 'replica-b-key' };

let emu: ClbEmulator;

beforeAll(async () => {
  emu = await startClbEmulator({ callers: [A, B], taskDurationMs: 20 });
});
afterAll(() => emu.close());
beforeEach(() => emu.admin.reset());

describe('the write log', () => {
  it('names the caller of each accepted write, in order, and what its task changed', async () => {
    const lb = await emu.admin.seedLoadBalancer({
      Listeners: [
        { Protocol: 'TCP', Port: 80 },
        { Protocol: 'HTTP', Port: 8080, Rules: [{ Url: '/' }] },
      ],
    });
    const [tcp, http] = lb.Listeners;
    const hc = { HealthSwitch: 1, SourceIpType: 1 };
    const loc = http?.Rules[0]?.LocationId ?? '';
    const a = clbClient(emu, A);
    const b = clbClient(emu, B);
    const args = { LoadBalancerId: lb.LoadBalancerId, ListenerId: tcp?.ListenerId ?? '' };

    const first = await a.ModifyListener({ ...args, HealthCheck: hc });
    await waitForTask(a, first.RequestId ?? '');
    // The same value again: accepted and succeeded, but nothing changed — not an effective write.
    const again = await b.ModifyListener({ ...args, HealthCheck: hc });
    await waitForTask(b, again.RequestId ?? '');
    const rule = await b.ModifyRule({ LoadBalancerId: lb.LoadBalancerId, ListenerId: http?.ListenerId ?? '', LocationId: loc, Scheduler: 'LEAST_CONN' });
    await waitForTask(b, rule.RequestId ?? '');

    const log = await emu.admin.writes();
    expect(log.map(({ seq, caller, action, listenerId, locationId, taskId, status, changed }) => ({ seq, caller, action, listenerId, locationId, taskId, status, changed }))).toEqual([
      { seq: 1, caller: 'replica-a', action: 'ModifyListener', listenerId: tcp?.ListenerId, locationId: null, taskId: first.RequestId, status: 'succeeded', changed: ['HealthCheck.SourceIpType'] },
      { seq: 2, caller: 'replica-b', action: 'ModifyListener', listenerId: tcp?.ListenerId, locationId: null, taskId: again.RequestId, status: 'succeeded', changed: [] },
      { seq: 3, caller: 'replica-b', action: 'ModifyRule', listenerId: http?.ListenerId, locationId: loc, taskId: rule.RequestId, status: 'succeeded', changed: ['Scheduler'] },
    ]);
    expect(log.every((e) => e.loadBalancerId === lb.LoadBalancerId && e.finishedAtMs !== null && e.finishedAtMs >= e.acceptedAtMs)).toBe(true);
    expect((await emu.admin.writes(2)).map((e) => e.seq)).toEqual([3]);
  });

  it('logs a failed task with nothing changed, and never a call refused before its task started', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    const listener = lb.Listeners[0];
    const a = clbClient(emu, A);
    const args = { LoadBalancerId: lb.LoadBalancerId, ListenerId: listener?.ListenerId ?? '', HealthCheck: { HealthSwitch: 1, SourceIpType: 1 } };

    await emu.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'taskFailure' }] });
    const failed = await a.ModifyListener(args);
    expect((await waitForTask(a, failed.RequestId ?? '')).Status).toBe(1);
    await emu.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'error', code: 'InternalError' }] });
    await expectSdkError(a.ModifyListener(args), 'InternalError');

    const log = await emu.admin.writes();
    expect(log.map((e) => [e.taskId, e.status, e.changed])).toEqual([[failed.RequestId, 'failed', []]]);
    expect((await emu.admin.getLoadBalancer(lb.LoadBalancerId)).Listeners[0]?.HealthCheck?.SourceIpType).toBe(0);
  });

  it('is emptied by a reset and by a stats reset', async () => {
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
    await clbClient(emu, A).ModifyListener({ LoadBalancerId: lb.LoadBalancerId, ListenerId: lb.Listeners[0]?.ListenerId ?? '', ListenerName: 'x' });
    expect(await emu.admin.writes()).toHaveLength(1);
    await emu.admin.resetStats();
    expect(await emu.admin.writes()).toEqual([]);
  });
});

describe('changedFields', () => {
  it('names the differing API fields one level deep and ignores bookkeeping', () => {
    expect(changedFields({ A: 1, HealthCheck: { X: 1, Y: 2 }, seq: 1 }, { A: 1, HealthCheck: { X: 1, Y: 3 }, seq: 2 })).toEqual(['HealthCheck.Y']);
    expect(changedFields({ A: 1, B: null }, { A: 2, B: { Z: 1 } })).toEqual(['A', 'B']);
    expect(changedFields({ A: [1] }, { A: [1] })).toEqual([]);
  });
});
