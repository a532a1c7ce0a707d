// bench:scale --restart (issue 28 #3): what a restart costs once every target has converged under Enforce. The
// operator is stopped (SIGTERM: it writes its observation checkpoint) and started again; printed:
//   restart: Ready = X s after process start; CLB reads in its first 60 s = N (budget pace = M); new Service mitigated in S s
// Ready: the first round of the new process has reported every target (a ClusterIP Service created while no
// operator ran is counted only by it) and Ready=True. CLB reads: DescribeListeners calls by loopguard (one per CLB
// read) from process start to 60 s later; the budget pace is the drift schedule's, every CLB once per drift
// interval: CLBs × 60 s / interval. New Service: an at-risk LoadBalancer Service created right after the restart,
// from its CLB's creation (the CreateLoadBalancer task's start, in ms) to every listener's health-check source
// switched (loopguard's last write to it finished, in ms; both from the emulator). Its timeline splits that into TKE's
// part (listeners built) and loopguard's (first write accepted, last finished).
// Goals (issue 28): Ready < 60 s, reads ≤ 1.2 × the budget pace, new Service < 10 s; printed as ratios.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ClbEmulator } from '../sim/clb-emulator/index.js';
import { waitFor } from '../test/support/kube.js';
import { OPERATOR_NAMESPACE, type OperatorProcess } from '../test/support/operator.js';
import { AT_RISK_L4, lbService } from '../test/support/workload.js';
import { MAX_PARTS } from '../src/cloud/observation-checkpoint.js';
import { checkpointNames } from '../src/kube/observation-store.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const GOAL_READY_MS = 60_000;
const GOAL_NEW_MS = 10_000;
const WINDOW_MS = 60_000;

interface PolicyView {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; counts?: { total: number; atRisk: number; pending: number }; conditions?: { type: string; status: string; reason?: string }[] };
}

export interface RestartContext {
  kc: KubeConfig;
  emulator: ClbEmulator;
  namespace: string;
  total: number;
  clbs: number;
  driftIntervalMs: number;
  /** The running operator (stopped here) and how to start another with the same flags. */
  operator: OperatorProcess;
  start: () => Promise<OperatorProcess>;
  read: () => Promise<PolicyView>;
  log: (line: string) => void;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ready = (p: PolicyView) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true && p.status?.observedGeneration === p.metadata.generation;

/** The stored checkpoint's size: bytes of binaryData over its ConfigMaps. */
async function checkpointSize(core: CoreV1Api): Promise<{ bytes: number; parts: number }> {
  let bytes = 0;
  let parts = 0;
  for (const name of checkpointNames()) {
    const cm = await core.readNamespacedConfigMap({ namespace: OPERATOR_NAMESPACE, name }).catch(() => undefined);
    if (!cm) break;
    const n = Number(cm.data?.['parts'] ?? MAX_PARTS);
    bytes += Buffer.from(Object.values(cm.binaryData ?? {})[0] ?? '', 'base64').length;
    parts++;
    if (parts >= n) break;
  }
  return { bytes, parts };
}

/** Waits for convergence, restarts the operator and measures; returns the restarted operator (the caller stops it). */
export async function restartScenario(c: RestartContext): Promise<OperatorProcess> {
  const core = c.kc.makeApiClient(CoreV1Api);
  const tConverge = Date.now();
  const converged = await waitFor(
    'every target converged under Enforce',
    async () => {
      const p = await c.read();
      const n = p.status?.counts;
      return ready(p) && n?.total === c.total && n.atRisk === 0 && n.pending === 0 ? n : undefined;
    },
    { timeoutMs: 3_600_000, intervalMs: 1_000, context: () => c.operator.logs().slice(-2000) },
  );
  c.log(`restart: every target converged under Enforce (waited ${secs(Date.now() - tConverge)} more after the figures above): ${JSON.stringify(converged)}`);
  await c.operator.stop('SIGTERM');
  const size = await checkpointSize(core);
  c.log(`restart: checkpoint ${size.bytes} bytes (gzip) in ${size.parts} ConfigMap(s) for ${c.clbs} CLBs (${(size.bytes / Math.max(1, c.clbs)).toFixed(0)} bytes per CLB; a ConfigMap holds 1 MiB)`);
  // Counted only by the new process's first round: it reads no CLB.
  await core.createNamespacedService({ namespace: c.namespace, body: { metadata: { name: 'restart-marker' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } } });

  await c.emulator.admin.markStats('restart');
  const tStart = Date.now();
  const operator = await c.start();
  await core.createNamespacedService({ namespace: c.namespace, body: lbService('restart-new', AT_RISK_L4) });
  let readyMs: number | undefined;
  let created: number | undefined;
  let mitigatedMs: number | undefined;
  let readsIn60: number | undefined;
  const callsNow = async (action: string) => Object.values((await c.emulator.admin.statsSince('restart')).byCaller['loopguard']?.[action] ?? {}).reduce((a, b) => a + b, 0);
  const readsNow = () => callsNow('DescribeListeners');
  let healthIn60: number | undefined;
  await waitFor(
    'restart measured',
    async () => {
      if (readyMs === undefined) {
        const p = await c.read();
        if (ready(p) && (p.status?.counts?.total ?? 0) >= c.total + 1) readyMs = Date.now() - tStart;
      }
      if (mitigatedMs === undefined) {
        const id = (await core.readNamespacedService({ namespace: c.namespace, name: 'restart-new' })).metadata?.annotations?.[LB_ID];
        const lb = id ? await c.emulator.admin.getLoadBalancer(id).catch(() => undefined) : undefined;
        if (lb && created === undefined) created = Date.parse(`${lb.CreateTime.replace(' ', 'T')}+08:00`) || Date.now();
        if (lb && created !== undefined && lb.Listeners.length >= 2 && lb.Listeners.every((l) => l.HealthCheck?.SourceIpType === 1)) mitigatedMs = Date.now() - created;
      }
      if (readsIn60 === undefined && Date.now() - tStart >= WINDOW_MS) [readsIn60, healthIn60] = [await readsNow(), await callsNow('DescribeTargetHealth')];
      return readyMs !== undefined && mitigatedMs !== undefined && readsIn60 !== undefined ? true : undefined;
    },
    { timeoutMs: 1_800_000, intervalMs: 250, context: () => operator.logs().slice(-2000) },
  );
  const budget = (c.clbs * WINDOW_MS) / c.driftIntervalMs;
  const timeline = await newServiceTimeline(c.emulator, core, c.namespace);
  if (timeline) mitigatedMs = timeline.switched;
  const [r, n, s] = [readyMs as number, readsIn60 as number, mitigatedMs as number];
  c.log(`restart: Ready = ${secs(r)} after process start; CLB reads in its first 60 s = ${n} (budget pace = ${budget.toFixed(0)}); new Service mitigated in ${secs(s)}`);
  // The health signal's pace: every CLB's health once per half interval, 30 CLBs per call (drift-signal.ts).
  const healthPace = (Math.ceil(c.clbs / 30) * WINDOW_MS) / (c.driftIntervalMs / 2);
  c.log(`restart: DescribeTargetHealth in its first 60 s = ${healthIn60 ?? NaN}, the signal's and the full reads' (the signal's pace = ${healthPace.toFixed(0)}: every CLB's health each half interval, 30 per call)`);
  if (!timeline) c.log(`restart: no new Service timeline (a task or write of its CLB missing from the emulator): its figure is from the CLB's CreateTime, to the second`);
  if (timeline) c.log(`restart: new Service timeline (s after CreateLoadBalancer): listeners built ${secs(timeline.listenersBuilt)} (TKE); loopguard's first write accepted ${secs(timeline.firstWrite)}, last finished ${secs(timeline.switched)}`);
  c.log(`restart: ratios — Ready / 60 s = ${(r / GOAL_READY_MS).toFixed(2)} (goal < 1); reads / budget pace = ${(n / budget).toFixed(2)} (goal ≤ 1.2); new Service / 10 s = ${(s / GOAL_NEW_MS).toFixed(2)} (goal < 1)`);
  return operator;
}

/** The new Service's CLB in ms from the emulator: its creation, TKE's listeners built, loopguard's writes (undefined if any is missing). */
async function newServiceTimeline(emulator: ClbEmulator, core: CoreV1Api, namespace: string): Promise<{ listenersBuilt: number; firstWrite: number; switched: number } | undefined> {
  const id = (await core.readNamespacedService({ namespace, name: 'restart-new' })).metadata?.annotations?.[LB_ID];
  if (!id) return undefined;
  const tasks = (await emulator.admin.tasks()).filter((t) => t.loadBalancerIds.includes(id));
  const created = tasks.find((t) => t.action === 'CreateLoadBalancer')?.startedAtMs;
  const listeners = tasks.filter((t) => t.action === 'CreateListener').map((t) => t.dueAtMs);
  const writes = (await emulator.admin.writes()).filter((w) => w.loadBalancerId === id && w.caller === 'loopguard');
  const finished = writes.map((w) => w.finishedAtMs);
  if (created === undefined || listeners.length === 0 || writes.length === 0 || finished.some((f) => f === null)) return undefined;
  return { listenersBuilt: Math.max(...listeners) - created, firstWrite: Math.min(...writes.map((w) => w.acceptedAtMs)) - created, switched: Math.max(...(finished as number[])) - created };
}

