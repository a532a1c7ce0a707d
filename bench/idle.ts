// bench/idle: what loopguard costs when nothing changes. N private LoadBalancer Services (externalTrafficPolicy
// Local, one TCP port: 2 NodePorts each, so 1,000 fit the 2,768 of the NodePort range; a larger N widens the test
// apiserver's range, which a TKE cluster would not need for CLBs built otherwise, e.g. by Ingresses) are mitigated by an Enforce
// policy; once converged, a quiet period follows (default 10 min) in which only TKE's periodic resync runs (driven
// by the bench every --tke-resync, the simulator's 30 s default, so each resync's calls can be told apart).
// Prints, for the quiet period:
//   - the operator's apiserver writes (the audit log; the leader Lease's renewals apart, one every 2 s by design);
//   - its Events by reason: all since the policy, those that occurred in the quiet period, and those that occurred
//     before it but were created in it (the Enforce's, still going out at the recorder's pace: src/kube/events.ts);
//   - CLB writes by loopguard and by TKE (goal 0 for both);
//   - loopguard's CLB reads per drift interval against the drift budget of the two tiers (src/controllers/drift-signal.ts):
//     each converged CLB's health twice per interval (DescribeTargetHealth, 30 CLBs a call) and its full re-read
//     (DescribeListeners, DescribeLoadBalancers and DescribeTargetHealth per 20) once per full cycle, the drift
//     interval or longer so that full reads take --drift-full-read-share of --cloud-rate-limit; a histogram of its
//     reads over time (goal: spread out, not a burst every interval);
//   - the steady-state reads per action as a fraction of loopguard's share (--cloud-rate-limit per action);
//   - the work it cost: `quiet: targets planned = P (targets on drifted CLBs = D), status writes = S, report writes
//     = R, events = E (recorded before it: L)` (the operator's loopguard_targets_planned_total; the apiserver's audit
//     log; L: the Enforce's Events the recorder's pace wrote in the quiet period);
//   - with --inject-drift: one random mitigated listener's source put back on the VIP (the emulator's admin API) in
//     the middle of the quiet period, and how long loopguard took to put it back (goal: within one drift interval).
//     TKE then runs as a controller that does not switch sources on prevent-loopback (sim/README.md), so that
//     loopguard, not TKE's resync, is the one that corrects it;
//   - TKE's resyncs: their count and CLB calls, and loopguard's reads during them against outside them (resyncs
//     change nothing on the Services, so they should trigger no read of loopguard's).
// Figures only; no timed assertion.
//
//   npm run bench:idle                         (defaults: --n 1000 --quiet 10m --drift-interval 5m --tke-resync 30s)
//   npm run bench:idle -- --n 20 --quiet 30s --drift-interval 10s --tke-resync 5s      (CI)
//   npm run bench:idle -- --n 3000 --quiet 5m --drift-interval 2m --inject-drift      (issue 28 #6)
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startClbEmulator, type ClbEmulator } from '../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator, type TkeSimulator } from '../sim/tke-simulator/index.js';
import { GROUP, PLURAL, VERSION, type LoopbackPolicy } from '../src/api/loopbackpolicy.js';
import { DEFAULTS, parseDuration } from '../src/runtime/config.js';
import { SIGNALS_PER_INTERVAL, fullIntervalMs } from '../src/controllers/drift-signal.js';
import { MAX_LOAD_BALANCER_IDS, MAX_TARGET_HEALTH_IDS } from '../src/cloud/batching.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../test/support/kube.js';
import { localTkeCallers } from '../test/support/local-tke.js';
import { installOperatorRbac, serviceAccountKubeconfig, startOperatorProcess } from '../test/support/operator.js';
import { PRIVATE_SUBNET } from '../test/support/workload.js';
import { countRequests, formatCounts } from './apiserver-audit.js';
import { ClbTimeline, histogram, isRead } from './clb-timeline.js';
import { NODE_PORTS, benchCluster, buildOperator, createAtRiskServices, quiet, runBench } from './support.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    quiet: { type: 'string', default: '10m' },
    'drift-interval': { type: 'string', default: '5m' },
    'tke-resync': { type: 'string', default: '30s' },
    q: { type: 'string', default: '20' },
    buckets: { type: 'string', default: '10' },
    'cloud-rate-limit': { type: 'string', default: String(DEFAULTS.cloudRateLimit) },
    'drift-full-read-share': { type: 'string', default: String(DEFAULTS.driftFullReadShare) },
    'inject-drift': { type: 'boolean', default: false },
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
const RATE = Number(values['cloud-rate-limit']);
const FULL_SHARE = Number(values['drift-full-read-share']);
const INJECT = values['inject-drift'];
/** NodePorts the Services take (etp Local: a port and a health-check port each); beyond TKE's default range, a wider one. */
const NODE_PORTS_NEEDED = 2 * N;
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
    // --inject-drift: a TKE that leaves the sources to loopguard (and syncs only declared fields), so that the drift is
    // loopguard's to correct (sim/README.md).
    ...(INJECT ? { switchHealthCheckSourceOnPreventLoopback: false, syncScope: 'declared' as const } : {}),
  });
}

async function main(): Promise<void> {
  const entry = await buildOperator();
  const nodePorts = Math.max(NODE_PORTS, NODE_PORTS_NEEDED);
  const cluster = await benchCluster({ audit: true, nodePorts });
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
    log(`N=${N} private LoadBalancer Services (externalTrafficPolicy Local, 1 TCP listener), drift interval ${secs(DRIFT_MS)}, quiet period ${secs(QUIET_MS)}, TKE resync every ${secs(RESYNC_MS)}, quota ${Q}/s per action, loopguard's share ${RATE}/s per action, full re-reads ≤ ${FULL_SHARE} % of it${INJECT ? ', drift injected mid-quiet (TKE leaves sources to loopguard)' : ''}${nodePorts > NODE_PORTS ? `, NodePort range widened to ${nodePorts}` : ''}`);
    const t0 = Date.now();
    const fast = await tkeSimulator(kc, emulator, namespaces, true);
    const lbIds = await createAtRiskServices(core, emulator, ns, N, log, { annotations: { ...PRIVATE_SUBNET }, etp: 'Local', ports: [80] }, nodePorts);
    await quiet(emulator);
    await fast.stop();
    // TKE at its own pace from here on; its first sync reads every CLB once (a TKE restart), before the measurement.
    const simulator = await tkeSimulator(kc, emulator, namespaces, false);
    stops.push(() => simulator.stop());
    // Its first sync reads every CLB at TKE's pace (10/s per action): 300 s for 3,000.
    await quiet(emulator, 3_000, Math.max(300_000, N * 300));
    log(`setup (CLBs built by TKE, TKE restarted at its own pace and idle): ${secs(Date.now() - t0)}`);

    await emulator.admin.setConfig({ rps: Q });
    const operator = await startOperatorProcess({ kubeconfig: operatorKubeconfig, emulator, entry, extraArgs: [`--drift-check-interval=${values['drift-interval']}`, `--cloud-rate-limit=${RATE}`, `--drift-full-read-share=${FULL_SHARE}`, '--log-level=warn'] });
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
    const plannedBefore = await targetsPlanned(operator.port);
    const timeline = await new ClbTimeline(emulator).start();
    stops.push(() => timeline.stop());
    const qStart = Date.now();
    const qEnd = qStart + QUIET_MS;
    const resyncs: Array<{ start: number; end: number }> = [];
    const drift = INJECT ? injectDrift(emulator, lbIds, qStart + QUIET_MS / 2, qEnd) : undefined;
    while (Date.now() < qEnd) {
      const start = Date.now();
      await simulator.resyncNow();
      resyncs.push({ start, end: Date.now() });
      const next = start + RESYNC_MS;
      const wait = Math.min(next, qEnd) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const injected = await drift;
    await timeline.stop();
    const tEnd = Date.now();
    const planned = (await targetsPlanned(operator.port)) - plannedBefore;
    const stats = await emulator.admin.statsSince('quiet');

    // apiserver writes
    if (cluster.auditLog) {
      const requests = countRequests(cluster.auditLog, qStart, tEnd);
      const leaseWrites = Object.entries(requests.byVerb).filter(([k]) => /^(update|create|patch) leases/.test(k)).reduce((a, [, n]) => a + n, 0);
      log(`apiserver requests by the operator in ${secs(tEnd - qStart)}: ${formatCounts(requests)}`);
      log(`apiserver writes by the operator, the leader Lease's renewals apart: ${requests.writes - leaseWrites} (goal 0); Lease renewals ${leaseWrites} (one per 2 s retry period, as client-go's)`);
    }
    // Which Events (each one a write), by reason: those whose occurrence was in the quiet period, and those the
    // apiserver created in it although they occurred before (the Enforce's Events, written at the recorder's pace).
    const ours = (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.source?.component === 'loopguard');
    const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v ?? 0)));
    const occurred = (e: (typeof ours)[number]) => ms(e.lastTimestamp ?? e.eventTime);
    const created = (e: (typeof ours)[number]) => ms(e.metadata?.creationTimestamp);
    const byReason = (events: typeof ours) => {
      const counts = new Map<string, { n: number; example: string }>();
      for (const e of events) {
        const r = counts.get(e.reason ?? '') ?? { n: 0, example: `${e.involvedObject.name}: ${e.message ?? ''}`.slice(0, 200) };
        r.n++;
        counts.set(e.reason ?? '', r);
      }
      return counts;
    };
    const late = ours.filter((e) => occurred(e) < qStart && created(e) >= qStart);
    log(`Events by loopguard since the policy, by reason (a write each, deduplicated ones counted once): ${JSON.stringify(Object.fromEntries([...byReason(ours)].map(([k, r]) => [k, r.n])))}`);
    for (const { what, events } of [
      { what: 'last seen in the quiet period', events: ours.filter((e) => occurred(e) >= qStart) },
      { what: 'created in the quiet period, recorded before it', events: late },
    ]) {
      for (const [reason, r] of byReason(events)) log(`  Events ${reason} (${what}): ${r.n}, e.g. ${r.example}`);
    }
    // The work the quiet period cost (issue 39): targets planned against the targets on CLBs that drifted (the injected
    // drift's CLB has one Service), and loopguard's own status, report and Event writes (the audit log), of which
    // those the Enforce recorded before the quiet period and the recorder's pace wrote in it.
    {
      const requests = cluster.auditLog ? countRequests(cluster.auditLog, qStart, tEnd) : undefined;
      const writes = (re: RegExp) => (requests ? Object.entries(requests.byVerb).filter(([k]) => re.test(k)).reduce((a, [, n]) => a + n, 0) : NaN);
      const drifted = injected ? 1 : 0;
      log(`quiet: targets planned = ${planned} (targets on drifted CLBs = ${drifted}), status writes = ${writes(/^(update|patch|create) loopbackpolicies\/status$/)}, report writes = ${writes(/^(update|patch|create|delete) reports$/)}, events = ${writes(/^(update|patch|create) events$/)} (recorded before it: ${late.length})`);
    }
    // Creation times have whole seconds: a span under one is too short to give a rate.
    const span = late.length > 0 ? Math.max(...late.map(created)) - qStart : 0;
    if (span >= 1_000) log(`  the Enforce's Events still being written: the last ${secs(span)} into the quiet period, ${(late.length / (span / 1000)).toFixed(1)}/s`);
    // CLB writes
    const calls = (caller: string) => Object.fromEntries(Object.entries(stats.byCaller[caller] ?? {}).map(([a, o]) => [a, sum(Object.values(o))]));
    const lg = calls('loopguard');
    const tke = calls('tke');
    const writes = (c: Record<string, number>) => sum(Object.entries(c).filter(([a]) => !isRead(a)).map(([, n]) => n));
    log(`CLB writes: loopguard ${writes(lg)}, TKE ${writes(tke)} (goal 0 for both); ModifyListener calls accepted ${sum(Object.values(stats.listenerWrites))}`);
    log(`CLB calls in the quiet period: loopguard ${JSON.stringify(lg)}; TKE ${JSON.stringify(tke)}`);
    const rle = sum(Object.values(stats.throttled));
    log(`RequestLimitExceeded answers: ${rle}`);

    // reads per drift interval against the drift budget of the two tiers (src/controllers/drift-signal.ts): a CLB's
    // full re-read every full cycle, its health (signal) twice per interval. A full read reads health too, but it
    // falls on a CLB whose health may have just been read: the budget counts no signal read saved by it.
    const fullMs = fullIntervalMs(DRIFT_MS, N, (RATE * FULL_SHARE) / 100);
    const fullReads = (N * DRIFT_MS) / fullMs;
    const fullCalls = fullReads / MAX_LOAD_BALANCER_IDS;
    const budget = {
      DescribeListeners: Math.round(fullReads),
      DescribeLoadBalancers: Math.round(fullCalls),
      DescribeTargetHealth: Math.round(fullCalls + (SIGNALS_PER_INTERVAL * N) / MAX_TARGET_HEALTH_IDS),
    };
    log(
      `drift budget per interval of ${secs(DRIFT_MS)}: each CLB read in full every ${secs(fullMs)} (the interval, or longer so that full reads take ${FULL_SHARE} % of ${RATE}/s) = ${fullReads.toFixed(0)} full reads ` +
        `in calls of ${MAX_LOAD_BALANCER_IDS}, and ${SIGNALS_PER_INTERVAL} health reads per CLB in calls of ${MAX_TARGET_HEALTH_IDS}: ${JSON.stringify(budget)}`,
    );
    const intervals = Math.floor((tEnd - qStart) / DRIFT_MS);
    for (let k = 0; k < intervals; k++) {
      const from = qStart + k * DRIFT_MS;
      const per = Object.fromEntries(Object.keys(budget).map((a) => [a, sum(timeline.buckets('loopguard', from, from + DRIFT_MS, DRIFT_MS, (x) => x === a))]));
      const ratios = Object.entries(budget).map(([a, b]) => `${a} ${per[a]}/${b} = ${((per[a] ?? 0) / b).toFixed(2)}`);
      log(`  interval ${k + 1}: ${ratios.join(', ')}`);
    }
    if (intervals === 0) log('  (the quiet period is shorter than one drift interval: no full interval to count)');
    // Steady state: the quiet period after its first drift interval (the whole of it when that is all there is).
    const from = intervals >= 2 ? qStart + DRIFT_MS : qStart;
    const steadyS = (tEnd - from) / 1000;
    const perAction = Object.keys(budget).map((a) => {
      const rate = sum(timeline.buckets('loopguard', from, tEnd, tEnd - from, (x) => x === a)) / steadyS;
      return `${a} ${rate.toFixed(2)}/s = ${((100 * rate) / RATE).toFixed(1)} %`;
    });
    log(`steady-state reads per action over ${secs(tEnd - from)}, as a share of loopguard's ${RATE}/s per action (goal ≤ 25 %): ${perAction.join(', ')}`);
    if (injected) {
      const by = injected.correctedBy ? ` by ${injected.correctedBy}` : '';
      log(
        injected.correctedAt === undefined
          ? `drift NOT corrected by the end of the quiet period (injected on ${injected.loadBalancerId}/${injected.listenerId} ${secs(tEnd - injected.at)} before it; interval ${secs(DRIFT_MS)})`
          : `drift corrected in ${secs(injected.correctedAt - injected.at)}${by} (interval ${secs(DRIFT_MS)}; ${injected.loadBalancerId}/${injected.listenerId}, its source put back on the bound VIP)`,
      );
    }

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

interface InjectedDrift {
  loadBalancerId: string;
  listenerId: string;
  at: number;
  correctedAt?: number;
  correctedBy?: string;
}

/** At `at`, puts a random CLB's listener source back on the VIP, and waits (until `until`) for it to be put back. */
/** The operator's loopguard_targets_planned_total (its /metrics). */
async function targetsPlanned(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('loopguard_targets_planned_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function injectDrift(emulator: ClbEmulator, lbIds: readonly string[], at: number, until: number): Promise<InjectedDrift> {
  await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
  const loadBalancerId = lbIds[Math.floor(Math.random() * lbIds.length)] as string;
  const listenerId = (await emulator.admin.getLoadBalancer(loadBalancerId)).Listeners[0]?.ListenerId ?? '';
  const seq = (await emulator.admin.writes()).at(-1)?.seq ?? 0;
  const drift: InjectedDrift = { loadBalancerId, listenerId, at: Date.now() };
  await emulator.admin.patchListener(loadBalancerId, listenerId, { HealthCheck: { SourceIpType: 0 } });
  log(`drift injected: ${loadBalancerId}/${listenerId} back on the VIP`);
  while (Date.now() < until) {
    const l = (await emulator.admin.getLoadBalancer(loadBalancerId)).Listeners.find((x) => x.ListenerId === listenerId);
    if (l?.HealthCheck?.SourceIpType === 1) {
      drift.correctedAt = Date.now();
      const w = (await emulator.admin.writes(seq)).filter((x) => x.loadBalancerId === loadBalancerId && x.listenerId === listenerId).at(-1);
      if (w) drift.correctedBy = w.caller;
      return drift;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return drift;
}

runBench(main);
