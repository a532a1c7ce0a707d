// Issue 28 #6: drift checks in two tiers on the local TKE (ipvs-new). With the full re-reads held to a pace that
// re-reads these CLBs only every few minutes (--drift-full-read-share 1 of --cloud-rate-limit 2: 0.02 reads/s), a
// listener source put back on the bound VIP is still found within the drift interval: its backends turn Dead, the
// health signal (DescribeTargetHealth, every half interval) sees it, and that one CLB is re-read in full and
// corrected. The other CLBs are not re-read in full meanwhile.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, policyManifest, waitForCondition } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { lbService } from '../support/workload.js';

const SUBNET = { 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid': 'subnet-demo0001' };
const LB_ID = 'service.kubernetes.io/loadbalance-id';
const SERVICES = ['s0', 's1', 's2', 's3'];
const INTERVAL_S = 4;
/** Each CLB re-read in full every max(4 s, 4 CLBs / (2/s × 1 %)) = 200 s: far beyond this test's waits. */
const FULL_CYCLE_S = SERVICES.length / ((2 * 1) / 100);

describe('drift checks in two tiers', () => {
  let tke: LocalTke;
  const core = kubeConfig().makeApiClient(CoreV1Api);

  beforeAll(async () => {
    // A TKE that does not switch sources on prevent-loopback and syncs only declared fields (as in
    // l4-enforce.test.ts): loopguard switches the sources, and only loopguard puts a drifted one back.
    tke = await startLocalTke({
      simulator: { switchHealthCheckSourceOnPreventLoopback: false, syncScope: 'declared' },
      operator: { leaderElect: false, extraArgs: [`--drift-check-interval=${INTERVAL_S}s`, '--cloud-rate-limit=2', '--drift-full-read-share=1'] },
    });
  });

  afterAll(async () => {
    await tke?.stop();
  });

  it('a source put back on the bound VIP is corrected through the health signal, before the full cycle comes round', async () => {
    const { emulator } = tke;
    const operator = tke.operator!;
    const ns = await createNamespace('drift-signal');
    tke.namespaces.add(ns);
    for (const name of SERVICES) await core.createNamespacedService({ namespace: ns, body: lbService(name, { annotations: SUBNET, etp: 'Local' }) });
    const ids = await waitFor(
      'CLBs with their listener',
      async () => {
        const out: string[] = [];
        for (const name of SERVICES) {
          const id = (await core.readNamespacedService({ namespace: ns, name })).metadata?.annotations?.[LB_ID];
          if (!id || (await emulator.admin.getLoadBalancer(id)).Listeners.length === 0) return undefined;
          out.push(id);
        }
        return out;
      },
      { timeoutMs: 30_000 },
    );
    expect((await applyPolicy(policyManifest({ namespace: ns, name: 'enforce' }, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
    await waitForCondition({ namespace: ns, name: 'enforce' }, 'Ready', { timeoutMs: 60_000, context: () => operator.logs().slice(-4000) });
    const sources = async (id: string) => (await emulator.admin.getLoadBalancer(id)).Listeners.map((l) => l.HealthCheck?.SourceIpType);
    await waitFor('every source on 100.64, every VIP bound', async () => {
      for (const id of ids) {
        const lb = await emulator.admin.getLoadBalancer(id);
        if (lb.Listeners.some((l) => l.HealthCheck?.SourceIpType !== 1) || !lb.nodes.every((n) => n.vipBound)) return undefined;
      }
      return true;
    });

    // A console user puts one listener back on the VIP: with the VIP bound its backends turn Dead. Once loopguard has
    // recorded the switch as applied (what makes a value back at its original drift, not a first change).
    const target = ids[2] as string;
    const listener = (await emulator.admin.getLoadBalancer(target)).Listeners[0]!;
    await waitFor('the switch recorded as applied', async () =>
      ((await findRecord('Service', ns, 's2'))?.spec.originals?.applied ?? []).includes(`listener/${listener.ListenerId}/sourceIpType`) ? true : undefined,
    );
    await emulator.admin.markStats('drift');
    const injected = Date.now();
    await emulator.admin.patchListener(target, listener.ListenerId, { HealthCheck: { SourceIpType: 0 } });
    await waitFor('the drifted source put back by loopguard', async () => ((await sources(target)).every((s) => s === 1) ? true : undefined), {
      timeoutMs: 45_000,
      context: () => operator.logs().slice(-4000),
    });
    const tookS = (Date.now() - injected) / 1000;
    const writes = (await emulator.admin.writes()).filter((w) => w.loadBalancerId === target && w.listenerId === listener.ListenerId);
    expect(writes.at(-1)?.caller).toBe('loopguard');
    // Within the test's wait, never the full cycle's: the signal found it.
    expect(tookS).toBeLessThan(FULL_CYCLE_S);
    expect(operator.logs()).toContain('Drift signal: re-reading CLBs in full');
    expect(operator.logs()).toContain(target);
    const calls = (await emulator.admin.statsSince('drift')).byCaller['loopguard'] ?? {};
    const count = (action: string) => Object.values(calls[action] ?? {}).reduce((a, b) => a + b, 0);
    expect(count('DescribeTargetHealth')).toBeGreaterThan(0);
    // The drifted CLB re-read in full (and once more when its backends came back Alive), the others not at all.
    expect(count('DescribeListeners')).toBeLessThan(ids.length);
    const metrics = await (await fetch(`http://127.0.0.1:${operator.port}/metrics`)).text();
    expect(metrics).toMatch(/loopguard_drift_checks_total\{tier="health"\} [1-9]/);
    expect(metrics).toMatch(/loopguard_drift_checks_total\{tier="escalated"\} [1-9]/);
    // Events are written paced (src/kube/events.ts): the correction's may come a moment after the CLB shows it.
    const reasons = async () => (await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=s2` })).items.map((e) => e.reason);
    await waitFor('the DriftCorrected Event on s2', async () => ((await reasons()).includes('DriftCorrected') ? true : undefined), {
      timeoutMs: 15_000,
      context: async () => `reasons: ${JSON.stringify(await reasons())}\n${operator.logs().slice(-3000)}`,
    });
  }, 180_000);
});
