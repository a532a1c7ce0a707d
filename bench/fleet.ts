// bench/fleet: one account, many clusters. K clusters, each with its own control plane, TKE simulator and loopguard
// (bench/fleet-cluster.ts), all on ONE emulator account whose quota is 20 requests/s per action (tencent-cloud.md
// §3 "Rate limits"); N at-risk Services per cluster (2 listeners each); an Enforce policy applied in all K at once.
// Prints per cluster and in total T_actual against T_min = (ModifyListener calls needed) / quota, the
// RequestLimitExceeded answers by caller (each loopguard, each TKE), TKE's latency for a new Service while idle and
// during the storm, writes per listener, the quota's floor (the busiest action's answered calls at the quota), and ends
// with the `fleet:` line (bench/fleet-figures.ts).
//
//   npm run bench:fleet -- --clusters 3 --n 60     (defaults: --clusters 2 --n 10 --rate-limit 10 --adaptive true
//                                                   --task-ms 50; --adaptive false is loopguard's fixed rate)
import { parseArgs } from 'node:util';
import { startClbEmulator, type StatsSnapshot } from '../sim/clb-emulator/index.js';
import { ensureControlPlaneBinaries } from '../test/controlplane/binaries.js';
import { waitFor } from '../test/support/kube.js';
import { localTkeCallers } from '../test/support/local-tke.js';
import { applyPolicy, startFleetCluster, startFleetOperator, tkeNamespace, tkeServiceLatency, type FleetCluster } from './fleet-cluster.js';
import { answeredByAction, busiestAction, callerCounts, fleetLine, fraction, percentile, QUOTA, countsByAction, demandTimeline, rleTimeline, type TimelinePoint, sumCounts, tMin, type CallerCounts } from './fleet-figures.js';
import { createAtRiskServices, quiet, runBench } from './support.js';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '2' },
    n: { type: 'string', default: '10' },
    'rate-limit': { type: 'string', default: '10' },
    adaptive: { type: 'string', default: 'true' },
    'task-ms': { type: 'string', default: '50' },
  },
});
const K = Number(values.clusters);
const N = Number(values.n);
const RATE = Number(values['rate-limit']);
const ADAPTIVE = values.adaptive;
const TASK_MS = Number(values['task-ms']);
if (!Number.isInteger(K) || K < 1 || !Number.isInteger(N) || N < 1) throw new Error('--clusters and --n must be integers ≥ 1');
if (ADAPTIVE !== 'true' && ADAPTIVE !== 'false') throw new Error(`--adaptive must be true or false, not ${JSON.stringify(ADAPTIVE)}`);
/** Idle TKE latency samples per cluster, taken one at a time before the storm. */
const IDLE_PROBES = 2;

const log = (s: string) => console.log(`[bench:fleet] ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const show = (c: CallerCounts) => `${c.rle}/${c.calls} (${(100 * fraction(c)).toFixed(2)}%)`;

async function main(): Promise<void> {
  const binaries = await ensureControlPlaneBinaries();
  const ids = Array.from({ length: K }, (_, i) => i + 1);
  // Setup runs unthrottled; the quota applies from the idle TKE probes on.
  const emulator = await startClbEmulator({ taskDurationMs: TASK_MS, rps: 0, callers: localTkeCallers(ids.flatMap((i) => [`loopguard-${i}`, `tke-${i}`])) });
  const clusters: FleetCluster[] = [];
  try {
    for (const i of ids) clusters.push(await startFleetCluster(i, binaries, emulator));
    log(`${K} clusters × N=${N} Services × 2 listeners on one account, quota ${QUOTA}/s per action; loopguard --cloud-rate-limit=${RATE} --cloud-rate-adaptive=${ADAPTIVE}; task ${TASK_MS} ms`);
    const work = new Map<FleetCluster, { ns: string; probeNs: string; lbIds: Set<string>; firstAt?: number; doneAt?: number }>();
    await Promise.all(
      clusters.map(async (c) => {
        const ns = await tkeNamespace(c, 'fleet');
        const probeNs = await tkeNamespace(c, 'tke-probe');
        const lbIds = await createAtRiskServices(c.core, emulator, ns, N, log);
        work.set(c, { ns, probeNs, lbIds: new Set(lbIds) });
      }),
    );
    for (const c of clusters) await startFleetOperator(c, emulator, [`--cloud-rate-limit=${RATE}`, `--cloud-rate-adaptive=${ADAPTIVE}`, '--drift-check-interval=10m', '--log-level=warn']);
    await quiet(emulator);
    await emulator.admin.setConfig({ rps: QUOTA });
    const idle: number[] = [];
    for (const c of clusters) for (let p = 0; p < IDLE_PROBES; p++) idle.push(await tkeServiceLatency(c, emulator, work.get(c)?.probeNs ?? '', `idle-${p}`));
    await quiet(emulator);

    await emulator.admin.markStats('enforce');
    const tPolicy = Date.now();
    await Promise.all(clusters.map((c) => applyPolicy(c, work.get(c)?.ns ?? '', 'fleet')));
    // TKE's users keep creating Services during the storm: one per cluster at a time, a second apart.
    const storm: number[] = [];
    let stormOver = false;
    const probing = (async () => {
      for (let k = 0; !stormOver; k++) {
        await Promise.all(clusters.map(async (c) => storm.push(await tkeServiceLatency(c, emulator, work.get(c)?.probeNs ?? '', `storm-${k}`))));
        await sleep(1_000);
      }
    })();
    // Who is throttled when: loopguards' and TKE's RequestLimitExceeded answers, polled every second.
    const lgCallers = clusters.map((c) => c.loopguard);
    const tkeCallers = clusters.map((c) => c.tke);
    const timeline: { lg: TimelinePoint[]; tke: TimelinePoint[] } = { lg: [], tke: [] };
    const sample = async () => {
      const s = await emulator.admin.statsSince('enforce');
      const at = (Date.now() - tPolicy) / 1000;
      timeline.lg.push({ at, counts: countsByAction(s, lgCallers) });
      timeline.tke.push({ at, counts: countsByAction(s, tkeCallers) });
    };
    const sampling = (async () => {
      while (!stormOver) {
        await sample();
        await sleep(1_000);
      }
      await sample();
    })();
    const listeners = 2 * N * K;
    let stats: StatsSnapshot | undefined;
    let converged = true;
    await waitFor(
      'every listener of every cluster switched',
      async () => {
        const state = await emulator.admin.state();
        const switched = new Set(state.loadBalancers.filter((lb) => lb.Listeners.length >= 2 && lb.Listeners.every((l) => l.HealthCheck?.SourceIpType === 1)).map((lb) => lb.LoadBalancerId));
        const started = new Set(state.loadBalancers.filter((lb) => lb.Listeners.some((l) => l.HealthCheck?.SourceIpType === 1)).map((lb) => lb.LoadBalancerId));
        for (const w of work.values()) {
          if (w.firstAt === undefined && [...w.lbIds].some((id) => started.has(id))) w.firstAt = Date.now();
          if (w.doneAt === undefined && [...w.lbIds].every((id) => switched.has(id))) w.doneAt = Date.now();
        }
        if ([...work.values()].some((w) => w.doneAt === undefined)) return undefined;
        stats = await emulator.admin.statsSince('enforce');
        return true;
      },
      { timeoutMs: Math.max(300_000, 20_000 * tMin(listeners)), intervalMs: 250 },
    ).catch((err: unknown) => {
      converged = false;
      log(`not converged: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    });
    stormOver = true;
    stats ??= await emulator.admin.statsSince('enforce');
    await probing;
    await sampling;

    const tDone = Math.max(...[...work.values()].map((w) => w.doneAt ?? NaN));
    const tActual = (tDone - tPolicy) / 1000;
    log(`T_min = ${listeners} ModifyListener / ${QUOTA} per s = ${tMin(listeners).toFixed(1)} s for the fleet (${tMin(2 * N).toFixed(1)} s per cluster alone)`);
    const writesOf = (lbIds: Set<string>) => Object.entries(stats?.listenerWrites ?? {}).filter(([key]) => lbIds.has(key.split('/')[0] ?? '')).map(([, n]) => n);
    for (const c of clusters) {
      const w = work.get(c);
      if (!w) continue;
      const writes = writesOf(w.lbIds);
      const t = w.doneAt === undefined ? NaN : (w.doneAt - tPolicy) / 1000;
      const first = w.firstAt === undefined ? NaN : (w.firstAt - tPolicy) / 1000;
      log(
        `${c.name}: T_actual ${t.toFixed(1)} s (first switch after ${first.toFixed(1)} s); writes per listener max ${Math.max(0, ...writes)} over ${writes.length}/${2 * N}; ` +
          `RequestLimitExceeded ${c.loopguard} ${show(callerCounts(stats, c.loopguard))}, ${c.tke} ${show(callerCounts(stats, c.tke))}`,
      );
    }
    const lg = sumCounts(clusters.map((c) => callerCounts(stats ?? { byCaller: {} }, c.loopguard)));
    const tke = sumCounts(clusters.map((c) => callerCounts(stats ?? { byCaller: {} }, c.tke)));
    const writes = clusters.flatMap((c) => writesOf(work.get(c)?.lbIds ?? new Set()));
    const tFirst = (Math.min(...[...work.values()].map((w) => w.firstAt ?? NaN)) - tPolicy) / 1000;
    // The write phase alone (first switch anywhere → last switch): how close the writes came to the quota, apart from
    // the discovery before them.
    const tWrite = tActual - tFirst;
    log(`total: T_actual ${tActual.toFixed(1)} s, T_min/T_actual ${(tMin(listeners) / tActual).toFixed(3)}; write phase ${tWrite.toFixed(1)} s, T_min/T_write ${(tMin(listeners) / tWrite).toFixed(3)} (${(listeners / tWrite).toFixed(1)} writes/s of ${QUOTA}); ModifyListener ${stats.calls['ModifyListener'] ?? 0} calls for ${listeners} listeners`);
    log(`total: writes per listener max ${Math.max(0, ...writes)}, mean ${(writes.reduce((a, b) => a + b, 0) / Math.max(1, writes.length)).toFixed(2)}`);
    log(`total: RequestLimitExceeded to loopguards ${show(lg)}, to TKE ${show(tke)}; throttled by action ${JSON.stringify(stats.throttled)}`);
    log(`RequestLimitExceeded to loopguards per second: ${rleTimeline(timeline.lg).join('; ') || 'none'}`);
    log(`RequestLimitExceeded to TKE per second: ${rleTimeline(timeline.tke).join('; ') || 'none'}`);
    const demand = demandTimeline(timeline.lg, timeline.tke);
    log(`calls asked in the throttled seconds, by action: ${demand.lines.join('; ') || 'none'}`);
    log(`seconds in which TKE's controllers alone asked more than ${QUOTA}/s of an action: ${demand.tkeOverQuota.seconds} (RequestLimitExceeded to TKE in them: ${demand.tkeOverQuota.tkeRle} of ${tke.rle})`);
    const callers = clusters.flatMap((c) => [c.loopguard, c.tke]);
    const answered = answeredByAction(stats, callers);
    const busiest = busiestAction(answered);
    log(`answered calls by action (loopguards + TKE): ${JSON.stringify(answered)}; loopguards alone: ${JSON.stringify(answeredByAction(stats, clusters.map((c) => c.loopguard)))}`);
    log(`the quota's floor: ${busiest.calls} ${busiest.action} / ${QUOTA} per s = ${busiest.seconds.toFixed(1)} s (T_min counts ModifyListener only: ${tMin(listeners).toFixed(1)} s); floor/T_actual ${(busiest.seconds / tActual).toFixed(3)}, floor/T_write ${(busiest.seconds / tWrite).toFixed(3)}`);
    log(`TKE: new Service → CLB with listeners, idle p50 ${percentile(idle, 50)} ms max ${Math.max(...idle)} ms (${idle.length}); during the storm p50 ${percentile(storm, 50)} ms max ${Math.max(0, ...storm)} ms (${storm.length}); storm/idle p50 ${(percentile(storm, 50) / percentile(idle, 50)).toFixed(2)}`);
    console.log(fleetLine({ clusters: K, listeners, tActual, loopguards: lg, tke, converged, floor: busiest }));
  } finally {
    for (const c of clusters) await c.stop().catch((err: unknown) => log(`stopping ${c.name}: ${String(err)}`));
    await emulator.close();
  }
}

runBench(main);
