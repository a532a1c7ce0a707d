// Issue 22 #3, #4 on the local TKE: every wait for TKE ends (TKE failing with Warning Events on the Ingress, or not
// running at all, makes the policy Stalled within the grace period plus one round, with TKE's message and the way
// out), and a deletion held up by throttled writes says so in the policy's status.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { findCondition } from '../../src/api/conditions.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, getPolicy, policyManifest, reportedStatus, waitForCondition, waitForPolicy, waitForPolicyGone } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { AT_RISK_L4, lbIngress, lbService, PRIVATE_INGRESS } from '../support/workload.js';

const LB_ID = 'kubernetes.io/ingress.qcloud-loadbalance-id';
const SERVICE_LB_ID = 'service.kubernetes.io/loadbalance-id';
const AUTO = 'ingress.cloud.tencent.com/tke-service-config-auto';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
/** The operator's --tke-grace-period (its default). */
const GRACE_MS = 10_000;
/** One round after the grace period: the round that decides reads right after it; slack for a loaded machine. */
const ONE_ROUND_MS = 15_000;

describe('every wait for TKE ends; a held-up deletion says so', () => {
  let tke: LocalTke;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;

  beforeAll(async () => {
    tke = await startLocalTke({ emulator: { taskDurationMs: 30 }, resyncIntervalMs: 1_500, operator: { leaderElect: false, extraArgs: ['--drift-check-interval=5s'] } });
  });

  afterAll(async () => {
    await tke?.stop();
  });

  const ingressLb = (ns: string, name: string) =>
    waitFor(`CLB and listener of Ingress ${name}`, async () => {
      const id = (await net.readNamespacedIngress({ namespace: ns, name })).metadata?.annotations?.[LB_ID];
      return id && (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length > 0 ? id : undefined;
    });

  it("TKE failing on the Ingress (its Warning Events): Stalled within the grace period plus one round, quoting TKE", async () => {
    const ns = await createNamespace('wait-warn');
    tke.namespaces.add(ns);
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: 'a.example.com', paths: ['/'] }] }) });
    const lb = await ingressLb(ns, 'web');
    // TKE's sync of this Ingress fails from now on (CAM denies its DescribeListeners), loopguard's reads do not.
    await tke.emulator.admin.setFaults({ rules: [{ action: 'DescribeListeners', rate: 1, kind: 'error', code: 'UnauthorizedOperation', message: 'CAM denies clb:DescribeListeners to TKE (injected)', loadBalancerId: lb, caller: 'tke' }] });
    const ref = { namespace: ns, name: 'p' };
    try {
      const asked = Date.now();
      expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', l7: { keepalive: true } }))).stderr).toBe('');
      const stalled = await waitForCondition(ref, 'Stalled', { reason: 'TkeSyncFailed', timeoutMs: GRACE_MS + ONE_ROUND_MS + 15_000, context: logs });
      const took = Date.now() - asked;
      console.log(`TKE failing: Stalled ${Math.round(took / 100) / 10} s after the policy was applied (grace ${GRACE_MS / 1000} s)`);
      // loopguard asked (the auto annotation); TKE never created the config, and said why.
      expect((await net.readNamespacedIngress({ namespace: ns, name: 'web' })).metadata?.annotations?.[AUTO]).toBe('true');
      const web = reportedStatus(await getPolicy(ref)).targets.find((t) => t.name === 'web');
      expect(web?.message).toMatch(/TKE did not create TkeServiceConfig web-auto-ingress-config; TKE's latest Warning Event \(SyncLoadBalancerFailed\): "DescribeListeners failed: Code=UnauthorizedOperation, Message=CAM denies/);
      expect(web?.message).toMatch(/kubectl describe ingress web/);
      expect(stalled.message).toMatch(/TkeSyncFailed|TKE/);
      const ready = findCondition((await getPolicy(ref)).status?.conditions, 'Ready');
      expect(ready).toMatchObject({ status: 'False', reason: 'TkeSyncFailed' });
    } finally {
      await tke.emulator.admin.clearFaults();
    }
    // TKE recovers: the wait's verdict goes, the target gets mitigated (the Stalled was no dead end).
    await waitForPolicy(ref, 'web no longer Stalled on TKE', (p) => findCondition(p.status?.conditions, 'Stalled')?.reason !== 'TkeSyncFailed', { timeoutMs: 90_000, context: logs });
  }, 180_000);

  it('a deletion with every ModifyListener throttled: Terminating with the cause in the status, then restored once the throttling ends', async () => {
    const ns = await createNamespace('wait-delete');
    tke.namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('web', AT_RISK_L4) });
    const lb = await waitFor('CLB of web', async () => (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[SERVICE_LB_ID]);
    const ref = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).stderr).toBe('');
    // Mitigated first (Ready alone may be a round that found TKE's listeners not there yet): the deletion under test
    // restores what Enforce changed, not a round still switching sources.
    await waitForPolicy(ref, 'web mitigated', (p) => p.status?.counts?.mitigated === 1, { timeoutMs: 60_000, context: logs });
    // A TKE sync that read the Service before prevent-loopback may still put its sources back (sync scope all); the
    // drift check switches them again. The deletion under test starts from switched sources: drain TKE, wait for them.
    await tke.simulator.resyncNow();
    await waitFor('both listeners on 100.64.0.0/10', async () => {
      const ls = (await tke.emulator.admin.getLoadBalancer(lb)).Listeners;
      return ls.length === 2 && ls.every((l) => l.HealthCheck?.SourceIpType === 1) ? true : undefined;
    }, { timeoutMs: 30_000, context: logs });
    await tke.emulator.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'error', code: 'RequestLimitExceeded', message: 'throttled (injected)', loadBalancerId: lb }] });
    try {
      await deletePolicy(ref, { wait: false });
      // At once: the status no longer says Ready.
      const first = await waitForCondition(ref, 'Ready', { status: 'False', reason: 'Terminating', timeoutMs: 15_000, context: logs });
      expect(first.message).toMatch(/the policy is being deleted: its finalizer stays until 1 target\(s\) have their originals back/);
      // After the client's retries: the cause.
      const cause = await waitForPolicy(
        ref,
        'Terminating with the cause',
        (p) => /RequestLimitExceeded|throttled/.test(findCondition(p.status?.conditions, 'Reconciling')?.message ?? ''),
        { timeoutMs: 120_000, context: logs },
      );
      expect(findCondition(cause.status?.conditions, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Terminating' });
      expect(findCondition(cause.status?.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'Terminating' });
      // prevent-loopback went first (the safe order); the sources wait for the throttling to end.
      expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[PREVENT]).toBeUndefined();
    } finally {
      await tke.emulator.admin.clearFaults();
    }
    await waitForPolicyGone(ref, { timeoutMs: 120_000, context: logs });
    const listeners = (await tke.emulator.admin.getLoadBalancer(lb)).Listeners;
    expect(listeners.map((l) => l.HealthCheck?.SourceIpType)).toEqual(listeners.map(() => 0));
  }, 300_000);

  it('a lost LoopbackRecord (pruned): Stalled RecordLost naming the fix, and the deleted policy warns that the change stays', async () => {
    const ns = await createNamespace('wait-lost');
    tke.namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('web', AT_RISK_L4) });
    await waitFor('CLB of web', async () => (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[SERVICE_LB_ID]);
    const ref = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).stderr).toBe('');
    await waitForPolicy(ref, 'web mitigated', (p) => p.status?.counts?.mitigated === 1, { timeoutMs: 60_000, context: logs });
    const record = await findRecord('Service', ns, 'web');
    expect(record).toBeDefined();
    // What a GitOps prune of the LoopbackRecord CRD does to this target: its record is gone.
    expect((await kubectl(['delete', 'loopbackrecord', record!.metadata!.name!])).code).toBe(0);
    const stalled = await waitForCondition(ref, 'Stalled', { reason: 'RecordLost', timeoutMs: 150_000, context: logs });
    expect(stalled.message).toMatch(/LoopbackRecord is missing/);
    const web = reportedStatus(await getPolicy(ref)).targets.find((t) => t.name === 'web');
    expect(web?.message).toContain(`kubectl annotate service web -n ${ns} ${PREVENT}-`);
    const warned = async (object: string) => (await core.listNamespacedEvent({ namespace: ns, fieldSelector: `reason=RecordLost,involvedObject.name=${object}` })).items;
    await waitFor('a RecordLost Warning on web', async () => ((await warned('web')).length > 0 ? true : undefined));

    await deletePolicy(ref, { context: logs });
    // Nothing could be restored: the change stays, and the deleted policy said so on the Service and on itself.
    expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[PREVENT]).toBe('true');
    await waitFor('the deletion warned about the lost record', async () => ((await warned('p')).some((e) => /deleted without restoring 1 target/.test(e.message ?? '')) ? true : undefined));
  }, 300_000);

  it('TKE not running at all: the auto-config wait ends in Stalled after the grace period, with the way out', async () => {
    const ns = await createNamespace('wait-stopped');
    tke.namespaces.add(ns);
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: 'a.example.com', paths: ['/'] }] }) });
    await ingressLb(ns, 'web');
    await tke.simulator.stop();
    const ref = { namespace: ns, name: 'p' };
    const asked = Date.now();
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', l7: { keepalive: true } }))).stderr).toBe('');
    await waitForCondition(ref, 'Stalled', { reason: 'TkeSyncFailed', timeoutMs: GRACE_MS + ONE_ROUND_MS + 15_000, context: logs });
    const took = Date.now() - asked;
    expect(took).toBeGreaterThanOrEqual(GRACE_MS);
    const web = reportedStatus(await getPolicy(ref)).targets.find((t) => t.name === 'web');
    expect(web?.message).toMatch(/TKE did not create TkeServiceConfig web-auto-ingress-config within its grace period \(10 s\) and reports no Warning Event about it/);
    expect(web?.message).toMatch(/ingress\.cloud\.tencent\.com\/tke-service-config/);
    // `kubectl wait` returns: the policy's Ready is False with the reason, not Progressing forever.
    expect(findCondition((await getPolicy(ref)).status?.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'TkeSyncFailed' });
    console.log(`TKE stopped: Stalled ${Math.round(took / 100) / 10} s after the policy was applied (grace ${GRACE_MS / 1000} s)`);
  }, 120_000);
});
