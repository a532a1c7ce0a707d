/**
 * Where loopguard's CLB client sends a write's proof, and when a listener read proves it (src/cloud/proof.ts), against
 * the emulator through the real SDK, in both readings of the undocumented question "does a written value show before
 * its task ends?" (docs/tencent-cloud.md §3 "When a write shows"):
 * - the emulator's own world: a value shows only once its task has succeeded;
 * - the other world, played with the emulator's console user: the value shows as soon as the write is accepted, while
 *   its task still runs.
 * DescribeTaskStatus is given a small budget, so DescribeListeners has more room and the proofs go there.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { CloudLogger, TencentClbClientOptions } from '../../src/cloud/index.js';
import { TencentClbClient, withSourceIpType } from '../../src/cloud/index.js';

let emu: ClbEmulator;
const clients: TencentClbClient[] = [];
const logLines: string[] = [];
const logger: CloudLogger = {
  debug: () => undefined,
  info: (m, meta) => logLines.push(`info ${m} ${JSON.stringify(meta)}`),
  warn: (m, meta) => logLines.push(`warn ${m} ${JSON.stringify(meta)}`),
  error: (m, meta) => logLines.push(`error ${m} ${JSON.stringify(meta)}`),
};

function makeClient(overrides: Partial<TencentClbClientOptions> = {}): TencentClbClient {
  const client = new TencentClbClient({
    region: emu.region,
    credentials: emu.credentials,
    endpoint: emu.url,
    requestTimeoutMs: 5_000,
    // Polls cheap on room: 5/s against 100/s of reads.
    throttle: { defaultBudget: { rps: 100, concurrency: 32 }, budgets: { DescribeTaskStatus: { rps: 5 } } },
    retry: { baseDelayMs: 10, maxDelayMs: 100, minDelayMs: 5, maxAttempts: 10 },
    taskPoll: { initialDelayMs: 50, factor: 1.5, maxDelayMs: 100, timeoutMs: 10_000 },
    logger,
    ...overrides,
  });
  clients.push(client);
  return client;
}

async function seed(listeners: number): Promise<AdminLoadBalancer> {
  return emu.admin.seedLoadBalancer({ Listeners: Array.from({ length: listeners }, (_, i) => ({ Protocol: 'TCP', Port: 80 + i })) });
}

/** Switches every listener of `lb`, one after another (as the executor does): read fresh, write, await the proof. */
async function switchAll(client: TencentClbClient, lb: AdminLoadBalancer, onWrite?: (listenerId: string) => Promise<void>): Promise<void> {
  for (const l of lb.Listeners) {
    const [fresh] = await client.describeListeners(lb.LoadBalancerId, { listenerIds: [l.ListenerId] });
    await client.modifyListenerHealthCheck(lb.LoadBalancerId, l.ListenerId, withSourceIpType(fresh?.healthCheck ?? {}, 1));
    await onWrite?.(l.ListenerId);
  }
}

beforeAll(async () => {
  emu = await startClbEmulator({ taskDurationMs: 0 });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await emu.close();
});

beforeEach(async () => {
  await emu.admin.reset();
  await emu.admin.setConfig({ taskDurationMs: 0 });
  logLines.length = 0;
});

describe('write proofs', () => {
  it('a value that shows only at completion (the emulator): five reads confirmed by the task, then reads prove alone', async () => {
    const client = makeClient();
    const lb = await seed(8);
    await emu.admin.resetStats();
    await switchAll(client, lb);
    const stats = await emu.admin.stats();
    // 8 fresh reads before the writes, 8 proofs by a read (the task is done by the first poll), 5 of them confirmed.
    expect(stats.calls).toEqual({ DescribeListeners: 16, ModifyListener: 8, DescribeTaskStatus: 5 });
    expect(stats.listenerWrites).toEqual(Object.fromEntries(lb.Listeners.map((l) => [`${lb.LoadBalancerId}/${l.ListenerId}`, 1])));
    expect(logLines.filter((l) => l.includes('Learned when a CLB write shows'))).toEqual([expect.stringMatching(/^info .*"visibility":"atCompletion"/)]);
  });

  it('a value that shows while its task runs (the other reading): caught by the first confirmation, then every proof asks the task', async () => {
    // The patch below must land before the client's first proof: 250 ms for it (50 ms was once too short on a busy
    // machine), and a task long enough to be still running then.
    await emu.admin.setConfig({ taskDurationMs: 800 });
    const client = makeClient({ taskPoll: { initialDelayMs: 250, factor: 1.5, maxDelayMs: 250, timeoutMs: 10_000 } });
    const lb = await seed(3);
    await emu.admin.resetStats();
    const settled: Array<{ listenerId: string; running: number }> = [];
    // The console user shows the written source at once: what a read returns in the world where values show early.
    const early = (lbId: string, listenerId: string) => emu.admin.patchListener(lbId, listenerId, { HealthCheck: { SourceIpType: 1 } });
    for (const l of lb.Listeners) {
      const [fresh] = await client.describeListeners(lb.LoadBalancerId, { listenerIds: [l.ListenerId] });
      const write = client.modifyListenerHealthCheck(lb.LoadBalancerId, l.ListenerId, withSourceIpType(fresh?.healthCheck ?? {}, 1));
      // Accepted within the first poll's 250 ms; the task runs 800 ms.
      await waitForTask(lb.LoadBalancerId);
      await early(lb.LoadBalancerId, l.ListenerId);
      await write;
      // The write counted as done only once its task had ended.
      settled.push({ listenerId: l.ListenerId, running: (await emu.admin.tasks()).filter((t) => t.status === 2).length });
    }
    expect(settled.map((s) => s.running)).toEqual([0, 0, 0]);
    const warn = logLines.filter((l) => l.includes('Learned when a CLB write shows'));
    expect(warn).toEqual([expect.stringMatching(/^warn .*"visibility":"early".*"taskStatus":2/)]);
    // One proof by a read (the first write, confirmed and found early); every later proof asks the task.
    const stats = await emu.admin.stats();
    expect(stats.calls['DescribeListeners']).toBe(3 + 1);
  });
});

/** Until a task is running on the CLB (the write was accepted). */
async function waitForTask(lbId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await emu.admin.tasks()).some((t) => t.status === 2 && t.loadBalancerIds.includes(lbId))) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no task started on ${lbId}`);
}
