// Issue 14 #3: loopguard Enforce against an emulator whose DescribeTargetHealth answers from real probes of the
// data-plane lab (lab/health-oracle.ts) instead of the emulator's rule. kube-proxy (IPVS) has bound the VIP on every
// lab node, so the CLB's checks from the VIP die in the nodes' kernels (Dead); once loopguard switches the listener
// to SourceIpType 1, the lab's checker probes from 100.64.0.2, the nodes answer, and the targets turn Alive.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { labHealthOracle, type LabHealthOracle } from '../../lab/health-oracle.js';
import { Lab } from '../../lab/lab.js';
import { clbClient } from '../emulator/support.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, policyManifest, waitForCondition } from '../support/policy.js';
import { lbService, PRIVATE_SUBNET } from '../support/workload.js';
import { holdForSuite } from '../support/exclusive.js';

// The lab's namespaces, links and nft tables are the machine's: one lab suite at a time (exclusive.ts).
holdForSuite('lab');

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';

describe('Enforce against target health from real packets (the data-plane lab)', () => {
  let lab: Lab;
  let oracle: LabHealthOracle;
  let tke: LocalTke;
  const core = kubeConfig().makeApiClient(CoreV1Api);

  beforeAll(async () => {
    lab = await Lab.start({ nodes: 3 });
    await lab.bindVip(true);
    oracle = labHealthOracle(lab, { refreshMs: 500 });
    // As in l4-enforce.test.ts: a TKE that does not switch the source on prevent-loopback, so the user's own
    // prevent-loopback leaves the VIP-sourced checks dying until loopguard acts.
    tke = await startLocalTke({
      emulator: { targetHealth: oracle.source },
      simulator: { switchHealthCheckSourceOnPreventLoopback: false, syncScope: 'declared' },
      operator: { extraArgs: ['--drift-check-interval=2s'] },
    });
  });

  afterAll(async () => {
    await tke?.stop();
    oracle?.stop();
    await lab?.stop();
  });

  async function health(lbId: string): Promise<string[]> {
    const res = await clbClient(tke.emulator).DescribeTargetHealth({ LoadBalancerIds: [lbId] });
    return (res.LoadBalancers ?? []).flatMap((lb) =>
      (lb.Listeners ?? []).flatMap((l) => (l.Rules ?? []).flatMap((r) => (r.Targets ?? []).map((t) => t.HealthStatusDetail ?? '?'))),
    );
  }

  const nodeCounters = async () => Promise.all(lab.allNodes().map((i) => lab.counters(i)));
  const total = (cs: Array<Record<string, number>>, name: string) => cs.reduce((s, c) => s + (c[name] ?? 0), 0);

  it('targets go Dead → Alive because the probes from 100.64 reach the nodes', async () => {
    const ns = await createNamespace('lab-enforce');
    tke.namespaces.add(ns);
    const start = await nodeCounters();
    await core.createNamespacedService({ namespace: ns, body: lbService('web', { annotations: { ...PRIVATE_SUBNET, [PREVENT]: 'true' }, etp: 'Local' }) });
    const lbId = await waitFor('the CLB with its listener', async () => {
      const id = (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[LB_ID];
      if (!id) return undefined;
      return (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length > 0 ? id : undefined;
    });

    const dead = await waitFor('every target Dead from the lab', () => health(lbId), { until: (h) => h.length === 3 && h.every((s) => s === 'Dead'), timeoutMs: 20_000 });
    expect(dead).toEqual(['Dead', 'Dead', 'Dead']);
    const beforeFix = await nodeCounters();
    // The checks really went out from the VIP and died in the nodes' kernels (seen on eth0, never delivered).
    expect(oracle.stats().sent.vip).toBeGreaterThanOrEqual(3);
    expect(oracle.stats().alive.vip).toBe(0);
    expect(total(beforeFix, 'seen_vip') - total(start, 'seen_vip')).toBeGreaterThanOrEqual(3);
    expect(total(beforeFix, 'delivered_vip') - total(start, 'delivered_vip')).toBe(0);

    const policy = { namespace: ns, name: 'enforce' };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
    await waitForCondition(policy, 'Ready', { timeoutMs: 45_000, context: () => tke.operator?.logs().slice(-3000) ?? '' });
    const listeners = (await tke.emulator.admin.getLoadBalancer(lbId)).Listeners;
    expect(listeners.map((l) => l.HealthCheck?.SourceIpType)).toEqual([1]);

    await waitFor('every target Alive from the lab', () => health(lbId), { until: (h) => h.length === 3 && h.every((s) => s === 'Alive'), timeoutMs: 20_000 });
    const afterFix = await nodeCounters();
    expect(oracle.stats().alive.range).toBeGreaterThanOrEqual(3);
    expect(total(afterFix, 'delivered_range') - total(beforeFix, 'delivered_range')).toBeGreaterThanOrEqual(3);
    // The VIP is still bound on every node: it was the source, not the binding, that changed.
    expect((await lab.probe(0, 'vip')).ok).toBe(false);

    // The revert does not bring the fault back: the user's own prevent-loopback stays and keeps the VIP bound, so
    // loopguard leaves the source on 100.64 (its original forgotten) and the checks keep reaching the nodes.
    await deletePolicy(policy);
    expect((await tke.emulator.admin.getLoadBalancer(lbId)).Listeners.map((l) => l.HealthCheck?.SourceIpType)).toEqual([1]);
    expect(await health(lbId)).toEqual(['Alive', 'Alive', 'Alive']);
  });
});
