// Issue 22 #3, #4 on the local TKE: every wait for TKE ends (TKE failing with Warning Events on the Ingress, or not
// running at all, makes the policy Stalled within the grace period plus one round, with TKE's message and the way
// out), and a deletion held up by throttled writes says so in the policy's status.
//
// The held-up deletion is tested where it is hardest to report: in a terminating namespace. Deleting the namespace
// deletes its LoopbackPolicy, and the apiserver's NamespaceLifecycle admission now refuses every new Event there
// (403 "… because it is being terminated"), while status updates and deletions still pass. With every ModifyListener
// throttled, the policy's revert is held up: its status must say so (Terminating, naming the cause) although not one
// Event can be written, the operator must log the refused Events and go on, and once the throttling ends the revert
// must finish in the safe order (prevent-loopback first, then the sources back to their recorded originals) and
// release the finalizer. A throttled deletion in an ordinary namespace (Terminating while it waits, then restored)
// is heavy-throttling.test.ts's.
//
// The test apiserver runs no namespace controller: the namespace stays Terminating (finalizer `kubernetes`) and
// the test deletes the policy itself, as that controller would. The namespace controller would delete the Service
// too (TKE's cleanup finalizer then deletes its CLB); here the Service stays until the revert is done, the case
// where the policy's deletion is the one held up. The cleanup finishes the namespace as that controller would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiException, CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { findCondition } from '../../src/api/conditions.js';
import { FINALIZER } from '../../src/api/loopbackpolicy.js';
import { DEFAULT_RETRY_POLICY } from '../../src/cloud/index.js';
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
/**
 * One round of a deletion whose CLB writes are throttled: the client retries a throttled call until its retry
 * deadline, then the round ends and writes the cause; plus one ordinary round of slack.
 */
const ONE_DELETION_ROUND_MS = DEFAULT_RETRY_POLICY.deadlineMs + ONE_ROUND_MS;
const seconds = (ms: number) => Math.round(ms / 100) / 10;
/** What NamespaceLifecycle answers a create in a terminating namespace. */
const REFUSED = /unable to create new content in namespace \S+ because it is being terminated/;

describe('every wait for TKE ends; a held-up deletion says so, even where no Event can be written', () => {
  let tke: LocalTke;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;
  /**
   * The operator's log lines that say an Event of the revert (OriginalsRestored) could not be written, from its start.
   * Events are written at a steady pace (src/kube/events.ts), so the Enforce's may still be refused after the mark.
   */
  const refusedEvents = () => (tke.operator?.logs() ?? '').split('\n').filter((line) => /Could not write an Event/.test(line) && /"reason":"OriginalsRestored"/.test(line));

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

  it('every ModifyListener throttled and the namespace terminating: Terminating with the cause, then restored in order once the throttling ends', async () => {
    const ns = await createNamespace('del-term');
    tke.namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('web', AT_RISK_L4) });
    const lb = await waitFor('CLB of web', async () => (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[SERVICE_LB_ID]);
    const ref = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).stderr).toBe('');
    // Mitigated first (Ready alone may be a round that found TKE's listeners not there yet): the deletion under test
    // restores what Enforce changed, not a round still switching sources.
    await waitForPolicy(ref, 'web mitigated', (p) => p.status?.counts?.mitigated === 1, { timeoutMs: 60_000, context: logs });
    expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[PREVENT]).toBe('true');
    // What the revert must give back: the sources the record holds, per listener, all of them switched now.
    const originals = (await findRecord('Service', ns, 'web'))?.spec.originals.listeners ?? {};
    const listenerIds = Object.keys(originals).sort();
    expect(listenerIds.length).toBe(AT_RISK_L4.ports.length);
    const sources = async () => Object.fromEntries((await tke.emulator.admin.getLoadBalancer(lb)).Listeners.filter((l) => listenerIds.includes(l.ListenerId)).map((l) => [l.ListenerId, l.HealthCheck?.SourceIpType]));
    // A TKE sync that read the Service before prevent-loopback may still put a source back (sync scope all); the drift
    // check switches it again. The deletion under test starts from switched sources: drain TKE, wait for them.
    await tke.simulator.resyncNow();
    const switched = await waitFor('every listener switched', async () => {
      const now = await sources();
      return listenerIds.every((id) => now[id] !== undefined && now[id] !== originals[id]?.sourceIpType) ? now : undefined;
    }, { timeoutMs: 30_000, context: logs });
    for (const id of listenerIds) expect(switched[id]).not.toBe(originals[id]?.sourceIpType);
    const refusedBefore = refusedEvents().length;
    const writesBefore = (await tke.emulator.admin.writes()).at(-1)?.seq ?? 0;
    let lifted = Infinity;

    await tke.emulator.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'error', code: 'RequestLimitExceeded', message: 'throttled (injected)', loadBalancerId: lb }] });
    try {
      // The namespace goes first; its controller then deletes what is in it, the policy among them.
      expect((await kubectl(['delete', 'namespace', ns, '--wait=false'])).code).toBe(0);
      expect((await core.readNamespace({ name: ns })).status?.phase).toBe('Terminating');
      // The premise: no Event can be created in it any more (as the operator's will be refused).
      const refused = await core
        .createNamespacedEvent({ namespace: ns, body: { metadata: { generateName: 'probe.' }, involvedObject: { kind: 'Service', namespace: ns, name: 'web' }, reason: 'Probe', message: 'probe', type: 'Normal' } })
        .then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(ApiException);
      expect((refused as ApiException<unknown>).code).toBe(403);
      expect(String((refused as ApiException<unknown>).body)).toMatch(REFUSED);

      const asked = Date.now();
      await deletePolicy(ref, { wait: false });
      const deleting = await getPolicy(ref);
      expect(deleting.metadata.deletionTimestamp).toBeDefined();
      expect(deleting.metadata.finalizers).toContain(FINALIZER);
      // At once, before the revert's first CLB call (the cause is not known yet): the status no longer says Ready.
      // The status write passes NamespaceLifecycle; only creates are refused.
      const first = await waitForCondition(ref, 'Ready', { status: 'False', reason: 'Terminating', timeoutMs: ONE_ROUND_MS, context: logs });
      // "restoring" before the revert's first round, then its wait for kube-proxy to release the VIP (prevent-loopback off).
      expect(first.message).toMatch(/the policy is being deleted: its finalizer stays until 1 target\(s\) have their originals back, e\.g\. Service web: (restoring\.|waiting \d+ s for kube-proxy)/);
      const held = Date.now() - asked;
      // Then the cause, when the round's throttled ModifyListener gives up (the client's retry deadline at most).
      const cause = await waitForPolicy(
        ref,
        'Terminating with the cause in its status',
        (p) => /RequestLimitExceeded|throttled/.test(findCondition(p.status?.conditions, 'Ready')?.message ?? ''),
        { timeoutMs: GRACE_MS + ONE_DELETION_ROUND_MS, context: logs },
      );
      const named = Date.now() - asked;
      console.log(
        `terminating namespace: the deletion said Terminating ${seconds(held)} s and named its cause ${seconds(named)} s after the policy was deleted ` +
          `(bound: grace ${seconds(GRACE_MS)} s + one deletion round ${seconds(ONE_DELETION_ROUND_MS)} s)`,
      );
      const ready = findCondition(cause.status?.conditions, 'Ready');
      expect(ready).toMatchObject({ status: 'False', reason: 'Terminating' });
      expect(ready?.message).toMatch(/the policy is being deleted: its finalizer stays until 1 target\(s\) have their originals back, e\.g\. Service web: /);
      expect(ready?.message).toMatch(/RequestLimitExceeded: throttled \(injected\)\).*[^.]\. loopguard keeps retrying$/);
      expect(findCondition(cause.status?.conditions, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Terminating', message: expect.stringMatching(/RequestLimitExceeded: throttled \(injected\)/) });
      expect(cause.metadata.finalizers).toContain(FINALIZER);

      // The safe order so far: prevent-loopback is gone, no source has moved (every ModifyListener is refused).
      expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[PREVENT]).toBeUndefined();
      expect(await sources()).toEqual(switched);
      expect((await tke.emulator.admin.writes(writesBefore)).filter((w) => w.loadBalancerId === lb)).toEqual([]);
      // The operator tried to say so in Events (OriginalsRestored for the annotation), was refused, logged it and
      // went on: it still runs, and it did not retry the refused Event in a loop.
      const refusals = refusedEvents().slice(refusedBefore);
      expect(refusals.length).toBeGreaterThanOrEqual(1);
      expect(refusals.every((line) => REFUSED.test(line))).toBe(true);
      expect(tke.operator?.child.exitCode).toBeNull();
    } finally {
      lifted = Date.now();
      await tke.emulator.admin.clearFaults();
    }

    // The throttling ends: the revert finishes and the finalizer goes.
    await waitForPolicyGone(ref, { timeoutMs: 120_000, context: logs });
    // Every source is back at its recorded original. Who wrote it last does not matter: TKE's resync (sync scope
    // `all`) may put its own view back once prevent-loopback is gone, and loopguard's restore then finds it done.
    // What matters is the order: no source moved before the throttling ended, and prevent-loopback was gone by then.
    expect(await sources()).toEqual(Object.fromEntries(listenerIds.map((id) => [id, originals[id]?.sourceIpType])));
    const writes = (await tke.emulator.admin.writes(writesBefore)).filter((w) => w.loadBalancerId === lb);
    expect(writes.filter((w) => w.acceptedAtMs < lifted)).toEqual([]);
    expect([...new Set(writes.filter((w) => w.changed.length > 0).map((w) => w.listenerId))].sort()).toEqual(listenerIds);
    expect(await findRecord('Service', ns, 'web')).toBeUndefined();
    // Every Event the revert meant to write was refused once: one for the annotation, one per listener restored.
    expect(refusedEvents().length - refusedBefore).toBeLessThanOrEqual(1 + listenerIds.length);
    expect(tke.operator?.child.exitCode).toBeNull();

    // Clean up as the namespace controller would: delete what is left (TKE's finalizer takes the CLB with the
    // Service), then finalize the namespace so it does not stay Terminating for the rest of the run.
    await core.deleteNamespacedService({ namespace: ns, name: 'web' });
    await waitFor('Service web deleted', async () => ((await core.listNamespacedService({ namespace: ns })).items.length === 0 ? true : undefined), { timeoutMs: 60_000 });
    await core.deleteCollectionNamespacedEvent({ namespace: ns });
    const terminating = await core.readNamespace({ name: ns });
    await core.replaceNamespaceFinalize({ name: ns, body: { ...terminating, spec: { finalizers: [] } } });
    await waitFor(`namespace ${ns} gone`, async () => (await core.readNamespace({ name: ns }).then(() => undefined, (err: unknown) => (err instanceof ApiException && err.code === 404 ? true : undefined))));
    tke.namespaces.delete(ns);
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
