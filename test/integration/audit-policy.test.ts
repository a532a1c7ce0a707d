// Operator core end to end, on the local TKE: real apiserver, the CLB emulator through the SDK, the TKE
// simulator, and the operator as its own process under the ServiceAccount + RBAC of config/.
// An Audit policy must diagnose every target correctly, become Ready, and write nothing anywhere.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api, CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { applyClusterProfile } from '../../sim/tke-simulator/index.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE, type OperatorProcess } from '../support/operator.js';
import { applyPolicy, deletePolicy, getPolicy, reportedStatus } from '../support/policy.js';
import { lbIngress, lbService, PRIVATE_INGRESS, PRIVATE_SUBNET } from '../support/workload.js';

const SUBNET = PRIVATE_SUBNET;

type Profile = 'ipvs-new' | 'ipvs-old' | 'iptables';

/** Verdict/root cause per target and kube-proxy profile (docs/diagnosis.md). */
const EXPECTED: Record<Profile, Record<string, string>> = {
  // IPVS with a kube-proxy that can bind the VIP: ETP Local loops back, and the fix is available.
  'ipvs-new': { 'Service/private-local': 'AtRisk/PodSourceNotMasqueraded', 'Service/private-cluster': 'NotApplicable/MasqueradedToNodeIp' },
  // IPVS with a kube-proxy too old for prevent-loopback: still at risk, and the message says which version to upgrade to.
  'ipvs-old': { 'Service/private-local': 'AtRisk/KubeProxyTooOld', 'Service/private-cluster': 'NotApplicable/MasqueradedToNodeIp' },
  // iptables answers the VIP on the node: in-cluster calls never reach the CLB.
  iptables: { 'Service/private-local': 'NotApplicable/VipServedLocally', 'Service/private-cluster': 'NotApplicable/VipServedLocally' },
};

describe('Audit policy on the local TKE', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let operator: OperatorProcess;

  beforeAll(async () => {
    tke = await startLocalTke();
    emulator = tke.emulator;
    operator = tke.operator!;
  });

  afterAll(async () => {
    await tke?.stop();
  });

  it.each<Profile>(['ipvs-new', 'ipvs-old', 'iptables'])('%s: diagnoses every target with its root cause, becomes Ready, writes nothing', async (profile) => {
    const kc = kubeConfig();
    await applyClusterProfile(kc, profile);
    const ns = await createNamespace(`audit-${profile}`);
    tke.namespaces.add(ns);
    const core = kc.makeApiClient(CoreV1Api);
    const net = kc.makeApiClient(NetworkingV1Api);
    await core.createNamespacedService({ namespace: ns, body: lbService('private-local', { annotations: SUBNET, etp: 'Local', ports: [80, 443] }) });
    await core.createNamespacedService({ namespace: ns, body: lbService('private-cluster', { annotations: SUBNET }) });
    await core.createNamespacedService({ namespace: ns, body: lbService('public', {}) });
    await core.createNamespacedService({
      namespace: ns,
      body: lbService('opted-out', { annotations: { ...SUBNET, 'loopguard.dev/skip': 'true' }, etp: 'Local' }),
    });
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'internal' }, spec: { ports: [{ port: 80 }] } } });
    await net.createNamespacedIngress({
      namespace: ns,
      body: lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: 'web.example.com', paths: ['/'] }], backend: { name: 'private-cluster', port: 80 } }),
    });
    // Wait for "TKE" to finish every CLB (id annotation *and* one listener per port) before taking the write
    // baseline: TKE annotates the id before it creates the listeners, and a target whose listeners are still
    // missing is (rightly) Pending, which is not what this test is about.
    await waitFor(
      'CLBs and listeners built',
      async () => {
        const svcs = await core.listNamespacedService({ namespace: ns });
        const ing = await net.readNamespacedIngress({ namespace: ns, name: 'web' });
        const wanted: Array<[string | undefined, number]> = svcs.items
          .filter((s) => s.spec?.type === 'LoadBalancer')
          .map((s) => [s.metadata?.annotations?.['service.kubernetes.io/loadbalance-id'], s.spec?.ports?.length ?? 0]);
        wanted.push([ing.metadata?.annotations?.['kubernetes.io/ingress.qcloud-loadbalance-id'], 1]);
        const built: Array<{ id?: string; ports: number; listeners: number }> = [];
        for (const [id, ports] of wanted) built.push({ id, ports, listeners: id ? (await emulator.admin.getLoadBalancer(id)).Listeners.length : 0 });
        return built;
      },
      { until: (built) => built.every((b) => b.id !== undefined && b.listeners >= b.ports) },
    );
    await emulator.admin.resetStats();

    const ref = { namespace: ns, name: 'audit' };
    expect((await applyPolicy(`apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: audit, namespace: ${ns}}\nspec: {mode: Audit}\n`)).code).toBe(0);
    // kubectl wait itself, not the helpers' polling: that it works on lbp as it is (kstatus) is part of the contract.
    const wait = await kubectl(['wait', '--for=condition=Ready', '-n', ns, 'lbp/audit', '--timeout=30s']);
    expect(wait.stderr).toBe('');
    expect(wait.code).toBe(0);

    const got = await getPolicy(ref);
    const status = reportedStatus(got);
    const verdicts = Object.fromEntries(status.targets.map((t) => [`${t.kind}/${t.name}`, `${t.verdict}/${t.rootCause}`]));
    expect(verdicts).toEqual({
      ...EXPECTED[profile],
      'Service/public': 'NotApplicable/PublicClb',
      'Service/opted-out': 'Skipped/SkipAnnotation',
      'Service/internal': 'NotApplicable/NotLoadBalancerService',
      'Ingress/web': 'AtRisk/L7Loopback',
    });
    // Audit reports the plan Enforce would carry out.
    const planOf = (name: string) => status.targets.find((t) => t.name === name)?.plan ?? [];
    if (profile === 'ipvs-new') expect(planOf('private-local').length).toBeGreaterThan(0);
    // Too old to fix: no plan, but the message names the kube-proxy build to upgrade to (v1.18 line).
    if (profile === 'ipvs-old') {
      expect(planOf('private-local')).toEqual([]);
      expect(status.targets.find((t) => t.name === 'private-local')?.message).toContain('v1.18.4-tke.20');
    }
    expect(planOf('web').length).toBeGreaterThan(0);
    expect(status.observedGeneration).toBe(got.metadata.generation);
    const atRisk = profile === 'iptables' ? 1 : 2;
    expect(status.counts).toMatchObject({ atRisk, notApplicable: 5 - atRisk, skipped: 1, total: 6 });
    const expectedMode = profile === 'iptables' ? 'iptables' : 'ipvs';
    expect(status.clusterProfile?.kubeProxyMode).toBe(expectedMode);
    expect(status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'AuditComplete' });
    expect(status.conditions.find((c) => c.type === 'Stalled')).toBeUndefined();
    // Audit keeps nothing to revert, so it holds no finalizer.
    expect(got.metadata.finalizers ?? []).toEqual([]);

    // loopguard changed no CLB (TKE's Create* calls may still be finishing the Ingress's CLB; loopguard can only
    // ever Modify*), and the targets carry no loopguard annotation.
    const stats = await emulator.admin.stats();
    expect(Object.keys(stats.calls).some((a) => a.startsWith('Describe'))).toBe(true);
    expect(Object.entries(stats.calls).filter(([action]) => action.startsWith('Modify'))).toEqual([]);
    const svcs = await core.listNamespacedService({ namespace: ns });
    for (const s of svcs.items) {
      expect(Object.keys(s.metadata?.annotations ?? {}).filter((k) => k.startsWith('loopguard.dev/') && k !== 'loopguard.dev/skip')).toEqual([]);
      expect(s.metadata?.annotations?.['service.cloud.tencent.com/prevent-loopback']).toBeUndefined();
    }
    // Nor the Ingress: no loopguard bookkeeping, no auto-config request, so TKE made no TkeServiceConfig.
    const web = await net.readNamespacedIngress({ namespace: ns, name: 'web' });
    expect(Object.keys(web.metadata?.annotations ?? {}).filter((k) => k.startsWith('loopguard.dev/') || k.includes('tke-service-config'))).toEqual([]);
    expect((await kubectl(['get', 'tkeserviceconfigs', '-n', ns, '-o', 'name'])).stdout.trim()).toBe('');

    // Readable for people: printer columns and describe.
    const table = await kubectl(['get', '-n', ns, 'lbp']);
    expect(table.stdout).toMatch(/NAME\s+MODE\s+TARGETS\s+MITIGATED\s+AT RISK\s+READY\s+AGE/);
    expect(table.stdout).toMatch(new RegExp(`audit\\s+Audit\\s+6\\s+0\\s+${atRisk}\\s+True`));
    const describe = await kubectl(['describe', '-n', ns, 'lbp/audit']);
    expect(describe.stdout).toContain('L7Loopback');
    expect(describe.stdout).toContain('AuditComplete');

    // Events on the at-risk target, for kubectl describe.
    await waitFor(
      'TargetAtRisk event',
      async () => (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=web' })).items.map((e) => `${e.type}/${e.reason}`),
      { until: (events) => events.includes('Warning/TargetAtRisk') },
    );

    // Metrics: per-target risk gauge and cloud call counters.
    const metrics = await (await fetch(`http://127.0.0.1:${operator.port}/metrics`)).text();
    expect(metrics).toContain(`loopguard_target_risk{namespace="${ns}",policy="audit",kind="Ingress",name="web",verdict="AtRisk"} 1`);
    expect(metrics).toMatch(/loopguard_cloud_requests_total\{action="DescribeLoadBalancers",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="loopbackpolicy",result="requeue_after"\} [1-9]/);

    // Credentials never reach the logs.
    expect(operator.logs()).not.toContain(emulator.credentials.secretKey);
    expect(operator.logs()).toContain('Caches synced');

    // Leave no live policy behind: later suites measure the operator's reconcile rate cluster-wide.
    await deletePolicy(ref, { timeoutMs: 30_000 });
  });

  it('shuts down gracefully on SIGTERM: exit 0 and the Lease released for the next leader', async () => {
    expect(await operator.stop('SIGTERM')).toBe(0);
    expect(operator.logs()).toContain('Stopped');
    const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'loopguard-leader', namespace: OPERATOR_NAMESPACE });
    expect(lease.spec?.holderIdentity).toBeUndefined();
  });
});
