// bench/l4-bulk: how close the L4 mitigation gets to the CLB write quota. N private LoadBalancer Services
// (2 listeners each, externalTrafficPolicy Local, so every listener is at risk) are created at once on the local
// TKE (own kube-apiserver, or an existing cluster with LOOPGUARD_USE_EXISTING_CLUSTER=true KUBECONFIG=…), the
// TKE simulator gives each a CLB, then an Enforce policy is applied with the emulator's per-action quota set to q
// and the operator's budget (--cloud-rate-limit) near q. Prints T_actual (policy applied → last listener switched),
// the bound T_min = N·2/q (ModifyListener calls at the quota), their ratio, RequestLimitExceeded count, writes per
// listener, and reaction time p50/p99 (CLB assigned → source switched) for a trickle of single Services.
// loopguard and TKE call the CLB with their own credentials, so the emulator counts their calls apart: the bench
// prints the Enforce phase's calls by action × caller and the calls per mitigated listener (TKE's reads that
// loopguard's Service patches cause are in the TKE column: TKE was idle before the policy, with no resync).
//
//   npm run bench:l4 -- --n 500            (defaults: --n 20 --q 20 --rate-limit q --trickle 5 --task-ms 50
//                                           --source-switch Direct; TKEFirst measures TKE's path)
import { parseArgs } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { diffStats, startClbEmulator } from '../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator } from '../sim/tke-simulator/index.js';
import { benchCluster, createAtRiskServices, quiet, runBench } from './support.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../test/support/kube.js';
import { localTkeCallers } from '../test/support/local-tke.js';
import { installOperatorRbac, serviceAccountKubeconfig, startOperatorProcess } from '../test/support/operator.js';
import { AT_RISK_L4, lbService } from '../test/support/workload.js';
import { callsTable, failures, perListener, summarize } from './calls-table.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20' },
    q: { type: 'string', default: '20' },
    'rate-limit': { type: 'string' },
    trickle: { type: 'string', default: '5' },
    'task-ms': { type: 'string', default: '50' },
    // l4.sourceSwitch of the policy: Direct (loopguard writes) or TKEFirst (TKE writes on prevent-loopback).
    'source-switch': { type: 'string', default: 'Direct' },
  },
});
const N = Number(values.n);
const Q = Number(values.q);
const RATE = Math.min(20, Number(values['rate-limit'] ?? Q));
const TRICKLE = Number(values.trickle);
const TASK_MS = Number(values['task-ms']);
const SOURCE_SWITCH = values['source-switch'];
if (SOURCE_SWITCH !== 'Direct' && SOURCE_SWITCH !== 'TKEFirst') throw new Error(`--source-switch must be Direct or TKEFirst, not ${JSON.stringify(SOURCE_SWITCH)}`);
const LB_ID = 'service.kubernetes.io/loadbalance-id';

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const log = (s: string) => console.log(`[bench:l4] ${s}`);

async function main(): Promise<void> {
  const cluster = await benchCluster();
  const kc: KubeConfig = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  // Setup runs unthrottled; the quota q applies from the policy on.
  // loopguard first: `emulator.credentials` is what the operator process is given.
  const emulator = await startClbEmulator({ taskDurationMs: TASK_MS, rps: 0, callers: localTkeCallers() });
  const tkeCredentials = emulator.callers['tke'];
  if (!tkeCredentials) throw new Error('the emulator has no tke caller');
  const namespaces = new Set<string>();
  await applyClusterProfile(kc, 'ipvs-new');
  const simulator = await startTkeSimulator({
    kubeConfig: kc,
    clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: tkeCredentials, protocol: 'http://' },
    namespaceFilter: (n) => namespaces.has(n),
    resyncIntervalMs: 0,
    // TKE's own pacing (10/s per action, half the quota): it shares the account quota with loopguard.
    concurrency: 32,
  });
  await installOperatorRbac();
  const operator = await startOperatorProcess({
    kubeconfig: await serviceAccountKubeconfig(),
    emulator,
    extraArgs: [`--cloud-rate-limit=${RATE}`, '--drift-check-interval=10m', '--log-level=warn'],
  });
  try {
    const ns = await createNamespace('bench-l4');
    namespaces.add(ns);
    log(`N=${N} services × 2 listeners, emulator quota q=${Q}/s per action, operator --cloud-rate-limit=${RATE}, task ${TASK_MS} ms, l4.sourceSwitch: ${SOURCE_SWITCH}`);
    const t0 = Date.now();
    const lbIds = await createAtRiskServices(core, emulator, ns, N, log);
    log(`TKE assigned ${lbIds.length} CLBs in ${((Date.now() - t0) / 1000).toFixed(1)} s (setup, not measured)`);

    // Let TKE finish its follow-up syncs (status, finalizers) so the measurement starts on a quiet account.
    await quiet(emulator);
    log(`TKE idle after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await emulator.admin.setConfig({ rps: Q });
    // The Enforce phase's counts are everything after this mark: TKE's CLB-creation work before it is not counted.
    await emulator.admin.markStats('enforce');
    const policy = `apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: bulk, namespace: ${ns}}\nspec: {mode: Enforce, revertOnDelete: true, l4: {sourceSwitch: ${SOURCE_SWITCH}}}\n`;
    const tPolicy = Date.now();
    const applied = await kubectl(['apply', '-f', '-'], { input: policy });
    if (applied.code !== 0) throw new Error(applied.stderr);
    const wanted = new Set(lbIds);
    let firstSwitch: number | undefined;
    let mitigated = 0;
    const tDone = await waitFor(
      'every listener switched',
      async () => {
        const state = await emulator.admin.state();
        let switched = 0;
        for (const lb of state.loadBalancers) {
          if (!wanted.has(lb.LoadBalancerId)) continue;
          for (const l of lb.Listeners) if (l.HealthCheck?.SourceIpType === 1) switched++;
        }
        if (switched > 0 && firstSwitch === undefined) firstSwitch = Date.now();
        mitigated = switched;
        return switched >= 2 * N ? Date.now() : undefined;
      },
      { timeoutMs: 900_000, intervalMs: 200 },
    );
    const stats = await emulator.admin.statsSince('enforce');
    const tActual = (tDone - tPolicy) / 1000;
    const tWrite = (tDone - (firstSwitch ?? tPolicy)) / 1000;
    const tMin = (2 * N) / Q;
    const writes = Object.values(stats.listenerWrites);
    const rle = Object.values(stats.errors).reduce((a, e) => a + Object.entries(e).filter(([c]) => c.startsWith('RequestLimitExceeded')).reduce((x, [, v]) => x + v, 0), 0);
    const throttled = Object.values(stats.throttled).reduce((a, b) => a + b, 0);
    log(`T_actual = ${tActual.toFixed(1)} s (policy applied → last of ${2 * N} listeners switched; first switch after ${(((firstSwitch ?? tDone) - tPolicy) / 1000).toFixed(1)} s)`);
    log(`T_min    = N·2/q = ${tMin.toFixed(1)} s`);
    log(`ratio T_min/T_actual = ${(tMin / tActual).toFixed(3)}   (write phase only: T_min/T_write = ${(tMin / tWrite).toFixed(3)}, T_write = ${tWrite.toFixed(1)} s)`);
    log(`RequestLimitExceeded = ${Math.max(rle, throttled)} (throttled by action: ${JSON.stringify(stats.throttled)})`);
    log(`writes per listener: max ${Math.max(...writes)}, mean ${(writes.reduce((a, b) => a + b, 0) / Math.max(1, writes.length)).toFixed(2)} over ${writes.length} listeners`);
    log(`calls by action: ${JSON.stringify(stats.calls)}`);
    // Every action has its own quota q. ModifyListener alone gives T_min, but the busiest action decides: with a
    // read-back per CLB and TKE reading each Service's CLB again when loopguard annotates it, that is usually
    // DescribeListeners. T_floor is the time the busiest action needs at q; T_floor/T_actual shows how close
    // loopguard gets to what the quota allows for the calls this run actually needed.
    const [busiest, busiestCalls] = Object.entries(stats.calls).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
    const tFloor = Math.max(tMin, busiestCalls / Q);
    log(`T_floor  = ${tFloor.toFixed(1)} s (busiest action ${busiest}: ${busiestCalls} calls at q); T_floor/T_actual = ${(tFloor / tActual).toFixed(3)}`);

    // Who made those calls. The phase ends when the last switch is seen (polled every 200 ms), so the read-backs,
    // annotations and TKE re-reads that follow the last few writes are not all in it; the tail is shown apart.
    const phase = summarize(stats);
    log(`CLB calls in the Enforce phase (policy applied → last listener switched), by action × caller:`);
    for (const row of callsTable(phase, mitigated)) log(`  ${row}`);
    const lg = phase.totals['loopguard'] ?? 0;
    const tke = phase.totals['tke'] ?? 0;
    log(`calls per mitigated listener = (loopguard ${lg} + TKE ${tke}) / ${mitigated} listeners = ${perListener(lg + tke, mitigated)} (loopguard ${perListener(lg, mitigated)}, TKE ${perListener(tke, mitigated)})`);
    const failed = failures(stats);
    if (Object.keys(failed).length > 0) log(`calls not answered OK, by caller: ${JSON.stringify(failed)}`);
    const quietFrom = await quiet(emulator);
    const settledStats = await emulator.admin.statsSince('enforce');
    const settled = summarize(settledStats);
    const slg = settled.totals['loopguard'] ?? 0;
    const stke = settled.totals['tke'] ?? 0;
    log(`after the last switch until quiet (~${((quietFrom - tDone) / 1000).toFixed(1)} s): ${JSON.stringify(summarize(diffStats(settledStats, stats)).byCaller)}`);
    log(`calls per mitigated listener until quiet = (loopguard ${slg} + TKE ${stke}) / ${mitigated} = ${perListener(slg + stke, mitigated)} (loopguard ${perListener(slg, mitigated)}, TKE ${perListener(stke, mitigated)})`);

    // Trickle: one Service at a time; reaction = CLB assigned (annotation + listeners) → both listeners on 100.64.
    const reactions: number[] = [];
    for (let i = 0; i < TRICKLE; i++) {
      const name = `trickle-${i}`;
      await core.createNamespacedService({ namespace: ns, body: lbService(name, AT_RISK_L4) });
      const { id, at } = await waitFor(
        `${name} assigned`,
        async () => {
          const s = await core.readNamespacedService({ namespace: ns, name });
          const lbId = s.metadata?.annotations?.[LB_ID];
          if (!lbId) return undefined;
          const lb = await emulator.admin.getLoadBalancer(lbId);
          return lb.Listeners.length >= 2 ? { id: lbId, at: Date.now() } : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 50 },
      );
      const done = await waitFor(
        `${name} switched`,
        async () => {
          const lb = await emulator.admin.getLoadBalancer(id);
          return lb.Listeners.every((l) => l.HealthCheck?.SourceIpType === 1) ? Date.now() : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 50 },
      );
      reactions.push(done - at);
    }
    reactions.sort((a, b) => a - b);
    if (TRICKLE > 0) log(`reaction time (CLB assigned → source switched), ${TRICKLE} single Services: p50 ${pct(reactions, 50)} ms, p99 ${pct(reactions, 99)} ms`);
  } finally {
    await operator.stop();
    await simulator.stop();
    await emulator.close();
    await cluster.stop();
  }
}

runBench(main);
