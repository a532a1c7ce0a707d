// bench/idle: what loopguard costs when nothing changes. N private LoadBalancer Services (externalTrafficPolicy
// Local, one TCP port: 2 NodePorts each, so 1,000 fit the 2,768 of the NodePort range) are mitigated by an Enforce
// policy; once converged, a quiet period follows (default 10 min) in which only TKE's periodic resync runs (driven
// by the bench every --tke-resync, the simulator's 30 s default, so each resync's calls can be told apart).
// Prints, for the quiet period:
//   - the operator's apiserver writes (the audit log; the leader Lease's renewals apart, one every 2 s by design);
//   - CLB writes by loopguard and by TKE (goal 0 for both);
//   - loopguard's CLB reads per drift interval against the drift budget (each converged CLB read once per interval:
//     N DescribeListeners, N/20 DescribeLoadBalancers and DescribeTargetHealth), and a histogram of its reads over
//     time (goal: spread out at N/interval per second, not a burst every interval);
//   - TKE's resyncs: their count and CLB calls, and loopguard's reads during them against outside them (resyncs
//     change nothing on the Services, so they should trigger no read of loopguard's).
// Figures only; no timed assertion.
//
//   npm run bench:idle                         (defaults: --n 1000 --quiet 10m --drift-interval 5m --tke-resync 30s)
//   npm run bench:idle -- --n 20 --quiet 30s --drift-interval 10s --tke-resync 5s      (CI)
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startClbEmulator, type ClbEmulator } from '../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator, type TkeSimulator } from '../sim/tke-simulator/index.js';
import { GROUP, PLURAL, VERSION, type LoopbackPolicy } from '../src/api/loopbackpolicy.js';
import { parseDuration } from '../src/runtime/config.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../test/support/kube.js';
import { localTkeCallers } from '../test/support/local-tke.js';
import { installOperatorRbac, serviceAccountKubeconfig, startOperatorProcess } from '../test/support/operator.js';
import { PRIVATE_SUBNET } from '../test/support/workload.js';
import { countRequests, formatCounts } from './apiserver-audit.js';
import { ClbTimeline, histogram, isRead } from './clb-timeline.js';
import { benchCluster, buildOperator, createAtRiskServices, quiet, runBench } from './support.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    quiet: { type: 'string', default: '10m' },
    'drift-interval': { type: 'string', default: '5m' },
    'tke-resync': { type: 'string', default: '30s' },
    q: { type: 'string', default: '20' },
    buckets: { type: 'string', default: '10' },
  },
});
const N = Number(values.n);
const duration = (text: string, flag: string) => {
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`--${flag}: not a duration: ${text}`);
  return ms;
};
const QUIET_MS = duration(values.quiet, 'quiet');
const DRIFT_MS = duration(values['drift-interval'], 'drift-interval');
const RESYNC_MS = duration(values['tke-resync'], 'tke-resync');
const Q = Number(values.q);
const BUCKETS_PER_INTERVAL = Number(values.buckets);
const log = (s: string) => console.log(`[bench:idle] ${s}`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function tkeSimulator(kc: ReturnType<typeof kubeConfig>, emulator: ClbEmulator, namespaces: Set<string>, fast: boolean): Promise<TkeSimulator> {
  const tke = emulator.callers['tke'];
  if (!tke) throw new Error('the emulator has no tke caller');
  return startTkeSimulator({
    kubeConfig: kc,
    clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: tke, protocol: 'http://' },
    namespaceFilter: (n) => namespaces.has(n),
    // The bench drives TKE's resyncs itself (resyncNow) to time each one.
    resyncIntervalMs: 0,
    // Setup builds the CLBs faster than TKE's real pace (10/s per action, half the quota); the measured part runs at it.
    ...(fast ? { clbRequestsPerSecond: 500, concurrency: 64 } : { concurrency: 32 }),
  });
}

async function main(): Promise<void> {
  const entry = buildOperator();
  const cluster = await benchCluster({ audit: true });
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const emulator = await startClbEmulator({ taskDurationMs: 50, rps: 0, callers: localTkeCallers() });
  const namespaces = new Set<string>();
  const stops: Array<() => Promise<unknown>> = [];
  try {
    await applyClusterProfile(kc, 'ipvs-new');
    await installOperatorRbac();
    const operatorKubeconfig = await serviceAccountKubeconfig();
    const ns = await createNamespace('bench-idle');
    namespaces.add(ns);
    log(`N=${N} private LoadBalancer Services (externalTrafficPolicy Local, 1 TCP listener), drift interval ${secs(DRIFT_MS)}, quiet period ${secs(QUIET_MS)}, TKE resync every ${secs(RESYNC_MS)}, quota ${Q}/s per action`);
    const t0 = Date.now();
    const fast = await tkeSimulator(kc, emulator, namespaces, true);
    const lbIds = await createAtRiskServices(core, emulator, ns, N, log, { annotations: { ...PRIVATE_SUBNET }, etp: 'Local', ports: [80] });
    await quiet(emulator);
    await fast.stop();
    // TKE at its own pace from here on; its first sync reads every CLB once (a TKE restart), before the measurement.
    const simulator = await tkeSimulator(kc, emulator, namespaces, false);
    stops.push(() => simulator.stop());
    await quiet(emulator);
    log(`setup (CLBs built by TKE, TKE restarted at its own pace and idle): ${secs(Date.now() - t0)}`);

    await emulator.admin.setConfig({ rps: Q });
    const operator = await startOperatorProcess({ kubeconfig: operatorKubeconfig, emulator, entry, extraArgs: [`--drift-check-interval=${values['drift-interval']}`, '--log-level=warn'] });
    stops.push(() => operator.stop());
    const tPolicy = Date.now();
    const applied = await kubectl(['apply', '-f', '-'], { input: `apiVersion: ${GROUP}/${VERSION}\nkind: LoopbackPolicy\nmetadata: {name: idle, namespace: ${ns}}\nspec: {mode: Enforce, revertOnDelete: true}\n` });
    if (applied.code !== 0) throw new Error(applied.stderr);
    const wanted = new Set(lbIds);
    await waitFor(
      'every target Mitigated, policy Ready',
      async () => {
        const p = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace: ns, name: 'idle' })) as LoopbackPolicy;
        if (p.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True' || p.status?.counts?.mitigated !== N) return undefined;
        const switched = (await emulator.admin.state()).loadBalancers.filter((lb) => wanted.has(lb.LoadBalancerId) && lb.Listeners.every((l) => l.HealthCheck?.SourceIpType === 1));
        return switched.length === N ? true : undefined;
      },
      { timeoutMs: 3_600_000, intervalMs: 1_000, context: () => operator.logs().slice(-3000) },
    );
    // TKE answers loopguard's annotations with reads; let it finish (loopguard's drift reads go on: they are measured).
    await waitFor('TKE idle', async () => {
      const before = sum(Object.values((await emulator.admin.stats()).byCaller['tke'] ?? {}).flatMap((o) => Object.values(o)));
      await new Promise((r) => setTimeout(r, 3_000));
      const after = sum(Object.values((await emulator.admin.stats()).byCaller['tke'] ?? {}).flatMap((o) => Object.values(o)));
      return after === before ? true : undefined;
    }, { timeoutMs: 600_000, intervalMs: 0 });
    log(`converged: ${N} targets Mitigated ${secs(Date.now() - tPolicy)} after the policy`);

    // --- the quiet period
    await emulator.admin.markStats('quiet');
    const timeline = await new ClbTimeline(emulator).start();
    stops.push(() => timeline.stop());
    const qStart = Date.now();
    const qEnd = qStart + QUIET_MS;
    const resyncs: Array<{ start: number; end: number }> = [];
    while (Date.now() < qEnd) {
      const start = Date.now();
      await simulator.resyncNow();
      resyncs.push({ start, end: Date.now() });
      const next = start + RESYNC_MS;
      const wait = Math.min(next, qEnd) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await timeline.stop();
    const tEnd = Date.now();
    const stats = await emulator.admin.statsSince('quiet');

    // apiserver writes
    if (cluster.auditLog) {
      const requests = countRequests(cluster.auditLog, qStart, tEnd);
      const leaseWrites = Object.entries(requests.byVerb).filter(([k]) => /^(update|create|patch) leases/.test(k)).reduce((a, [, n]) => a + n, 0);
      log(`apiserver requests by the operator in ${secs(tEnd - qStart)}: ${formatCounts(requests)}`);
      log(`apiserver writes by the operator, the leader Lease's renewals apart: ${requests.writes - leaseWrites} (goal 0); Lease renewals ${leaseWrites} (one per 2 s retry period, as client-go's)`);
    }
    // Which Events, if any (each one a write): by reason, with one message.
    const events = (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.source?.component === 'loopguard' && Date.parse(String(e.lastTimestamp ?? e.eventTime ?? 0)) >= qStart);
    const byReason = new Map<string, { n: number; example: string }>();
    for (const e of events) {
      const r = byReason.get(e.reason ?? '') ?? { n: 0, example: `${e.involvedObject.name}: ${e.message ?? ''}`.slice(0, 200) };
      r.n++;
      byReason.set(e.reason ?? '', r);
    }
    for (const [reason, r] of byReason) log(`  Events ${reason} (last seen in the quiet period): ${r.n}, e.g. ${r.example}`);
    // CLB writes
    const calls = (caller: string) => Object.fromEntries(Object.entries(stats.byCaller[caller] ?? {}).map(([a, o]) => [a, sum(Object.values(o))]));
    const lg = calls('loopguard');
    const tke = calls('tke');
    const writes = (c: Record<string, number>) => sum(Object.entries(c).filter(([a]) => !isRead(a)).map(([, n]) => n));
    log(`CLB writes: loopguard ${writes(lg)}, TKE ${writes(tke)} (goal 0 for both); ModifyListener calls accepted ${sum(Object.values(stats.listenerWrites))}`);
    log(`CLB calls in the quiet period: loopguard ${JSON.stringify(lg)}; TKE ${JSON.stringify(tke)}`);
    const rle = sum(Object.values(stats.throttled));
    log(`RequestLimitExceeded answers: ${rle}`);

    // reads per drift interval against the drift budget
    const budget = { DescribeListeners: N, DescribeLoadBalancers: Math.ceil(N / 20), DescribeTargetHealth: Math.ceil(N / 20) };
    log(`drift budget per interval of ${secs(DRIFT_MS)} (every converged CLB read once): ${JSON.stringify(budget)}`);
    const intervals = Math.floor((tEnd - qStart) / DRIFT_MS);
    for (let k = 0; k < intervals; k++) {
      const from = qStart + k * DRIFT_MS;
      const per = Object.fromEntries(Object.keys(budget).map((a) => [a, sum(timeline.buckets('loopguard', from, from + DRIFT_MS, DRIFT_MS, (x) => x === a))]));
      const ratios = Object.entries(budget).map(([a, b]) => `${a} ${per[a]}/${b} = ${((per[a] ?? 0) / b).toFixed(2)}`);
      log(`  interval ${k + 1}: ${ratios.join(', ')}`);
    }
    if (intervals === 0) log('  (the quiet period is shorter than one drift interval: no full interval to count)');

    // the histogram of loopguard's reads
    const bucketMs = Math.max(1_000, Math.round(DRIFT_MS / BUCKETS_PER_INTERVAL));
    const buckets = timeline.buckets('loopguard', qStart, tEnd, bucketMs);
    const full = buckets.slice(0, Math.floor((tEnd - qStart) / bucketMs));
    const mean = full.length > 0 ? sum(full) / full.length : 0;
    log(`loopguard's CLB reads over the quiet period, per ${secs(bucketMs)} (even spread: ${((bucketMs / DRIFT_MS) * (budget.DescribeListeners + budget.DescribeLoadBalancers + budget.DescribeTargetHealth)).toFixed(1)} per bucket):`);
    for (const line of histogram(buckets, bucketMs)) console.log(`    ${line}`);
    log(`burstiness: busiest bucket / mean = ${mean > 0 ? (Math.max(...full) / mean).toFixed(2) : 'n/a'} (1.00 = perfectly even); peak rate ${timeline.peakRate('loopguard', qStart, tEnd).rps.toFixed(1)}/s over 5 s`);

    // TKE resyncs
    const inResync = (at: number) => resyncs.some((r) => at >= r.start && at < r.end + 1_000);
    let readsIn = 0;
    let readsOut = 0;
    let msIn = 0;
    for (const p of timeline.points) {
      if (p.at < qStart) continue;
      const n = sum(Object.entries(p.delta['loopguard'] ?? {}).filter(([a]) => isRead(a)).map(([, c]) => c));
      if (inResync(p.at)) readsIn += n;
      else readsOut += n;
    }
    for (const r of resyncs) msIn += r.end - r.start + 1_000;
    const msOut = Math.max(1, tEnd - qStart - msIn);
    const tkeReads = sum(Object.entries(tke).filter(([a]) => isRead(a)).map(([, n]) => n));
    log(`TKE resyncs: ${resyncs.length}, each ${secs(sum(resyncs.map((r) => r.end - r.start)) / Math.max(1, resyncs.length))} on average; TKE's CLB reads ${tkeReads} (${(tkeReads / Math.max(1, resyncs.length)).toFixed(0)} per resync)`);
    // Rounds a resync could trigger would read more than the budget: reads beyond it are what anything else caused.
    const lgReads = sum(Object.entries(lg).filter(([a]) => isRead(a)).map(([, n]) => n));
    const expected = ((tEnd - qStart) / DRIFT_MS) * (budget.DescribeListeners + budget.DescribeLoadBalancers + budget.DescribeTargetHealth);
    log(`loopguard's reads: ${lgReads} in ${secs(tEnd - qStart)}, the drift budget for that time ${expected.toFixed(0)}: beyond it ${Math.max(0, lgReads - expected).toFixed(0)} (what TKE's resyncs or anything else triggered; ± one batch of 20 at the edges)`);
    log(`loopguard's read rate during TKE resyncs ${(readsIn / Math.max(1, msIn / 1000)).toFixed(2)}/s, outside them ${(readsOut / (msOut / 1000)).toFixed(2)}/s`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await emulator.close();
    await cluster.stop();
  }
}

runBench(main);
