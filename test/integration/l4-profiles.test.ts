// L4 Enforce in the kube-proxy profiles where loopguard has nothing it may change: a kube-proxy too old for
// prevent-loopback (the loopback stays, and the policy says which build to upgrade to) and iptables (the node
// answers the VIP itself). The policy must end Ready without a single CLB write or annotation.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ClusterProfileName } from '../../sim/tke-simulator/index.js';
import { createNamespace, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, getPolicy, policyManifest, reportedStatus, waitForCondition } from '../support/policy.js';
import { lbService } from '../support/workload.js';

const SUBNET = { 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid': 'subnet-prof0001' };

const CASES: Array<{ profile: ClusterProfileName; local: string; ready: string }> = [
  { profile: 'ipvs-old', local: 'AtRisk/KubeProxyTooOld', ready: 'ReconciledWithRisks' },
  { profile: 'iptables', local: 'NotApplicable/VipServedLocally', ready: 'Reconciled' },
];

describe.each(CASES)('L4 Enforce with kube-proxy profile $profile', ({ profile, local, ready }) => {
  let tke: LocalTke;
  beforeAll(async () => {
    tke = await startLocalTke({ profile });
  });
  afterAll(async () => {
    await tke?.stop();
  });

  it(`ends Ready (${ready}) with ${local} and changes nothing`, async () => {
    const ns = await createNamespace(`l4-${profile}`);
    tke.namespaces.add(ns);
    const core = tke.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({ namespace: ns, body: lbService('private-local', { annotations: SUBNET, etp: 'Local', ports: [[80, 'TCP'], [53, 'UDP']] }) });
    await core.createNamespacedService({ namespace: ns, body: lbService('public', { ports: [[80, 'TCP'], [53, 'UDP']] }) });
    await waitFor('2 CLBs with 2 listeners each', async () => (await tke.emulator.admin.state()).loadBalancers.map((lb) => lb.Listeners.length), {
      until: (listeners) => listeners.filter((n) => n === 2).length >= 2,
    });
    await tke.emulator.admin.resetStats();

    const ref = { namespace: ns, name: 'fix' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).code).toBe(0);
    await waitForCondition(ref, 'Ready', { timeoutMs: 30_000 });
    const status = reportedStatus(await getPolicy(ref));
    const verdicts = Object.fromEntries(status.targets.map((t) => [t.name, `${t.verdict}/${t.rootCause}`]));
    expect(verdicts).toEqual({ 'private-local': local, public: 'NotApplicable/PublicClb' });
    expect(status.conditions.find((c) => c.type === 'Ready')?.reason).toBe(ready);
    if (profile === 'ipvs-old') {
      expect(status.targets.find((t) => t.name === 'private-local')?.message).toContain('v1.18.4-tke.20');
    }

    // Enforce had nothing it may do: no CLB write, every listener still on the VIP source, no annotation.
    const stats = await tke.emulator.admin.stats();
    expect(Object.keys(stats.calls).filter((a) => a.startsWith('Modify'))).toEqual([]);
    for (const lb of (await tke.emulator.admin.state()).loadBalancers) {
      for (const l of lb.Listeners) expect(l.HealthCheck?.SourceIpType ?? 0).toBe(0);
    }
    const svc = await core.readNamespacedService({ namespace: ns, name: 'private-local' });
    expect(svc.metadata?.annotations?.['service.cloud.tencent.com/prevent-loopback']).toBeUndefined();
    expect(Object.keys(svc.metadata?.annotations ?? {}).filter((k) => k.startsWith('loopguard.dev/'))).toEqual([]);
    await deletePolicy(ref, { timeoutMs: 30_000 });
  });
});
