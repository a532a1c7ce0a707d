// A restart that does not re-read the world (issue 28 #2, docs/execution.md "Restart"). Converged under Enforce, the
// operator is stopped (SIGTERM: it writes its observation checkpoint into loopguard-system) and started again. The
// new process judges the converged targets from the checkpoint: its first round reads none of their CLBs (counted
// by the emulator, DescribeListeners by caller). A drift made while no operator ran is still found and corrected,
// on the drift schedule (within one drift interval of the CLB's last read), and a new at-risk Service created after
// the restart is read and mitigated at once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE, type OperatorProcess } from '../support/operator.js';
import { applyPolicy, getPolicy, policyManifest, waitForCondition } from '../support/policy.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
/** Long enough that no converged CLB is due for its drift check before the restarted operator's first round. */
const DRIFT_MS = 45_000;
const CONVERGED = 4;

describe('restart from the observation checkpoint', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let operator: OperatorProcess | undefined;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const start = async () => tke.startOperator({ extraArgs: [`--drift-check-interval=${DRIFT_MS / 1000}s`] });
  const reads = async () => (await emulator.admin.statsSince('restart')).byCaller['loopguard']?.['DescribeListeners'] ?? {};
  const sources = async (id: string) => (await emulator.admin.getLoadBalancer(id)).Listeners.map((l) => l.HealthCheck?.SourceIpType ?? 0);
  const clbOf = (ns: string, name: string) =>
    waitFor(`the CLB of ${name} built`, async () => {
      const id = (await core.readNamespacedService({ namespace: ns, name })).metadata?.annotations?.[LB_ID];
      return id && (await emulator.admin.getLoadBalancer(id)).Listeners.length >= 2 ? id : undefined;
    });

  beforeAll(async () => {
    // As in l4-restart: TKE re-applies only declared fields, so the drift under test is loopguard's to find.
    tke = await startLocalTke({ operator: false, simulator: { syncScope: 'declared' } });
    emulator = tke.emulator;
  });

  afterAll(async () => {
    // SIGTERM: the operator releases the shared Lease (loopguard-system/loopguard-leader) on its way out. A SIGKILL here
    // left it held for its 15 s duration, which the next suite's operator waited out before it could lead.
    await operator?.stop('SIGTERM');
    await tke?.stop();
  });

  it('judges converged targets without reading their CLBs, corrects a drift made while down, mitigates a new Service', async () => {
    const ns = await createNamespace('restart-checkpoint');
    tke.namespaces.add(ns);
    const names = Array.from({ length: CONVERGED }, (_, i) => `old-${i}`);
    for (const n of names) await core.createNamespacedService({ namespace: ns, body: lbService(n, AT_RISK_L4) });
    const ids: string[] = [];
    for (const n of names) ids.push(await clbOf(ns, n));

    operator = await start();
    const policy = { namespace: ns, name: 'restart' };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce' }))).code).toBe(0);
    await waitFor('every converged Service mitigated', async () => {
      for (const id of ids) if ((await sources(id)).some((s) => s !== 1)) return undefined;
      const p = await getPolicy(policy);
      return p.status?.counts?.total === CONVERGED && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    });
    await operator.stop('SIGTERM');
    const stored = await core.readNamespacedConfigMap({ namespace: OPERATOR_NAMESPACE, name: 'loopguard-observations-0' });
    expect(stored.binaryData?.['observations.json.gz']?.length).toBeGreaterThan(0);

    // While no operator runs: a drift nobody repairs (TKE's queued syncs done first, see l4-restart), and a target the
    // first round reports without reading any CLB (a ClusterIP Service): its count tells the round has run.
    await tke.simulator.resyncNow();
    const [driftLb = ''] = ids;
    const drifted = (await emulator.admin.getLoadBalancer(driftLb)).Listeners[0]?.ListenerId ?? '';
    await emulator.admin.patchListener(driftLb, drifted, { HealthCheck: { SourceIpType: 0 } });
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'marker' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } } });

    await emulator.admin.markStats('restart');
    operator = await start();
    await waitFor('the first round after the restart reported', async () => ((await getPolicy(policy)).status?.counts?.total === CONVERGED + 1 ? true : undefined));
    expect(await reads()).toEqual({});
    expect(operator.logs()).toContain('Observation checkpoint loaded');
    await waitForCondition(policy, 'Ready');

    // A new at-risk Service: read and mitigated at once (it is in no checkpoint).
    await core.createNamespacedService({ namespace: ns, body: lbService('new', AT_RISK_L4) });
    const fresh = await clbOf(ns, 'new');
    await waitFor('the new Service mitigated', async () => ((await sources(fresh)).every((s) => s === 1) ? true : undefined), { timeoutMs: 30_000 });
    expect((await reads())['OK']).toBeGreaterThan(0);

    // The drift: found when its CLB comes due (at the latest one drift interval after its last read, which was
    // before the restart), read fresh, corrected.
    await waitFor('the drift made while down corrected', async () => ((await sources(driftLb)).every((s) => s === 1) ? true : undefined), { timeoutMs: DRIFT_MS + 30_000 });
  }, 300_000);

  it("trusts the checkpoint's reads for the checkpoint's full cycle, though older than the drift interval", async () => {
    // A slow full cycle (1 % of 5 calls/s for full reads: 20 s per CLB) and a short drift interval: the checkpoint's
    // reads are older than the interval when the operator comes back, yet within the cycle of the CLBs it holds. A
    // restart that held seeded reads to the cycle of its first drift pass (no CLB counted yet) read every one again.
    const intervalS = 2;
    const slow = () => tke.startOperator({ extraArgs: [`--drift-check-interval=${intervalS}s`, '--drift-full-read-share=1', '--cloud-rate-limit=5'] });
    const ns = await createNamespace('restart-cycle');
    tke.namespaces.add(ns);
    const names = ['a', 'b'];
    for (const n of names) await core.createNamespacedService({ namespace: ns, body: lbService(n, AT_RISK_L4) });
    const ids: string[] = [];
    for (const n of names) ids.push(await clbOf(ns, n));
    await operator?.stop('SIGTERM');
    operator = await slow();
    const policy = { namespace: ns, name: 'cycle' };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce' }))).code).toBe(0);
    await waitFor('both mitigated', async () => {
      for (const id of ids) if ((await sources(id)).some((s) => s !== 1)) return undefined;
      return (await getPolicy(policy)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    });
    await operator.stop('SIGTERM');
    // Past the drift interval: every read in the checkpoint is older than it.
    await new Promise((r) => setTimeout(r, 2 * intervalS * 1000));
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'marker' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } } });
    await emulator.admin.markStats('restart');
    operator = await slow();
    await waitFor('the first round after the restart reported', async () => ((await getPolicy(policy)).status?.counts?.total === names.length + 1 ? true : undefined));
    expect(await reads()).toEqual({});
  }, 300_000);
});
