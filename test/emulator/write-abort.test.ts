/**
 * A CLB write whose caller aborts while its task is being awaited (the operator's shutdown grace period ended):
 * the wait ends at once, the log names the task that may still land, nothing is resubmitted, and the task
 * finishes in the cloud regardless. Without an abort the same slow task is awaited to its end.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import { ClbError, TencentClbClient, withSourceIpType, type CloudLogger } from '../../src/cloud/index.js';

let emu: ClbEmulator;
let client: TencentClbClient;
const warnings: Array<{ message: string; meta: Record<string, unknown> | undefined }> = [];
const logger: CloudLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message, meta) => warnings.push({ message, meta }),
  error: () => undefined,
};

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 40, rps: 0 });
  client = new TencentClbClient({
    region: emu.region,
    credentials: emu.credentials,
    endpoint: emu.url,
    taskPoll: { initialDelayMs: 10, factor: 1.5, maxDelayMs: 50, timeoutMs: 60_000 },
    logger,
  });
});
afterAll(async () => {
  await client.close();
  await emu.close();
});

async function slowWrite(signal?: AbortSignal): Promise<{ write: Promise<unknown>; taskId: string; lbId: string }> {
  const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }] });
  const [l] = await client.describeListeners(lb.LoadBalancerId);
  const write = client.modifyListenerHealthCheck(lb.LoadBalancerId, l?.listenerId ?? '', withSourceIpType(l?.healthCheck ?? {}, 1), signal ? { signal } : {});
  let taskId = '';
  while (!taskId) {
    taskId = (await emu.admin.tasks()).find((t) => t.status === 2 && t.loadBalancerIds.includes(lb.LoadBalancerId))?.taskId ?? '';
    if (!taskId) await new Promise((r) => setTimeout(r, 5));
  }
  return { write, taskId, lbId: lb.LoadBalancerId };
}

describe('shutdown began (`stopping`)', () => {
  it('drops a write still waiting for its CLB, while the one in flight is awaited to its end', async () => {
    await emu.admin.setConfig({ taskDurationMs: 400 });
    const stopping = new AbortController();
    const lb = await emu.admin.seedLoadBalancer({ Listeners: [{ Protocol: 'TCP', Port: 80 }, { Protocol: 'TCP', Port: 81 }] });
    const [a, b] = await client.describeListeners(lb.LoadBalancerId);
    const writesBefore = (await emu.admin.stats()).calls['ModifyListener'] ?? 0;
    const write = (l: typeof a) => client.modifyListenerHealthCheck(lb.LoadBalancerId, l?.listenerId ?? '', withSourceIpType(l?.healthCheck ?? {}, 1), { stopping: stopping.signal });
    const first = write(a);
    const second = write(b);
    while (!(await emu.admin.tasks()).some((t) => t.status === 2 && t.loadBalancerIds.includes(lb.LoadBalancerId))) await new Promise((r) => setTimeout(r, 5));
    stopping.abort(Object.assign(new Error('shutdown began'), { name: 'AbortError' }));
    await expect(second).rejects.toMatchObject({ name: 'AbortError' });
    await expect(first).resolves.toMatchObject({ attempts: 1 });
    expect((await emu.admin.stats()).calls['ModifyListener']).toBe(writesBefore + 1);
    expect((await emu.admin.getLoadBalancer(lb.LoadBalancerId)).Listeners.map((l) => l.HealthCheck?.SourceIpType)).toEqual([1, 0]);
  });
});

describe('a write aborted while its task runs', () => {
  it('is awaited to its end while its signal is live', async () => {
    await emu.admin.setConfig({ taskDurationMs: 400 });
    const ac = new AbortController();
    const { write, taskId } = await slowWrite(ac.signal);
    await expect(write).resolves.toMatchObject({ taskId });
    expect((await emu.admin.tasks()).find((t) => t.taskId === taskId)?.status).toBe(0);
  });

  it('stops waiting at once on abort, names the task, and resubmits nothing; the task still finishes', async () => {
    await emu.admin.setConfig({ taskDurationMs: 60_000 });
    const ac = new AbortController();
    const { write, taskId, lbId } = await slowWrite(ac.signal);
    const writesBefore = (await emu.admin.stats()).calls['ModifyListener'];
    const reason = new Error('shutdown grace period ended');
    ac.abort(reason);
    const err = await write.then(
      () => undefined,
      (e: unknown) => e,
    );
    // The per-CLB gate rejects with the abort reason itself; from inside, an Aborted ClbError.
    expect(err === reason || (err instanceof ClbError && err.reason === 'Aborted')).toBe(true);
    // The wait unwinds right behind the rejection.
    const named = (): boolean => warnings.some((w) => w.message === 'Stopped waiting for a CLB task' && w.meta?.['taskId'] === taskId);
    for (let i = 0; i < 100 && !named(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(warnings).toContainEqual({ message: 'Stopped waiting for a CLB task', meta: expect.objectContaining({ action: 'ModifyListener', loadBalancerId: lbId, taskId }) });
    expect((await emu.admin.stats()).calls['ModifyListener']).toBe(writesBefore);
    expect(await emu.admin.completeTasks()).toBe(1);
    expect((await emu.admin.getLoadBalancer(lbId)).Listeners[0]?.HealthCheck?.SourceIpType).toBe(1);
  });
});
