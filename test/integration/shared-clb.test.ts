// Issue 22 #2 on the local TKE: Services `shared` in two namespaces on one user-brought private CLB
// (service.kubernetes.io/tke-existed-lbid), ETP Local, both under Enforce, then one policy deleted, then the other.
// prevent-loopback binds the whole VIP, so at no sample may the VIP be bound while any listener on the CLB
// health-checks from it, and the emulator's health model (DescribeTargetHealth) shows every backend Alive throughout.
// TKE here does not switch sources on prevent-loopback and re-applies only declared fields (as in l4-enforce): every
// source change is loopguard's, so the test holds loopguard alone to the rule.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { clbClient } from '../emulator/support.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, policyManifest, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { lbService } from '../support/workload.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const EXISTED = 'service.kubernetes.io/tke-existed-lbid';

describe('a user-brought CLB shared by Services of two namespaces', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  const core = kubeConfig().makeApiClient(CoreV1Api);

  beforeAll(async () => {
    tke = await startLocalTke({
      emulator: { taskDurationMs: 30 },
      resyncIntervalMs: 1_500,
      simulator: { switchHealthCheckSourceOnPreventLoopback: false, syncScope: 'declared' },
      operator: { leaderElect: false, extraArgs: ['--drift-check-interval=2s'] },
    });
    emulator = tke.emulator;
  });

  afterAll(async () => {
    await tke?.stop();
  });

  it('Enforce both, delete one policy, then the other: never a VIP-sourced check on a bound VIP, every backend Alive', async () => {
    const lb = (await emulator.admin.seedLoadBalancer({ LoadBalancerType: 'INTERNAL', SubnetId: 'subnet-user', Listeners: [] })).LoadBalancerId;
    const h = await createNamespace('shared-h');
    const i = await createNamespace('shared-i');
    tke.namespaces.add(h);
    tke.namespaces.add(i);
    await core.createNamespacedService({ namespace: h, body: lbService('shared', { annotations: { [EXISTED]: lb }, etp: 'Local', ports: [8080] }) });
    await core.createNamespacedService({ namespace: i, body: lbService('shared', { annotations: { [EXISTED]: lb }, etp: 'Local', ports: [9090] }) });
    const sourceOf = async (port: number) => (await emulator.admin.getLoadBalancer(lb)).Listeners.find((l) => l.Port === port)?.HealthCheck?.SourceIpType;
    await waitFor('both listeners on the user CLB', async () => ((await sourceOf(8080)) === 0 && (await sourceOf(9090)) === 0 ? true : undefined), { timeoutMs: 30_000 });
    // TKE binds each Service to the CLB (the id annotation, the VIP in its status) after creating its listener: until
    // then the other namespace's Service is not on the CLB as loopguard sees it, and the SharedClb message below could
    // not count it.
    for (const ns of [h, i]) {
      await waitFor(`Service ${ns}/shared bound to the CLB`, async () => {
        const svc = await core.readNamespacedService({ namespace: ns, name: 'shared' });
        return svc.metadata?.annotations?.['service.kubernetes.io/loadbalance-id'] === lb && (svc.status?.loadBalancer?.ingress?.length ?? 0) > 0 ? true : undefined;
      }, { timeoutMs: 30_000 });
    }

    // Sampled throughout: the VIP bound on a node while a listener health-checks from the VIP, and any Dead backend.
    const violations: string[] = [];
    let samples = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const state = await emulator.admin.getLoadBalancer(lb);
        const bound = state.nodes.some((n) => n.vipBound);
        const onVip = state.Listeners.filter((l) => l.HealthCheck?.SourceIpType === 0 && l.HealthCheck.HealthSwitch !== 0).map((l) => l.Port);
        if (bound && onVip.length > 0) violations.push(`VIP bound while :${onVip.join(', :')} health-check(s) from it`);
        const health = await clbClient(emulator).DescribeTargetHealth({ LoadBalancerIds: [lb] });
        for (const l of health.LoadBalancers?.[0]?.Listeners ?? []) {
          for (const t of (l.Rules ?? []).flatMap((r) => r.Targets ?? [])) if (!t.HealthStatus) violations.push(`:${l.Port} backend ${t.IP ?? ''} Dead`);
        }
        samples++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const refs: Record<string, PolicyRef> = { h: { namespace: h, name: 'enforce' }, i: { namespace: i, name: 'enforce' } };
    try {
      for (const ref of Object.values(refs)) expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
      for (const ref of Object.values(refs)) {
        await waitForPolicy(ref, 'shared Mitigated', (p) => p.status?.targets?.some((t) => t.name === 'shared' && t.verdict === 'Mitigated') ?? false, { timeoutMs: 60_000 });
      }
      expect(await sourceOf(8080)).toBe(1);
      expect(await sourceOf(9090)).toBe(1);
      expect((await emulator.admin.getLoadBalancer(lb)).nodes.every((n) => n.vipBound)).toBe(true);
      // Whichever policy planned first saw the other's listener on the VIP: a SharedClb Event on its Service, which
      // counts the other namespace's Service and never names it (issue 22 #9).
      const shared = [];
      for (const ns of [h, i]) shared.push(...(await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=SharedClb' })).items.map((e) => ({ ns, message: e.message ?? '' })));
      expect(shared.length).toBeGreaterThan(0);
      for (const e of shared) {
        expect(e.message).toMatch(/1 Service\(s\) in other namespaces/);
        expect(e.message).not.toContain(e.ns === h ? i : h);
      }

      // H's policy goes: its prevent-loopback is taken off, but I's keeps the VIP bound, so H's source stays 100.64.
      await deletePolicy(refs.h as PolicyRef);
      const hSvc = await core.readNamespacedService({ namespace: h, name: 'shared' });
      expect(hSvc.metadata?.annotations?.[PREVENT]).toBeUndefined();
      expect(await findRecord('Service', h, 'shared')).toBeUndefined();
      expect(await sourceOf(8080)).toBe(1);
      expect((await emulator.admin.getLoadBalancer(lb)).nodes.every((n) => n.vipBound)).toBe(true);
      await waitForPolicy(refs.i as PolicyRef, 'shared still Mitigated', (p) => p.status?.targets?.some((t) => t.name === 'shared' && t.verdict === 'Mitigated') ?? false);

      // The last one out restores in the safe order: the VIP unbound, then I's source back on it (H's stays forgotten).
      await deletePolicy(refs.i as PolicyRef);
      expect((await core.readNamespacedService({ namespace: i, name: 'shared' })).metadata?.annotations?.[PREVENT]).toBeUndefined();
      await waitFor('the VIP unbound', async () => ((await emulator.admin.getLoadBalancer(lb)).nodes.every((n) => !n.vipBound) ? true : undefined), { timeoutMs: 20_000 });
      expect(await sourceOf(9090)).toBe(0);
      expect(await sourceOf(8080)).toBe(1);
    } finally {
      sampling = false;
      await sampler;
    }
    expect(samples).toBeGreaterThan(10);
    expect(violations).toEqual([]);
  });
});
