/** Async tasks, DescribeTaskStatus and the per-CLB lock (tencent-cloud.md §3 "DescribeTaskStatus", "Error codes"). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { ClbClient } from './support.js';
import { clbClient, expectSdkError, waitForTask } from './support.js';

let emu: ClbEmulator;
let client: ClbClient;
let lb: AdminLoadBalancer;
let other: AdminLoadBalancer;

const healthCheckOf = async (lbId: string) => (await client.DescribeListeners({ LoadBalancerId: lbId })).Listeners?.[0]?.HealthCheck;

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 500 });
  client = clbClient(emu);
});
afterAll(() => emu.close());
beforeEach(async () => {
  await emu.admin.reset();
  lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }, { Protocol: 'TCP', Port: 81 }] });
  other = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
});

const modifyIntervals = (target: AdminLoadBalancer, listenerIndex: number, interval: number) =>
  client.ModifyListener({
    LoadBalancerId: target.LoadBalancerId,
    ListenerId: target.Listeners[listenerIndex]?.ListenerId ?? '',
    HealthCheck: { IntervalTime: interval },
  });

describe('task progression', () => {
  it('is Status 2 while running and 0 afterwards; the change is visible only at completion', async () => {
    const started = Date.now();
    const res = await modifyIntervals(lb, 0, 40);
    const taskId = res.RequestId ?? '';
    const running = await client.DescribeTaskStatus({ TaskId: taskId });
    expect(running).toMatchObject({ Status: 2, LoadBalancerIds: [lb.LoadBalancerId] });
    expect((await healthCheckOf(lb.LoadBalancerId))?.IntervalTime).toBe(5);

    const done = await waitForTask(client, taskId);
    expect(done.Status).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(490);
    expect((await healthCheckOf(lb.LoadBalancerId))?.IntervalTime).toBe(40);
  });

  it('reports Status 1 with a Message when a taskFailure fault fires, and changes nothing', async () => {
    await emu.admin.setFaults({ seed: 7, rules: [{ action: 'ModifyListener', rate: 1, kind: 'taskFailure', message: 'backend busy' }] });
    const res = await modifyIntervals(lb, 0, 40);
    const done = await waitForTask(client, res.RequestId ?? '');
    expect(done).toMatchObject({ Status: 1, Message: 'backend busy' });
    expect((await healthCheckOf(lb.LoadBalancerId))?.IntervalTime).toBe(5);
    expect((await emu.admin.stats()).tasks).toEqual({ started: 1, succeeded: 0, failed: 1 });
  });

  it('answers an unknown TaskId with InvalidParameter and a missing one with MissingParameter', async () => {
    await expectSdkError(client.DescribeTaskStatus({ TaskId: 'no-such-task' }), 'InvalidParameter');
    await expectSdkError(client.DescribeTaskStatus({}), 'MissingParameter');
  });

  it('lets the admin finish running tasks at once', async () => {
    const res = await modifyIntervals(lb, 0, 40);
    expect(await emu.admin.completeTasks()).toBe(1);
    expect((await client.DescribeTaskStatus({ TaskId: res.RequestId ?? '' })).Status).toBe(0);
  });
});

describe('per-CLB lock', () => {
  // Hold tasks open so the assertions below cannot race a task's natural completion on a loaded machine;
  // they are finished through the admin API.
  beforeEach(() => emu.admin.setConfig({ taskDurationMs: 60_000 }));

  it('refuses any other write to the CLB with FailedOperation.ResourceInOperating while a task runs', async () => {
    const first = await modifyIntervals(lb, 0, 40);
    // Another listener on the same CLB: still locked (the lock is per CLB, not per listener).
    const err = await expectSdkError(modifyIntervals(lb, 1, 50), 'FailedOperation.ResourceInOperating');
    expect(err.message).toBe(
      `Loadbalancer(${lb.LoadBalancerId}) is not in normal desState, maybe some tasks are being processed, please try later.`,
    );
    await expectSdkError(client.ModifyLoadBalancerAttributes({ LoadBalancerId: lb.LoadBalancerId, LoadBalancerPassToTarget: true }), 'FailedOperation.ResourceInOperating');
    await expectSdkError(client.CreateListener({ LoadBalancerId: lb.LoadBalancerId, Ports: [90], Protocol: 'TCP' }), 'FailedOperation.ResourceInOperating');
    await expectSdkError(client.DeleteLoadBalancer({ LoadBalancerIds: [lb.LoadBalancerId] }), 'FailedOperation.ResourceInOperating');

    // Reads are not locked; other CLBs are not locked.
    expect((await client.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId })).TotalCount).toBe(2);
    const otherWrite = await modifyIntervals(other, 0, 60);
    expect((await emu.admin.getLoadBalancer(lb.LoadBalancerId)).lockedByTask).toBe(first.RequestId);

    expect(await emu.admin.completeTasks()).toBe(2);
    expect((await waitForTask(client, first.RequestId ?? '')).Status).toBe(0);
    expect((await waitForTask(client, otherWrite.RequestId ?? '')).Status).toBe(0);
    await emu.admin.setConfig({ taskDurationMs: 50 });
    const second = await modifyIntervals(lb, 1, 50);
    expect((await waitForTask(client, second.RequestId ?? '')).Status).toBe(0);
    const listeners = (await client.DescribeListeners({ LoadBalancerId: lb.LoadBalancerId })).Listeners ?? [];
    expect(listeners.map((l) => l.HealthCheck?.IntervalTime)).toEqual([40, 50]);
  });

  it('keeps a CLB being created locked until it is running', async () => {
    const res = await client.CreateLoadBalancer({ LoadBalancerType: 'OPEN' });
    const id = res.LoadBalancerIds?.[0] ?? '';
    await expectSdkError(client.CreateListener({ LoadBalancerId: id, Ports: [80], Protocol: 'TCP' }), 'FailedOperation.ResourceInOperating');
    await emu.admin.completeTasks();
    expect((await client.DescribeLoadBalancers({ LoadBalancerIds: [id] })).LoadBalancerSet?.[0]?.Status).toBe(1);
    const created = await client.CreateListener({ LoadBalancerId: id, Ports: [80], Protocol: 'TCP' });
    expect(created.ListenerIds).toHaveLength(1);
  });

  it('validates before it checks the lock (an invalid write gets its validation error)', async () => {
    await modifyIntervals(lb, 0, 40);
    await expectSdkError(modifyIntervals(lb, 1, 1000), 'InvalidParameterValue.Range');
  });
});
