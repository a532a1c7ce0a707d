// Enforce and its revert against a CLB quota far below loopguard's own floor (issue 38 #7): the emulator serves the
// write (ModifyListener) and its poll (DescribeTaskStatus) at 0.2 req/s — one call every 5 s for the whole account,
// while loopguard's adaptive rate does not go below 0.5 req/s (src/cloud/adaptive-rate.ts), so most of its calls
// are refused with RequestLimitExceeded. Both still complete, with one effective write per listener each way; the
// policy never stalls on throttling (it is transient); and the revert does not report done early: at the moment
// the policy disappears (its finalizer released), the listeners read through the SDK already have their originals
// back, and every restoring task had finished before. A write whose task polls are all refused (its task succeeded,
// loopguard cannot learn it) is not sent a second time: the next round reads the CLB instead of re-planning from the
// observation the write made stale (seen once in six runs of the first test; made certain by the second).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { findCondition } from '../../src/api/conditions.js';
import { API_VERSION, PLURAL, type LoopbackPolicy } from '../../src/api/loopbackpolicy.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { clbClient } from '../emulator/support.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { atRiskServicesWithClbs, startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, getPolicy, policyManifest, reportedStatus, waitForCondition } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { PRIVATE_SUBNET, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
/** Requests per second, for the whole account (TKE's controllers share it). */
const QUOTA = 0.2;
const THROTTLED = { ModifyListener: QUOTA, DescribeTaskStatus: QUOTA };
/**
 * A task runs this long: an operator that released the finalizer with a restore submitted but not finished would
 * be seen (the SDK read at the deletion comes within milliseconds; the old source stays until the task completes).
 */
const TASK_MS = 1_500;

interface Seen {
  at: number;
  phase: string;
  policy: LoopbackPolicy;
}

describe('Enforce and revert under heavy CLB throttling (0.2 req/s)', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let namespaces: Set<string>;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    // TKE re-applies only declared fields (as in l4-restart.test.ts): the restore under test is loopguard's alone,
    // and TKE's own writes would spend the same tiny quota. An `observer` caller reads the CLB through the SDK.
    tke = await startLocalTke({ emulator: { taskDurationMs: TASK_MS }, simulator: { syncScope: 'declared' }, moreCallers: ['observer'] });
    ({ emulator, namespaces } = tke);
  });

  afterAll(async () => {
    await tke?.stop();
  });

  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;

  it('completes Enforce and a revert, and the policy is gone only after the CLB is restored', async () => {
    const ns = await createNamespace('heavy-throttling');
    namespaces.add(ns);
    // Two Services, one CLB each, a TCP and a UDP listener each: four listeners, two CLBs written concurrently.
    const names = ['t-a', 't-b'];
    const ids = await atRiskServicesWithClbs(tke, ns, names, 30_000);
    const snapshot = async () => {
      const out: Record<string, unknown> = {};
      for (const id of ids) for (const l of (await emulator.admin.getLoadBalancer(id)).Listeners) out[`${id}/${l.ListenerId}`] = l.HealthCheck;
      return out;
    };
    const observer = clbClient(emulator, emulator.callers['observer']);
    /** Every listener's health-check source, as the API answers it (the observer's own quota is not throttled). */
    const sdkSources = async (): Promise<Record<string, number | null | undefined>> => {
      const out: Record<string, number | null | undefined> = {};
      for (const id of ids) {
        for (const l of (await observer.DescribeListeners({ LoadBalancerId: id })).Listeners ?? []) out[`${id}/${l.ListenerId}`] = l.HealthCheck?.SourceIpType;
      }
      return out;
    };
    const before = await snapshot();
    const originalSources = await sdkSources();
    expect(Object.values(originalSources)).toEqual([0, 0, 0, 0]);

    await emulator.admin.setConfig({ rpsPerAction: THROTTLED });
    await emulator.admin.resetStats();
    const seq = (await emulator.admin.writes()).at(-1)?.seq ?? 0;
    const loopguardWrites = async (since: number) => (await emulator.admin.writes(since)).filter((w) => w.caller === 'loopguard');

    // Enforce (25–40 s here: one write every 5 s, four listeners).
    const policy = { namespace: ns, name: 'throttled' };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
    await waitForCondition(policy, 'Ready', { timeoutMs: 100_000, intervalMs: 250, context: logs });
    expect(Object.values(await sdkSources())).toEqual([1, 1, 1, 1]);
    const enforced = reportedStatus(await getPolicy(policy));
    expect(enforced.targets.map((t) => `${t.name} ${t.verdict}`).sort()).toEqual(['t-a Mitigated', 't-b Mitigated']);
    // Throttling is transient: it never stalls the policy, and no target is left with an error.
    expect(findCondition(enforced.conditions, 'Stalled')?.status ?? 'False').toBe('False');
    for (const t of enforced.targets) expect(t.message ?? '').not.toMatch(/Last error/);
    for (const n of names) expect((await core.readNamespacedService({ namespace: ns, name: n })).metadata?.annotations?.[PREVENT]).toBe('true');
    // Exactly one effective write per listener; the throttle did bite (loopguard asks at ≥ 0.5 req/s).
    const applied = await loopguardWrites(seq);
    expect(applied.map((w) => `${w.loadBalancerId}/${w.listenerId} ${w.status} ${w.changed.join(',')}`).sort()).toEqual(
      Object.keys(before).map((k) => `${k} succeeded HealthCheck.SourceIpType`).sort(),
    );
    const stats = await emulator.admin.stats();
    expect((stats.throttled['ModifyListener'] ?? 0) + (stats.throttled['DescribeTaskStatus'] ?? 0)).toBeGreaterThan(0);
    // The quota held: accepted writes (any caller) at least 5 s apart.
    const accepted = (await emulator.admin.writes(seq)).map((w) => w.acceptedAtMs);
    for (let i = 1; i < accepted.length; i++) expect(accepted[i]! - accepted[i - 1]!).toBeGreaterThanOrEqual(1000 / QUOTA - 1);

    // Revert (40–48 s here). A real watch sees every version of the policy the API server stores, and its deletion; the CLB is read
    // through the SDK the moment the deletion arrives. The watch resumes from the last version it saw when the
    // client's inactivity timeout (30 s) ends it: a throttled revert can be quiet that long.
    const seen: Seen[] = [];
    let atDeletion: { at: number; sources: Record<string, number | null | undefined> } | undefined;
    let readError: unknown;
    let stopped = false;
    let watch: AbortController | undefined;
    let resourceVersion: string | undefined;
    const startWatch = async (): Promise<void> => {
      watch = await new Watch(kc).watch(
        `/apis/${API_VERSION}/namespaces/${ns}/${PLURAL}`,
        resourceVersion ? { resourceVersion } : {},
        (phase, obj: LoopbackPolicy) => {
          const at = Date.now();
          resourceVersion = obj.metadata.resourceVersion;
          seen.push({ at, phase, policy: obj });
          if (phase === 'DELETED') sdkSources().then((sources) => (atDeletion = { at, sources }), (err: unknown) => (readError = err));
        },
        () => {
          if (!stopped) startWatch().catch((err: unknown) => (readError = err));
        },
      );
    };
    await startWatch();
    const sinceEnforce = (await emulator.admin.writes()).at(-1)?.seq ?? 0;
    try {
      await deletePolicy(policy, { timeoutMs: 100_000, intervalMs: 250, context: logs });
      await waitFor('the SDK read at the deletion', () => (readError ? Promise.reject(readError) : atDeletion), {
        timeoutMs: 10_000,
        context: () => `watch: ${seen.map((s) => s.phase).join(' ')}`,
      });
    } finally {
      stopped = true;
      watch?.abort();
    }
    const deletion = atDeletion!;
    expect(deletion.sources).toEqual(originalSources);
    expect(await snapshot()).toEqual(before);
    // Every restore loopguard submitted had finished, and succeeded, before the policy went.
    const restored = await loopguardWrites(sinceEnforce);
    expect(restored.map((w) => `${w.loadBalancerId}/${w.listenerId} ${w.status} ${w.changed.join(',')}`).sort()).toEqual(
      Object.keys(before).map((k) => `${k} succeeded HealthCheck.SourceIpType`).sort(),
    );
    for (const w of restored) expect(w.finishedAtMs ?? Infinity).toBeLessThanOrEqual(deletion.at);
    // While it waited, the policy said it was restoring, never that it was blocked or done.
    const deleting = seen.filter((s) => s.phase !== 'DELETED' && s.policy.metadata.deletionTimestamp);
    expect(deleting.length).toBeGreaterThan(0);
    expect(deleting.filter((s) => findCondition(s.policy.status?.conditions, 'Stalled')?.status === 'True')).toEqual([]);
    expect(findCondition(deleting.at(-1)?.policy.status?.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'Terminating' });
    for (const n of names) {
      const ann = (await core.readNamespacedService({ namespace: ns, name: n })).metadata?.annotations ?? {};
      expect(Object.keys(ann).filter((k) => k.startsWith('loopguard.dev/') || k === PREVENT)).toEqual([]);
      expect(await findRecord('Service', ns, n)).toBeUndefined();
    }
  }, 240_000);

  it('does not send a write again when only its task polls were refused (the task succeeded)', async () => {
    // Every DescribeTaskStatus of loopguard's refused, as a quota others spend would refuse them: the write is
    // accepted and its task succeeds, but loopguard cannot learn it and the write fails. The next round must read
    // the CLB (its old observation is no longer true), not plan the same write again from it.
    const ns = await createNamespace('polls-refused');
    namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('web', { annotations: PRIVATE_SUBNET, etp: 'Local' }) });
    const lb = await waitFor('CLB assigned', async () => {
      const id = (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[LB_ID];
      return id && (await emulator.admin.getLoadBalancer(id)).Listeners.length === 1 ? id : undefined;
    });
    await emulator.admin.setConfig({ rpsPerAction: {} });
    await emulator.admin.resetStats();
    const seq = (await emulator.admin.writes()).at(-1)?.seq ?? 0;
    await emulator.admin.setFaults({ rules: [{ action: 'DescribeTaskStatus', rate: 1, kind: 'error', code: 'RequestLimitExceeded', message: 'throttled (injected)', caller: 'loopguard' }] });
    const policy = { namespace: ns, name: 'polls-refused' };
    try {
      expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
      await waitForCondition(policy, 'Ready', { timeoutMs: 90_000, context: logs });
    } finally {
      await emulator.admin.clearFaults();
    }
    expect(reportedStatus(await getPolicy(policy)).targets.map((t) => `${t.name} ${t.verdict}`)).toEqual(['web Mitigated']);
    // loopguard never learned its task's outcome (every poll refused, none answered)…
    const polls = (await emulator.admin.stats()).byCaller['loopguard']?.['DescribeTaskStatus'] ?? {};
    expect(Object.keys(polls)).toEqual(['RequestLimitExceeded']);
    // …and still wrote the listener once: the next round read the CLB instead of planning the write again.
    const writes = (await emulator.admin.writes(seq)).filter((w) => w.loadBalancerId === lb);
    expect(writes.map((w) => `${w.caller} ${w.status} ${w.changed.join(',')}`)).toEqual(['loopguard succeeded HealthCheck.SourceIpType']);
  }, 120_000);
});
