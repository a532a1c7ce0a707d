// bench/scale: what a fresh replica costs on a large cluster. One Audit policy selects every Service and Ingress of
// a namespace holding 1,000 LoadBalancer Services (2 ports, half externalTrafficPolicy Local), 9,000 ClusterIP
// Services and 2,000 Ingresses (--scale multiplies the three; CI runs a small one). The workload and the policy
// exist before the operator starts, so the figures are a cold start: time from operator start to `Ready` (every
// target judged), peak and settled RSS and V8 heap of the operator process, the apiserver requests it made (the
// apiserver's audit log, server-side), CLB calls by action and the peak rate against loopguard's share of the
// quota, RequestLimitExceeded answers, and the policy object's size; then `kubectl describe lbp`'s length.
// Run twice, each on a fresh control plane: without CLBs (no TKE: every LoadBalancer Service and Ingress waits
// for one) and with CLBs (the TKE simulator builds them first; during the measurement TKE is idle, as Audit makes
// no change it would react to).
//
// --policy cluster (issue 24 item 7) spreads the same workload over 500 namespaces (times --scale, at least 2;
// --namespaces changes the 500), each labelled for the bench, and applies one Audit ClusterLoopbackPolicy whose
// namespaceSelector matches that label instead of the namespaced LoopbackPolicy. It prints the same figures; its
// goals are Ready < 60 s, status < 512 KiB and an RSS no worse than the namespaced policy's. --policy both runs the
// namespaced policy, then the cluster policy, on a fresh control plane each, and sets their figures side by side.
//
// The LoadBalancer share is sized to the NodePort range (30000-32767, 2,768 ports; TKE keeps the default):
// 1,000 Services × 2 ports + 500 health-check NodePorts of the Local half = 2,500.
//
//   npm run bench:scale                       (full size, both runs; about 25 min on 2 cores)
//   npm run bench:scale -- --scale 0.05 --clbs without|with|both --settle 30s
//   npm run bench:scale -- --scale 0.05 --clbs without --policy namespaced|cluster|both [--namespaces 500] [--reports]
//   (--reports installs the OpenReports CRD first, so the policies also write each namespace's Report)
//   npm run bench:scale -- --scale 0.05 --clbs with --restart
//   (--restart, issue 28 #3: the policy is Enforce and TKE keeps running at its own pace; once every target has
//   converged the operator is restarted and the restart's figures printed: see bench/scale-restart.ts)
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api, type V1Service } from '@kubernetes/client-node';
import { startClbEmulator, type ClbEmulator } from '../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator, type TkeSimulator } from '../sim/tke-simulator/index.js';
import { GROUP, PLURAL, VERSION, type LoopbackPolicy } from '../src/api/loopbackpolicy.js';
import { CLUSTER_PLURAL, type ClusterLoopbackPolicy } from '../src/api/clusterloopbackpolicy.js';
import { REPORT_GROUP, REPORT_NAME, REPORT_PLURAL, REPORT_VERSION } from '../src/model/namespace-report.js';
import { REPO_ROOT } from '../test/controlplane/crds.js';
import { parseDuration } from '../src/runtime/config.js';
import { WaitHopeless, createNamespace, kubeConfig, kubectl, waitFor } from '../test/support/kube.js';
import { localTkeCallers } from '../test/support/local-tke.js';
import { installOperatorRbac, serviceAccountKubeconfig, startOperatorProcess } from '../test/support/operator.js';
import { PRIVATE_INGRESS, PRIVATE_SUBNET, lbIngress, lbService } from '../test/support/workload.js';
import { countRequests, eventWrites, formatCounts } from './apiserver-audit.js';
import { ClbTimeline, isRead } from './clb-timeline.js';
import { MiB, OperatorSampler, mib } from './operator-sampler.js';
import { BENCH_NAMESPACE_LABEL, CLUSTER_NAMESPACES, clusterNamespaceCount, clusterPolicyYaml, comparisonLines, policyKinds, spread, type PolicyKind, type RunFigures } from './scale-figures.js';
import { restartScenario } from './scale-restart.js';
import { benchCluster, buildOperator, checkNodePorts, createAll, nodePortsOf, quiet, runBench } from './support.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    clbs: { type: 'string', default: 'both' },
    settle: { type: 'string', default: '30s' },
    q: { type: 'string', default: '20' },
    'rate-limit': { type: 'string', default: '10' },
    describe: { type: 'string', default: '40' },
    policy: { type: 'string', default: 'namespaced' },
    namespaces: { type: 'string', default: String(CLUSTER_NAMESPACES) },
    reports: { type: 'boolean', default: false },
    restart: { type: 'boolean', default: false },
  },
});
const SCALE = Number(values.scale);
const N_LB = Math.round(1000 * SCALE);
const N_CLUSTER_IP = Math.round(9000 * SCALE);
const N_INGRESS = Math.round(2000 * SCALE);
const TOTAL = N_LB + N_CLUSTER_IP + N_INGRESS;
const SETTLE_MS = parseDuration(values.settle) ?? 30_000;
const Q = Number(values.q);
const RATE = Number(values['rate-limit']);
const DESCRIBE_LINES = Number(values.describe);
const RUNS = values.clbs === 'both' ? ['without', 'with'] : [values.clbs];
const KINDS = policyKinds(values.policy);
const N_NS = clusterNamespaceCount(Number(values.namespaces), SCALE);
const OPENREPORTS_CRD = join(REPO_ROOT, 'test', 'fixtures', 'openreports', 'openreports.io_reports.yaml');
// The issue's goals (figures are printed as ratios against them, never asserted).
const GOAL_RSS = 250 * MiB;
const GOAL_READY_MS = 60_000;
const GOAL_POLICY_BYTES = 512 * 1024;
const LB_ID = 'service.kubernetes.io/loadbalance-id';
const INGRESS_LB_ID = 'kubernetes.io/ingress.qcloud-loadbalance-id';

/**
 * V8's heap as the operator gets it in its pod. Node sizes V8 from the container's memory limit: under any limit up to
 * 512 MiB (the Deployment's is 360Mi) the old generation may reach 256 MiB and a semi-space 1 MiB (heap_size_limit 259
 * MiB; Node 24.21 in memory cgroups of 256, 300, 360 and 512 MiB, and with these two flags outside one). On the bench's
 * host, without a limit, it would be 4,288 MiB, and V8 then lets the old generation grow up to 4x between major
 * collections, against 1.3x at the pod's size (deps/v8/src/heap/heap-controller.cc, MaxGrowingFactor; the allocation
 * limit is also capped halfway to the maximum): the bench measured a host's heap policy, not the pod's
 * (docs/benchmarks.md, issue 40). LOOPGUARD_OPERATOR_V8_FLAGS, when set (even empty), replaces these.
 */
const POD_HEAP_FLAGS = '--max-old-space-size=256 --max-semi-space-size=1';
process.env['LOOPGUARD_OPERATOR_V8_FLAGS'] ??= POD_HEAP_FLAGS;

const log = (s: string) => console.log(`[bench:scale] ${s}`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ratio = (x: number, bound: number) => (x / bound).toFixed(2);

function lbServiceAt(i: number): V1Service {
  return lbService(`lb-${String(i).padStart(5, '0')}`, { annotations: { ...PRIVATE_SUBNET }, etp: i % 2 === 0 ? 'Local' : 'Cluster', ports: [80, 443] });
}

function clusterIpService(i: number): V1Service {
  const name = `cip-${String(i).padStart(5, '0')}`;
  return { metadata: { name, labels: { app: name } }, spec: { type: 'ClusterIP', selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } };
}

/** The policy as the bench reads it: either kind (the fields printed are common to both statuses). */
type BenchPolicy = LoopbackPolicy | ClusterLoopbackPolicy;

async function run(withClbs: boolean, kind: PolicyKind, entry: string): Promise<RunFigures> {
  const isCluster = kind === 'cluster';
  const restart = values.restart === true && withClbs;
  const where = isCluster ? `, in ${N_NS} namespaces under one ClusterLoopbackPolicy` : '';
  log(`--- ${withClbs ? 'with CLBs (TKE simulator on)' : 'without CLBs (TKE simulator off)'}: ${N_LB} LoadBalancer Services, ${N_CLUSTER_IP} ClusterIP Services, ${N_INGRESS} Ingresses = ${TOTAL} targets${where}`);
  const cluster = await benchCluster({ audit: true });
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  // Setup runs unthrottled; the quota q applies from the operator's start on.
  const emulator: ClbEmulator = await startClbEmulator({ taskDurationMs: 50, rps: 0, callers: localTkeCallers() });
  const namespaces = new Set<string>();
  let simulator: TkeSimulator | undefined;
  const stops: Array<() => Promise<unknown>> = [];
  try {
    await applyClusterProfile(kc, 'ipvs-new');
    if (withClbs) {
      const tke = emulator.callers['tke'];
      if (!tke) throw new Error('the emulator has no tke caller');
      // TKE builds the CLBs faster than its real pace (setup, not measured), then stops before the operator starts.
      simulator = await startTkeSimulator({
        kubeConfig: kc,
        clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: tke, protocol: 'http://' },
        namespaceFilter: (n) => namespaces.has(n),
        resyncIntervalMs: 0,
        clbRequestsPerSecond: 500,
        concurrency: 64,
      });
    }
    await installOperatorRbac();
    const operatorKubeconfig = await serviceAccountKubeconfig();
    // The cluster run's namespaces carry a label whose value is this run's, so on an existing cluster the policy
    // selects them and no earlier run's; fixed names let createAll retry a create whose answer was lost.
    const runId = Date.now().toString(36);
    const nsList: string[] = [];
    if (isCluster) {
      const names = Array.from({ length: N_NS }, (_, i) => `bench-scale-${runId}-${String(i).padStart(3, '0')}`);
      await createAll(N_NS, (i) => core.createNamespace({ body: { metadata: { name: names[i] as string, labels: { [BENCH_NAMESPACE_LABEL]: runId } } } }));
      nsList.push(...names);
    } else nsList.push(await createNamespace('bench-scale'));
    for (const n of nsList) namespaces.add(n);
    const nsOf = (i: number) => nsList[spread(i, nsList.length).namespace] as string;
    const backendOf = (i: number) => `cip-${String(spread(i, nsList.length).backend).padStart(5, '0')}`;

    checkNodePorts(Array.from({ length: N_LB }, (_, i) => nodePortsOf(lbServiceAt(i))).reduce((a, b) => a + b, 0), `${N_LB} LoadBalancer Services`);
    const t0 = Date.now();
    await createAll(N_LB, (i) => core.createNamespacedService({ namespace: nsOf(i), body: lbServiceAt(i) }));
    await createAll(N_CLUSTER_IP, (i) => core.createNamespacedService({ namespace: nsOf(i), body: clusterIpService(i) }));
    await createAll(N_INGRESS, (i) =>
      net.createNamespacedIngress({
        namespace: nsOf(i),
        body: lbIngress(`ing-${String(i).padStart(5, '0')}`, { annotations: { ...PRIVATE_INGRESS }, rules: [{ paths: ['/'] }], backend: { name: backendOf(i), port: 80 } }),
      }),
    );
    log(`created ${TOTAL} objects${isCluster ? ` in ${N_NS} namespaces` : ''} in ${secs(Date.now() - t0)} (setup, not measured)`);
    if (values.reports) {
      // OpenReports present: one Report per namespace a policy governs (docs/cluster-policy.md §8).
      const crd = await kubectl(['apply', '--server-side', '--field-manager=loopguard-bench', '-f', OPENREPORTS_CRD]);
      if (crd.code !== 0) throw new Error(crd.stderr);
      const established = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/reports.openreports.io']);
      if (established.code !== 0) throw new Error(established.stderr);
    }
    const policyName = isCluster ? `bench-scale-${runId}` : 'scale';
    const manifest = isCluster
      ? clusterPolicyYaml(policyName, runId)
      : `apiVersion: ${GROUP}/${VERSION}\nkind: LoopbackPolicy\nmetadata: {name: scale, namespace: ${nsList[0]}}\nspec: {mode: ${restart ? 'Enforce' : 'Audit'}}\n`;
    const applied = await kubectl(['apply', '-f', '-'], { input: manifest });
    if (applied.code !== 0) throw new Error(applied.stderr);

    if (simulator) {
      await waitFor(
        'TKE assigned every CLB with its listeners',
        async () => {
          const ours = (o: { metadata?: { namespace?: string } }) => namespaces.has(o.metadata?.namespace ?? '');
          const svcs = (await core.listServiceForAllNamespaces()).items.filter((s) => ours(s) && s.spec?.type === 'LoadBalancer');
          const ings = (await net.listIngressForAllNamespaces()).items.filter(ours);
          const ids = [...svcs.map((s) => s.metadata?.annotations?.[LB_ID]), ...ings.map((i) => i.metadata?.annotations?.[INGRESS_LB_ID])];
          if (ids.some((id) => !id)) return undefined;
          const ready = new Set((await emulator.admin.state()).loadBalancers.filter((lb) => lb.Listeners.length > 0).map((lb) => lb.LoadBalancerId));
          return ids.every((id) => ready.has(id as string)) ? ids.length : undefined;
        },
        { timeoutMs: 3_600_000, intervalMs: 3_000 },
      );
      await quiet(emulator);
      await simulator.stop();
      simulator = undefined;
      log(`TKE built ${N_LB + N_INGRESS} CLBs; setup took ${secs(Date.now() - t0)}`);
      const tke = emulator.callers['tke'];
      // --restart: Enforce needs TKE (prevent-loopback's switch, TkeServiceConfigs, the new Service's CLB), within the
      // quota (15 of its 20/s). Hundreds of Ingresses' configs declared at once take TKE longer than the default 10 s
      // grace period (loopguard would then report the keepalive capability missing), so the operator gets 60 s.
      if (restart && tke) simulator = await startTkeSimulator({ kubeConfig: kc, clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: tke, protocol: 'http://' }, namespaceFilter: (n) => namespaces.has(n), resyncIntervalMs: 0, clbRequestsPerSecond: 15, concurrency: 32 });
    }
    // --restart converges every target under Enforce: the Ingresses' keepalive needs the account's L7 capability.
    if (restart) await emulator.admin.setCapabilities({ l7KeepaliveSnat: true });
    await emulator.admin.setConfig({ rps: Q });
    await emulator.admin.markStats('operator');
    const timeline = await new ClbTimeline(emulator).start();
    stops.push(() => timeline.stop());

    // Cold start: from spawning the process to the policy's Ready=True for its generation, with every target counted.
    const tStart = Date.now();
    const operatorOptions = { kubeconfig: operatorKubeconfig, emulator, entry, extraArgs: [`--cloud-rate-limit=${RATE}`, '--log-level=warn', ...(restart ? ['--tke-grace-period=60s'] : [])] };
    const operator = await startOperatorProcess(operatorOptions);
    stops.push(() => operator.stop());
    const pid = operator.child.pid;
    if (pid === undefined) throw new Error('the operator process has no pid');
    const sampler = new OperatorSampler(pid, `http://127.0.0.1:${operator.port}/metrics`).start();
    stops.push(async () => sampler.stop());
    const tProcessReady = Date.now();
    const read = async (): Promise<BenchPolicy> =>
      isCluster
        ? ((await custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: CLUSTER_PLURAL, name: policyName })) as ClusterLoopbackPolicy)
        : ((await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace: nsList[0] as string, name: policyName })) as LoopbackPolicy);
    const tReady = await waitFor(
      'policy Ready with every target judged',
      async () => {
        // An operator that died (a lost lease on a starved machine) never makes the policy Ready: stop waiting now.
        const { exitCode, signalCode } = operator.child;
        if (exitCode !== null || signalCode !== null) throw new WaitHopeless(`the operator exited (${exitCode ?? signalCode}) before the policy was Ready:\n${operator.logs().slice(-3000)}`);
        const p = await read();
        const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
        return p.status?.observedGeneration === p.metadata.generation && ready?.status === 'True' && p.status?.counts?.total === TOTAL ? Date.now() : undefined;
      },
      { timeoutMs: 3_600_000, intervalMs: 250, context: () => operator.logs().slice(-3000) },
    );
    log(`settling ${secs(SETTLE_MS)} after Ready…`);
    const tSettle = Date.now() + SETTLE_MS / 2;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const tEnd = Date.now();
    sampler.stop();
    await timeline.stop();

    const peak = sampler.peak();
    const settled = sampler.since(tSettle);
    const policy = await read();
    const policyJson = JSON.stringify(policy);
    const statusBytes = JSON.stringify(policy.status ?? {}).length;
    const stats = await emulator.admin.statsSince('operator');
    const lg = stats.byCaller['loopguard'] ?? {};
    const callsByAction = Object.fromEntries(Object.entries(lg).map(([a, o]) => [a, Object.values(o).reduce((x, y) => x + y, 0)]));
    const reads = Object.entries(callsByAction).filter(([a]) => isRead(a)).reduce((x, [, n]) => x + n, 0);
    const rle = Object.values(stats.byCaller).flatMap((actions) => Object.values(actions).flatMap((o) => Object.entries(o))).filter(([k]) => k.startsWith('RequestLimitExceeded')).reduce((x, [, n]) => x + n, 0);
    const peakRate = timeline.peakRate('loopguard', tStart, tEnd);
    const counts = policy.status?.counts;

    log(`time to Ready = ${secs(tReady - tStart)} from process start (readyz after ${secs(tProcessReady - tStart)});  goal < 60 s: ratio ${ratio(tReady - tStart, GOAL_READY_MS)}${withClbs ? ' (the goal is for the run without CLBs)' : ''}`);
    log(`counts: ${JSON.stringify(counts)}; status.targets ${policy.status?.targets?.length ?? 0} shown, targetsTruncated=${policy.status?.targetsTruncated ?? false}`);
    if (isCluster) {
      const st = (policy as ClusterLoopbackPolicy).status;
      const reports = st?.byNamespace?.filter((n) => n.report).length ?? 0;
      log(`namespaces: ${JSON.stringify(st?.namespaces)}; status.byNamespace ${st?.byNamespace?.length ?? 0} shown, byNamespaceTruncated=${st?.byNamespaceTruncated ?? false}; Reports named in it: ${reports}${values.reports ? '' : ' (OpenReports not installed; --reports installs it)'}`);
    }
    if (values.reports) {
      // What each namespace's users read, and together what a LIST of loopguard's Reports (the operator's prune) reads.
      const all = ((await custom.listCustomObjectForAllNamespaces({ group: REPORT_GROUP, version: REPORT_VERSION, resourcePlural: REPORT_PLURAL })) as { items?: { metadata?: { namespace?: string; name?: string } }[] }).items ?? [];
      const sizes = all.filter((r) => r.metadata?.name === REPORT_NAME && namespaces.has(r.metadata.namespace ?? '')).map((r) => JSON.stringify(r).length);
      log(`Reports: ${sizes.length} of ${nsList.length} namespace(s), ${sizes.reduce((x, y) => x + y, 0)} bytes as JSON together, the largest ${Math.max(0, ...sizes)} bytes`);
    }
    log(`RSS peak ${mib(peak.rssBytes)} (goal < 250 MiB: ratio ${ratio(peak.rssBytes, GOAL_RSS)}), settled ${mib(settled.rssBytes)}; heap used peak ${mib(peak.heapUsedBytes)}, settled ${mib(settled.heapUsedBytes)}`);
    if (cluster.auditLog) {
      log(`apiserver requests by the operator, start → Ready: ${formatCounts(countRequests(cluster.auditLog, tStart, tReady))}`);
      log(`apiserver requests by the operator, start → end (${secs(tEnd - tStart)}): ${formatCounts(countRequests(cluster.auditLog, tStart))}`);
      // Issue 28 #4: Events are paced (src/kube/events.ts), so a first round's thousands arrive spread, not as a burst.
      const ev = eventWrites(cluster.auditLog, tStart);
      if (ev.firstMs !== undefined && ev.lastMs !== undefined) {
        const span = ev.lastMs - ev.firstMs;
        log(`Events written (create/patch): ${ev.count} over ${secs(span)} (${(ev.count / Math.max(span / 1000, 1)).toFixed(1)}/s), from ${secs(ev.firstMs - tStart)} to ${secs(ev.lastMs - tStart)} after start (Ready at ${secs(tReady - tStart)})${tEnd - ev.lastMs < 2_000 ? ' (still writing when the run ended: --settle longer for all of them)' : ''}`);
      } else log('Events written (create/patch): none');
    } else log('apiserver requests: not counted (an existing cluster has no audit log of ours)');
    log(`CLB calls by loopguard, by action: ${JSON.stringify(callsByAction)} (reads ${reads}; ${N_LB + N_INGRESS} CLBs ${withClbs ? 'exist' : 'do not exist'})`);
    if (withClbs) {
      // Reading every CLB once takes at least (the busiest action's calls) / the share: the bound for Ready.
      const [busiest, calls] = Object.entries(callsByAction).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
      const tMin = (calls / RATE) * 1000;
      log(`bound for Ready with CLBs: ${calls} ${busiest} calls at ${RATE}/s = ${secs(tMin)}; T_min/T_ready = ${(tMin / (tReady - tStart)).toFixed(2)}`);
    }
    log(`CLB peak rate of one action over 5 s: ${peakRate.rps.toFixed(1)}/s (${peakRate.action}); loopguard's share --cloud-rate-limit=${RATE}/s of the quota ${Q}/s: ratio ${ratio(peakRate.rps, RATE)}`);
    log(`RequestLimitExceeded answers (every caller): ${rle} (goal 0)`);
    if (isCluster) log(`policy object: ${policyJson.length} bytes as JSON; status ${statusBytes} bytes, goal < 512 KiB: ratio ${ratio(statusBytes, GOAL_POLICY_BYTES)}`);
    else log(`policy object: ${policyJson.length} bytes as JSON (status ${statusBytes}); goal < 512 KiB: ratio ${ratio(policyJson.length, GOAL_POLICY_BYTES)}`);
    const short = isCluster ? 'clbp' : 'lbp';
    const describe = await kubectl(isCluster ? ['describe', short, policyName] : ['describe', short, policyName, '-n', nsList[0] as string]);
    const lines = describe.stdout.split('\n');
    log(`kubectl describe ${short}: ${lines.length} lines, ${describe.stdout.length} bytes; the first ${DESCRIBE_LINES}:`);
    for (const line of lines.slice(0, DESCRIBE_LINES)) console.log(`    ${line}`);
    if (restart) {
      const clbs = N_LB + N_INGRESS;
      const next = await restartScenario({ kc, emulator, namespace: nsList[0] as string, total: TOTAL, clbs, driftIntervalMs: 5 * 60_000, operator, start: () => startOperatorProcess(operatorOptions), read, log });
      stops.push(() => next.stop());
    }
    return {
      readyMs: tReady - tStart,
      statusBytes,
      policyBytes: policyJson.length,
      rssPeakBytes: peak.rssBytes,
      rssSettledBytes: settled.rssBytes,
      heapPeakBytes: peak.heapUsedBytes,
      heapSettledBytes: settled.heapUsedBytes,
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await simulator?.stop();
    await emulator.close();
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  for (const mode of RUNS) if (mode !== 'with' && mode !== 'without') throw new Error(`--clbs must be with, without or both, not ${mode}`);
  if (values.restart && (!RUNS.includes('with') || KINDS.includes('cluster'))) throw new Error('--restart needs --clbs with (or both) and --policy namespaced: it restarts an Enforce LoopbackPolicy over built CLBs');
  const entry = await buildOperator();
  log(`operator V8 flags: ${process.env['LOOPGUARD_OPERATOR_V8_FLAGS'] || '(none)'}${process.env['LOOPGUARD_OPERATOR_V8_FLAGS'] === POD_HEAP_FLAGS ? ' (the heap Node gives it under the Deployment\'s memory limit)' : ''}`);
  for (const mode of RUNS) {
    const figures = new Map<PolicyKind, RunFigures>();
    for (const kind of KINDS) figures.set(kind, await run(mode === 'with', kind, entry));
    const namespaced = figures.get('namespaced');
    const clustered = figures.get('cluster');
    if (namespaced && clustered) for (const line of comparisonLines(mode, namespaced, clustered)) log(line);
  }
}

runBench(main);
