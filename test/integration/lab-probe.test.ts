// Issue 41's acceptance in real kernels: loopguard's probe agent (src/probe, run by the lab in every lab node's pod)
// measures the data-plane lab's L4 CLB, and the operator reads what it measured from the test apiserver.
// - The Service's CLB in the emulator has the lab's VIP (10.0.0.100, asked through extensiveParameters' `Vip` as a
//   user would): the operator's plan names it, the lab's agents run that plan, and their reports are written to the
//   apiserver as the DaemonSet's agents write them (one per node, planVersion = the plan's resourceVersion).
// - The lab follows what loopguard writes as TKE and kube-proxy would: the CLB's health-check source is the
//   listener's `SourceIpType` (the lab's checker reads it through the emulator, lab/health-oracle.ts), and the VIP
//   is bound on the nodes' kube-ipvs0 when TKE's model says kube-proxy binds it (prevent-loopback: lab/kube-proxy.ts).
// - Audit: measured failures. Enforce: measured since Enforce, 0 failed. The binding then undone on one node behind
//   loopguard's back: the target it calls Mitigated measures failures again, named with the node, as a condition and
//   a Warning Event; loopguard writes nothing for it.
// - L7: an Ingress at the same VIP (once the Service gave it back) on the lab's L7 proxy: ~4 s stalls in Audit, none
//   since Enforce, once the lab's L7 CLB takes the SNAT/keepalive TKE set on its listener.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import type { LoopbackPolicy } from '../../src/api/loopbackpolicy.js';
import type { ProbePlan, ProbeReport } from '../../src/api/probe.js';
import { L4_PORT, L7_PORT, VIP } from '../../lab/addresses.js';
import { labHealthOracle, type LabHealthOracle } from '../../lab/health-oracle.js';
import { LabKubeProxy } from '../../lab/kube-proxy.js';
import { Lab } from '../../lab/lab.js';
import { L7_HOST, tally, type ProbeTally } from '../../lab/probe.js';
import { holdForSuite } from '../support/exclusive.js';
import { createNamespace, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE } from '../support/operator.js';
import { applyPolicy, policyManifest, reportedStatus, waitForCondition, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { lbIngress, lbService, PRIVATE_INGRESS, PRIVATE_SUBNET } from '../support/workload.js';

// The lab's namespaces, links and nft tables are the machine's: one lab suite at a time (exclusive.ts).
holdForSuite('lab');

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const EXTENSIVE = 'service.kubernetes.io/service.extensiveParameters';
const INGRESS_LB_ID = 'kubernetes.io/ingress.qcloud-loadbalance-id';
const INGRESS_EXTENSIVE = 'kubernetes.io/ingress.extensiveParameters';
/** The plan's window (the operator's --probe-window; the agents' --min-window-seconds): short, and a report stays fresh for two. */
const WINDOW_SECONDS = 15;
const NODES = ['node1', 'node2', 'node3'];

async function must(args: string[], input?: string): Promise<string> {
  const res = await kubectl(args, input === undefined ? {} : { input });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

/** The plan ConfigMap as the agents read it: its plan.json text and resourceVersion. */
async function planConfigMap(): Promise<{ text: string; plan: ProbePlan; version: string } | undefined> {
  const res = await kubectl(['get', 'configmap', 'loopguard-probe-plan', '-n', OPERATOR_NAMESPACE, '-o', 'json']);
  if (res.code !== 0) return undefined;
  const cm = JSON.parse(res.stdout) as { data?: Record<string, string>; metadata: { resourceVersion: string } };
  const text = cm.data?.['plan.json'] ?? '{}';
  return { text, plan: JSON.parse(text) as ProbePlan, version: cm.metadata.resourceVersion };
}

/** "12/40 failed, 12 stalled from node2; p99 " as docs/probe.md §11.3 writes a target's figures (p99 left to the caller). */
const figures = (t: ProbeTally) => `${t.failures}/${t.probes} failed${t.stalls > 0 ? `, ${t.stalls} stalled` : ''}${t.nodes.length > 0 ? ` from ${t.nodes.join(', ')}` : ''}; p99 `;
/** The MeasuredLoopback Events on the object `web` (the Service, or the Ingress). */
async function measuredEvents(ns: string): Promise<{ type: string; message: string }[]> {
  return (JSON.parse(await must(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=web,reason=MeasuredLoopback', '-o', 'json'])) as { items: { type: string; message: string }[] }).items;
}

const measuredLine = (describe: string) => /\n +Measured: +(.*)\n/.exec(describe)?.[1] ?? '';
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('the probe in real kernels, read by the operator (issue 41)', () => {
  let lab: Lab;
  let oracle: LabHealthOracle;
  let kubeProxy: LabKubeProxy;
  let tke: LocalTke;
  /** The L4 case's Service, which holds the lab's one VIP until the L7 case gives it back. */
  let l4Service: { namespace: string; name: string } | undefined;

  beforeAll(async () => {
    // A plan or reports another suite of this control plane left would be judged too.
    await kubectl(['delete', 'configmap', 'loopguard-probe-plan', '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    await kubectl(['delete', 'loopbackprobereports', ...NODES, '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    lab = await Lab.start({ nodes: 3 });
    oracle = labHealthOracle(lab, { refreshMs: 500 });
    tke = await startLocalTke({
      emulator: { targetHealth: oracle.source },
      vips: (emulator) =>
        (kubeProxy = new LabKubeProxy(lab, {
          next: { setVipBound: async (id, bound) => void (await emulator.admin.setVipBound(id, bound)) },
          vipsOf: async (id) => (await emulator.admin.getLoadBalancer(id)).LoadBalancerVips,
        })),
      operator: { extraArgs: ['--drift-check-interval=2s', '--tke-grace-period=3s', `--probe-window=${WINDOW_SECONDS}s`] },
    });
  });

  afterAll(async () => {
    await kubectl(['delete', 'loopbackprobereports', ...NODES, '-n', OPERATOR_NAMESPACE, '--ignore-not-found']);
    await tke?.stop();
    oracle?.stop();
    await lab?.stop();
  });

  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;

  /**
   * One window of the agents in every lab node's pod, with the operator's plan as the ConfigMap holds it; each
   * node's report written to loopguard's namespace as its DaemonSet pod would write it.
   */
  async function probeWindow(): Promise<ProbeReport[]> {
    const cm = await planConfigMap();
    if (!cm) throw new Error('no probe plan');
    const reports = await lab.probeWindow({
      planText: cm.text,
      planVersion: cm.version,
      namespace: OPERATOR_NAMESPACE,
      ratePerSecond: 20,
      minIntervalSeconds: 0.1,
      minWindowSeconds: WINDOW_SECONDS,
    });
    for (const r of reports) await must(['apply', '-f', '-'], JSON.stringify(r));
    return reports;
  }

  it('measures the loopback before Enforce, none after, and a contradiction when the fix is undone behind its back', async () => {
    const ns = await createNamespace('lab-probe');
    tke.namespaces.add(ns);
    const core = tke.kc.makeApiClient(CoreV1Api);
    // ETP Local in IPVS: AtRisk (the pod's source reaches the CLB unmasqueraded). Port 81: the lab's L4 listener.
    await core.createNamespacedService({
      namespace: ns,
      body: lbService('web', { annotations: { ...PRIVATE_SUBNET, [EXTENSIVE]: JSON.stringify({ Vip: VIP }) }, etp: 'Local', ports: [[L4_PORT, 'TCP']] }),
    });
    const svc = await waitFor('the Service with its CLB at the lab VIP', async () => {
      const s = await core.readNamespacedService({ namespace: ns, name: 'web' });
      return s.metadata?.annotations?.[LB_ID] && s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
    });
    const lbId = svc.metadata!.annotations![LB_ID]!;
    l4Service = { namespace: ns, name: 'web' };
    expect(svc.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual([VIP]);
    expect((await tke.emulator.admin.getLoadBalancer(lbId)).LoadBalancerVips).toEqual([VIP]);

    // (1) Audit, probing: the operator's plan names the Service's VIP and TCP port.
    const ref: PolicyRef = { namespace: ns, name: 'probed' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Audit', probe: { enabled: true } }))).stderr).toBe('');
    const id = `Service/${ns}/web:${L4_PORT}`;
    const written = await waitFor('the probe plan naming the Service', async () => {
      const cm = await planConfigMap();
      return cm?.plan.targets.some((t) => t.id === id) ? cm : undefined;
    }, { timeoutMs: 60_000, context: logs });
    // Other suites' probing policies on this control plane may add their own targets; ours is there once, at the lab's VIP.
    expect(written.plan.targets.filter((t) => t.id.startsWith(`Service/${ns}/`))).toEqual([{ id, vip: VIP, port: L4_PORT, protocol: 'TCP' }]);
    expect(written.plan.windowSeconds).toBe(WINDOW_SECONDS);
    const measured = (p: LoopbackPolicy) => reportedStatus(p).targets.find((t) => t.name === 'web')?.measured;
    expect(reportedStatus(await waitForPolicy(ref, 'web AtRisk', (p) => reportedStatus(p).targets.some((t) => t.name === 'web' && t.verdict === 'AtRisk'), { timeoutMs: 30_000, context: logs })).targets).toHaveLength(1);
    expect(kubeProxy.bound).toBe(false);

    const before = tally(await probeWindow(), id);
    // Each node's pod loops when the CLB picks its own node (docs/lab.md (b)): failures from every node, not all.
    expect(before.failures).toBeGreaterThan(0);
    expect(before.failures).toBeLessThan(before.probes);
    expect(before.notRun).toBe(0);
    expect(before.nodes).toEqual(NODES);
    const described = await waitFor('kubectl describe lbp showing what was measured before Enforce', () => must(['describe', 'lbp', ref.name, '-n', ns]), {
      until: (out) => out.includes(`measured: ${before.failures}/${before.probes} failed`),
      timeoutMs: 30_000,
      context: logs,
    });
    expect(described).toMatch(new RegExp(`\\n +Measured: +measured: ${escape(figures(before))}\\d[\\d.]* m?s\\n`));

    // (2) Enforce: loopguard switches the check source to 100.64 and adds prevent-loopback; TKE's kube-proxy model
    // binds the VIP, and the lab's kube-proxy binds it on every lab node.
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', probe: { enabled: true } }))).stderr).toBe('');
    await waitForPolicy(ref, 'web Mitigated', (p) => reportedStatus(p).targets.find((t) => t.name === 'web')?.verdict === 'Mitigated', { timeoutMs: 60_000, context: logs });
    expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[PREVENT]).toBe('true');
    expect((await tke.emulator.admin.getLoadBalancer(lbId)).Listeners.map((l) => l.HealthCheck?.SourceIpType)).toEqual([1]);
    await waitFor('the lab kube-proxy binding the VIP', () => kubeProxy.bound, { until: (b) => b, timeoutMs: 20_000 });

    const after = tally(await probeWindow(), id);
    expect(after).toMatchObject({ failures: 0, stalls: 0, notRun: 0, nodes: [] });
    expect(after.probes).toBeGreaterThan(0);
    const enforced = await waitFor('kubectl describe lbp showing what was measured since Enforce', () => must(['describe', 'lbp', ref.name, '-n', ns]), {
      until: (out) => out.includes(`measured since Enforce: 0/${after.probes} failed`),
      timeoutMs: 30_000,
      context: logs,
    });
    expect(enforced).toMatch(new RegExp(`\\n +Measured: +measured since Enforce: 0/${after.probes} failed; p99 \\d[\\d.]* m?s\\n`));
    await waitForCondition(ref, 'MeasuredLoopback', { status: 'False', reason: 'MeasuredAsModelled' });
    // The Audit window's failures, still fresh when the verdict turned Mitigated, measured the loop before the fix:
    // no contradiction, no Event (docs/probe.md §11.2).
    expect(await measuredEvents(ns)).toEqual([]);

    // (3) The binding undone on node2 behind loopguard's back: the Service still asks, the emulator still calls the
    // VIP bound and the check source 100.64, so the model still says Mitigated. node2's pod loops again.
    const annotations = (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations ?? {};
    const listeners = (await tke.emulator.admin.getLoadBalancer(lbId)).Listeners;
    const writesBefore = (await tke.emulator.admin.writes()).length;
    expect(await kubeProxy.withdraw([1])).toEqual(['node2']);

    const undone = tally(await probeWindow(), id);
    expect(undone.failures).toBeGreaterThan(0);
    expect(undone.nodes).toEqual(['node2']);
    // A node's report routes a round only when it changes the target's state (docs/probe.md §11.2): node2's does,
    // node1's and node3's (clean, as before) are shown by the next round. So wait for all three in the figures.
    const contradiction = new RegExp(`^measured failures or stalls where loopguard finds no loopback: Service/${ns}/web \\(Mitigated\\): ${escape(figures(undone))}\\d[\\d.]* m?s$`);
    const line = new RegExp(`^contradicts Mitigated: measured ${escape(figures(undone))}\\d[\\d.]* m?s; measured since Enforce: ${undone.failures}/${after.probes + undone.probes} failed`);
    const condition = (p: LoopbackPolicy) => p.status?.conditions?.find((c) => c.type === 'MeasuredLoopback');
    const now = await waitForPolicy(ref, 'the contradiction over all three nodes', (p) => condition(p)?.status === 'True' && contradiction.test(condition(p)?.message ?? '') && line.test(measured(p) ?? ''), { timeoutMs: 30_000, context: logs });
    expect(condition(now)).toMatchObject({ status: 'True', reason: 'LoopbackMeasured' });
    expect(reportedStatus(now).targets.find((t) => t.name === 'web')?.verdict).toBe('Mitigated');
    const warning = await waitFor('the MeasuredLoopback Warning Event on the Service', async () => (await measuredEvents(ns)).find((e) => e.type === 'Warning' && e.message.includes('loopguard calls this Service Mitigated')));
    // Sent when node2's report showed the contradiction; node3's may not have been in yet.
    expect(warning.message).toMatch(new RegExp(`but the probe measured ${undone.failures}/\\d+ failed, ${undone.stalls} stalled from node2; p99 `));
    expect(await must(['describe', 'lbp', ref.name, '-n', ns])).toMatch(/\n +Measured: +contradicts Mitigated: measured /);

    // Words only: nothing more was written to the Service or its CLB.
    expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations).toEqual(annotations);
    expect((await tke.emulator.admin.getLoadBalancer(lbId)).Listeners).toEqual(listeners);
    expect((await tke.emulator.admin.writes()).slice(writesBefore)).toEqual([]);
    expect(kubeProxy.bound).toBe(true);
    // The figures docs/lab.md quotes.
    console.log(`[lab-probe] Audit: ${measuredLine(described)}\n[lab-probe] Enforce: ${measuredLine(enforced)}\n[lab-probe] undone on node2: ${measured(now) ?? ''}\n[lab-probe] MeasuredLoopback: ${condition(now)?.message ?? ''}`);
  }, 300_000);
  it('L7: an Ingress on the lab L7 CLB stalls about 4 s before Enforce, and not after its SNAT/keepalive', async () => {
    const core = tke.kc.makeApiClient(CoreV1Api);
    const net = tke.kc.makeApiClient(NetworkingV1Api);
    // The lab's L4 and L7 CLBs share its one VIP, the emulator gives a VIP to one CLB: the L4 case's Service gives it
    // back (TKE deletes its CLB and, through the lab's kube-proxy, unbinds the VIP: L7 probes reach the L7 CLB).
    if (l4Service) await core.deleteNamespacedService(l4Service);
    await waitFor('the lab VIP free', async () => ((await tke.emulator.admin.state()).loadBalancers.some((lb) => lb.LoadBalancerVips.includes(VIP)) ? undefined : true), { timeoutMs: 30_000 });
    expect(kubeProxy.bound).toBe(false);
    expect(lab.l7Mode).toBe('passthrough');
    // The account may turn on SNAT/keepalive (a whitelisted capability, docs/tencent-cloud.md).
    await tke.emulator.admin.setCapabilities({ l7KeepaliveSnat: true });

    const ns = await createNamespace('lab-probe-l7');
    tke.namespaces.add(ns);
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('web', { annotations: { ...PRIVATE_INGRESS, [INGRESS_EXTENSIVE]: JSON.stringify({ Vip: VIP }) }, rules: [{ host: L7_HOST, paths: ['/'] }] }) });
    const lbId = await waitFor('the Ingress with its CLB at the lab VIP', async () => {
      const ing = await net.readNamespacedIngress({ namespace: ns, name: 'web' });
      return ing.status?.loadBalancer?.ingress?.[0]?.ip === VIP ? ing.metadata?.annotations?.[INGRESS_LB_ID] : undefined;
    });
    const ref: PolicyRef = { namespace: ns, name: 'probed' };
    const spec = (mode: string) => ({ mode, l7: { keepalive: true }, probe: { enabled: true } });
    expect((await applyPolicy(policyManifest(ref, spec('Audit')))).stderr).toBe('');
    const id = `Ingress/${ns}/web/${L7_HOST}/`;
    const written = await waitFor('the probe plan naming the Ingress', async () => {
      const cm = await planConfigMap();
      return cm?.plan.targets.some((t) => t.id === id) ? cm : undefined;
    }, { timeoutMs: 60_000, context: logs });
    expect(written.plan.targets.filter((t) => t.id.startsWith(`Ingress/${ns}/`))).toEqual([{ id, vip: VIP, port: L7_PORT, protocol: 'HTTP', host: L7_HOST, path: '/' }]);
    await waitForPolicy(ref, 'web AtRisk', (p) => reportedStatus(p).targets.some((t) => t.name === 'web' && t.verdict === 'AtRisk'), { timeoutMs: 30_000, context: logs });

    // Pass-through: a request the CLB sends to the client's own node is lost; after its ~4 s real-server timeout it
    // tries the next (docs/lab.md (c)). Answered late (the plan's 5 s timeout is longer): stalls, not failures.
    const before = tally(await probeWindow(), id);
    expect(before.stalls).toBeGreaterThan(0);
    expect(before.stalls).toBeLessThan(before.probes);
    expect(before.p99Ms).toBeGreaterThanOrEqual(lab.options.l7TimeoutMs);
    const described = await waitFor('kubectl describe lbp showing the stalls before Enforce', () => must(['describe', 'lbp', ref.name, '-n', ns]), {
      until: (out) => out.includes(`measured: ${before.failures}/${before.probes} failed, ${before.stalls} stalled`),
      timeoutMs: 30_000,
      context: logs,
    });
    expect(described).toMatch(new RegExp(`\\n +Measured: +measured: ${escape(figures(before))}4\\.\\d s\\n`));

    // Enforce: loopguard declares keepalive in the Ingress's TkeServiceConfig, TKE sets the listener's
    // KeepaliveEnable, and the lab's L7 CLB does what that listener now says: SNAT from 100.127.0.1 with keepalive.
    expect((await applyPolicy(policyManifest(ref, spec('Enforce')))).stderr).toBe('');
    await waitForPolicy(ref, 'web Mitigated', (p) => reportedStatus(p).targets.find((t) => t.name === 'web')?.verdict === 'Mitigated', { timeoutMs: 60_000, context: logs });
    const listeners = await waitFor('TKE setting the listener keepalive', async () => (await tke.emulator.admin.getLoadBalancer(lbId)).Listeners, { until: (ls) => ls.some((l) => l.Port === L7_PORT && l.KeepaliveEnable === 1), timeoutMs: 30_000 });
    expect(listeners.filter((l) => l.Port === L7_PORT).map((l) => l.KeepaliveEnable)).toEqual([1]);
    await lab.setL7Mode('snat');

    const after = tally(await probeWindow(), id);
    expect(after).toMatchObject({ failures: 0, stalls: 0, notRun: 0, nodes: [] });
    expect(after.probes).toBeGreaterThan(0);
    expect(after.p99Ms).toBeLessThan(3000);
    const enforced = await waitFor('kubectl describe lbp showing what was measured since Enforce', () => must(['describe', 'lbp', ref.name, '-n', ns]), {
      until: (out) => out.includes(`measured since Enforce: 0/${after.probes} failed`),
      timeoutMs: 30_000,
      context: logs,
    });
    expect(enforced).toMatch(new RegExp(`\\n +Measured: +measured since Enforce: 0/${after.probes} failed; p99 \\d[\\d.]* ms\\n`));
    await waitForCondition(ref, 'MeasuredLoopback', { status: 'False', reason: 'MeasuredAsModelled' });
    expect(await measuredEvents(ns)).toEqual([]);
    console.log(`[lab-probe] L7 Audit: ${measuredLine(described)}\n[lab-probe] L7 Enforce: ${measuredLine(enforced)}`);
  }, 300_000);
});
