// Graceful shutdown of the real operator process (src/main.ts under config/'s ServiceAccount) on the local TKE.
// The CLB emulator makes write tasks slow, so SIGTERM lands while a ModifyListener's task is being awaited:
// - within --shutdown-grace the task is awaited to its end, no new step starts, and only then is the Lease
//   released and the process exits 0;
// - with a grace shorter than the task the process exits after the grace, with the task still running in the
//   cloud, and says where it stopped (log lines and an Event on the policy);
// in both cases the next leader resumes the round with exactly one accepted write per listener.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, deletePolicy, policyManifest, waitForCondition, type PolicyRef } from '../support/policy.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const FAST_TASK_MS = 50;

type LogLine = Record<string, unknown> & { message?: string };

/** The operator's JSON log lines, in order. */
function logLines(op: OperatorProcess): LogLine[] {
  return op
    .logs()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

function indexOf(lines: LogLine[], predicate: (l: LogLine) => boolean, what: string): number {
  const i = lines.findIndex(predicate);
  if (i < 0) throw new Error(`no log line ${what}:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
  return i;
}

describe('graceful shutdown on SIGTERM', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  const running: OperatorProcess[] = [];
  const policies: PolicyRef[] = [];
  const core = kubeConfig().makeApiClient(CoreV1Api);

  beforeAll(async () => {
    tke = await startLocalTke({ operator: false });
    emulator = tke.emulator;
  });

  afterAll(async () => {
    for (const op of running) await op.stop('SIGKILL');
    await emulator?.admin.completeTasks();
    await emulator?.admin.setConfig({ taskDurationMs: FAST_TASK_MS });
    // Leave no live policy behind (later suites measure reconcile rates cluster-wide); no finalizer to wait on.
    for (const p of policies) await deletePolicy(p, { timeoutMs: 30_000 }).catch(() => undefined);
    await tke?.stop();
  });

  async function start(grace: string): Promise<OperatorProcess> {
    const op = await tke.startOperator({ extraArgs: [`--shutdown-grace=${grace}`] });
    running.push(op);
    return op;
  }

  /** An at-risk Service (TCP + UDP listener) with its CLB built by TKE; returns the CLB id. */
  async function atRiskService(ns: string, name: string): Promise<string> {
    await core.createNamespacedService({ namespace: ns, body: lbService(name, AT_RISK_L4) });
    return waitFor(`CLB of ${name} with both listeners`, async () => {
      const id = (await core.readNamespacedService({ namespace: ns, name })).metadata?.annotations?.[LB_ID];
      return id && (await emulator.admin.getLoadBalancer(id)).Listeners.length === 2 ? id : undefined;
    });
  }

  async function sources(lbId: string): Promise<number[]> {
    return (await emulator.admin.getLoadBalancer(lbId)).Listeners.map((l) => l.HealthCheck?.SourceIpType ?? 0).sort();
  }

  async function taskStatus(taskId: string): Promise<number | undefined> {
    return (await emulator.admin.tasks()).find((t) => t.taskId === taskId)?.status;
  }

  /** Applies an Enforce policy and waits until one of its ModifyListener tasks on `lbId` is running. */
  async function enforceUntilWriteInFlight(policy: PolicyRef, lbId: string, op: OperatorProcess): Promise<string> {
    policies.push(policy);
    await emulator.admin.markStats('apply');
    expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce', revertOnDelete: false }))).stderr).toBe('');
    const task = await waitFor(
      'a ModifyListener task of loopguard running',
      async () => {
        if (!(await emulator.admin.statsSince('apply')).byCaller['loopguard']?.['ModifyListener']) return undefined;
        return (await emulator.admin.tasks()).find((t) => t.action === 'ModifyListener' && t.status === 2 && t.loadBalancerIds.includes(lbId));
      },
      { timeoutMs: 60_000, intervalMs: 50, context: () => op.logs().slice(-3000) },
    );
    return task.taskId;
  }

  /** A fresh operator (fast tasks) takes over and finishes the round: both listeners switched, one write each. */
  async function resumedByNextLeader(policy: PolicyRef, ns: string, service: string, lbId: string): Promise<void> {
    const next = await start('8s');
    await waitForCondition(policy, 'Ready', { timeoutMs: 60_000, context: () => next.logs().slice(-3000) });
    expect(await sources(lbId)).toEqual([1, 1]);
    expect((await core.readNamespacedService({ namespace: ns, name: service })).metadata?.annotations?.[PREVENT]).toBe('true');
    const writes = Object.entries((await emulator.admin.stats()).listenerWrites).filter(([k]) => k.startsWith(`${lbId}/`));
    expect(writes.map(([, n]) => n)).toEqual([1, 1]);
    expect(await next.stop('SIGTERM')).toBe(0);
  }

  it('awaits the in-flight CLB task, starts no new step, then releases the Lease and exits 0', async () => {
    const ns = await createNamespace('shutdown-drain');
    tke.namespaces.add(ns);
    const lbId = await atRiskService(ns, 'drain');
    const op = await start('60s');
    await emulator.admin.setConfig({ taskDurationMs: 3_000 });
    const policy = { namespace: ns, name: 'drain' };
    const taskId = await enforceUntilWriteInFlight(policy, lbId, op);

    await emulator.admin.markStats('sigterm');
    expect(await op.stop('SIGTERM')).toBe(0);

    // The emulator: the task finished, and loopguard polled it after the signal (it was not abandoned).
    expect(await taskStatus(taskId)).toBe(0);
    expect((await emulator.admin.statsSince('sigterm')).byCaller['loopguard']?.['DescribeTaskStatus']?.['OK']).toBeGreaterThan(0);
    // No new step after the signal: the other listener was not written, prevent-loopback not set.
    expect(await sources(lbId)).toEqual([0, 1]);
    expect((await core.readNamespacedService({ namespace: ns, name: 'drain' })).metadata?.annotations?.[PREVENT]).toBeUndefined();

    // The log: signal → drain → the write's task done → round stopped, named → Lease released → stopped.
    const lines = logLines(op);
    const signal = indexOf(lines, (l) => l.message === 'Shutting down', 'Shutting down');
    const draining = indexOf(lines, (l) => l.message === 'Draining' && JSON.stringify(l['policies']).includes(`${ns}/drain`), 'Draining naming the policy');
    const written = indexOf(lines, (l) => l.message === 'CLB write done' && l['taskId'] === taskId, `CLB write done for ${taskId}`);
    const stopped = indexOf(
      lines,
      (l) => l.message === 'Round stopped by shutdown' && l['policy'] === `${ns}/drain` && JSON.stringify(l['targets']).includes(`Service/${ns}/drain`),
      'Round stopped by shutdown naming the policy and the Service',
    );
    const drained = indexOf(lines, (l) => l.message === 'Drained', 'Drained');
    const released = indexOf(lines, (l) => l.message === 'Released leader lease', 'Released leader lease');
    expect([signal, draining, written, stopped, drained, released]).toEqual([...[signal, draining, written, stopped, drained, released]].sort((a, b) => a - b));
    expect(lines.some((l) => l.message === 'Step interrupted by shutdown')).toBe(false);

    await emulator.admin.setConfig({ taskDurationMs: FAST_TASK_MS });
    await resumedByNextLeader(policy, ns, 'drain', lbId);
  }, 180_000);

  it('with a grace shorter than the task: exits after the grace, the task still running, and says where it stopped', async () => {
    const ns = await createNamespace('shutdown-abort');
    tke.namespaces.add(ns);
    const lbId = await atRiskService(ns, 'cut');
    const op = await start('1s');
    // Far longer than the grace: the process must be gone while the task still runs.
    await emulator.admin.setConfig({ taskDurationMs: 120_000 });
    const policy = { namespace: ns, name: 'cut' };
    const taskId = await enforceUntilWriteInFlight(policy, lbId, op);

    const signalled = Date.now();
    expect(await op.stop('SIGTERM')).toBe(0);
    // Generous bound; the real proof is that the task is still running in the cloud.
    expect(Date.now() - signalled).toBeLessThan(30_000);
    expect(await taskStatus(taskId)).toBe(2);

    const lines = logLines(op);
    const ended = indexOf(
      lines,
      (l) => l.message === 'Shutdown grace period ended; aborting' && JSON.stringify(l['policies']).includes(`${ns}/cut`),
      'grace period ended naming the policy',
    );
    const interrupted = indexOf(
      lines,
      (l) => l.message === 'Step interrupted by shutdown' && l['policy'] === `${ns}/cut` && l['target'] === `Service/${ns}/cut` && String(l['step']).includes('100.64.0.0/10'),
      'Step interrupted naming the policy, the Service and the step',
    );
    indexOf(lines, (l) => l.message === 'Stopped waiting for a CLB task' && l['taskId'] === taskId && l['loadBalancerId'] === lbId, `Stopped waiting for ${taskId}`);
    const released = indexOf(lines, (l) => l.message === 'Released leader lease', 'Released leader lease');
    expect(ended).toBeLessThan(interrupted);
    expect(interrupted).toBeLessThan(released);
    expect(lines.some((l) => l.message === 'CLB write done' && l['taskId'] === taskId)).toBe(false);

    // The policy says so too, for kubectl describe.
    // Written by the shutdown's bounded Event flush; read until it is there (a flush cut short says so in the log).
    const event = await waitFor(
      'the RoundInterrupted Event',
      async () => (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.kind=LoopbackPolicy,involvedObject.name=cut' })).items.find((e) => e.reason === 'RoundInterrupted'),
      { timeoutMs: 10_000 },
    );
    expect(event?.message).toContain(`Service ${ns}/cut`);
    expect(event?.message).toContain('next leader');

    // The task finishes in the cloud on its own; the next leader reads the result and writes only the other listener.
    await emulator.admin.completeTasks();
    await emulator.admin.setConfig({ taskDurationMs: FAST_TASK_MS });
    await resumedByNextLeader(policy, ns, 'cut', lbId);
  }, 180_000);
});
