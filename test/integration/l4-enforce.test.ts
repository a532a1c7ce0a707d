// L4 Enforce end to end on the local TKE (ipvs-new profile): real apiserver, the CLB emulator, the TKE simulator
// and the operator as its own process under config/'s ServiceAccount. An Enforce policy over a mix of Services
// switches exactly the at-risk listeners' health-check source (every other HealthCheck field untouched), adds
// prevent-loopback after the switch, brings dropped health checks back, corrects drift, and restores every
// original on deletion; with injected faults the same converges without extra listener writes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Service } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import type { AdminLoadBalancer, HealthCheckState } from '../../sim/clb-emulator/admin-types.js';
import { clbClient } from '../emulator/support.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, deletePolicy, getPolicy, policyManifest, reportedStatus, waitForCondition, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { lbService } from '../support/workload.js';

const SUBNET = { 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid': 'subnet-demo0001' };
const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';

type HcSnapshot = Map<string, HealthCheckState | null>;

describe('L4 Enforce on the local TKE (ipvs-new)', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let operator: OperatorProcess;
  let namespaces: Set<string>;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    // A TKE whose service controller does not switch the source on prevent-loopback (older controllers; the
    // documented default does, see sim/README.md): here a user's own prevent-loopback drops every health check,
    // which is the fault loopguard must find and fix by itself. Its sync re-applies only declared fields (sync scope
    // `declared`): with the documented `all` a sync would put back the console user's custom checks this suite
    // holds loopguard to preserve, and — without the switch — undo loopguard's own switch (sim/README.md).
    tke = await startLocalTke({
      simulator: { switchHealthCheckSourceOnPreventLoopback: false, syncScope: 'declared' },
      // A 3 s grace period instead of the default 10 s: every restore waits it out between taking prevent-loopback off
      // and putting the sources back (kube-proxy unbinding the VIP), and nothing here depends on its length.
      operator: { extraArgs: ['--drift-check-interval=2s', '--tke-grace-period=3s'] },
    });
    ({ emulator, namespaces } = tke);
    operator = tke.operator!;
  });

  afterAll(async () => {
    await tke?.stop();
  });

  async function lbOf(ns: string, name: string): Promise<string> {
    const s = await core.readNamespacedService({ namespace: ns, name });
    return s.metadata?.annotations?.[LB_ID] ?? '';
  }

  async function listenersOf(lbId: string): Promise<AdminLoadBalancer['Listeners']> {
    return (await emulator.admin.getLoadBalancer(lbId)).Listeners;
  }

  async function snapshot(lbIds: string[]): Promise<HcSnapshot> {
    const out: HcSnapshot = new Map();
    for (const id of lbIds) for (const l of await listenersOf(id)) out.set(`${id}/${l.ListenerId}`, l.HealthCheck ? { ...l.HealthCheck } : null);
    return out;
  }

  async function health(lbId: string): Promise<string[]> {
    const res = await clbClient(emulator).DescribeTargetHealth({ LoadBalancerIds: [lbId] });
    return (res.LoadBalancers ?? []).flatMap((lb) =>
      (lb.Listeners ?? []).flatMap((l) => (l.Rules ?? []).flatMap((r) => (r.Targets ?? []).map((t) => t.HealthStatusDetail ?? (t.HealthStatus ? 'Alive' : 'Dead')))),
    );
  }

  /** A policy wait that times out shows the operator's side too. */
  const operatorLogs = () => `--- operator logs (tail) ---\n${operator.logs().slice(-4000)}`;

  /** An Enforce policy that reverts on delete, applied without a word on stderr. */
  async function applyEnforce(ref: PolicyRef): Promise<void> {
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
  }

  async function createAndAssign(ns: string, services: V1Service[], unassigned: string[] = []): Promise<Record<string, string>> {
    for (const body of services) await core.createNamespacedService({ namespace: ns, body });
    return waitFor(
      'CLBs assigned',
      async () => {
        const ids: Record<string, string> = {};
        for (const s of services) {
          const name = s.metadata?.name ?? '';
          if (unassigned.includes(name)) continue;
          const id = await lbOf(ns, name);
          if (!id) return undefined;
          const ls = await listenersOf(id);
          if (ls.length < (s.spec?.ports?.length ?? 0)) return undefined;
          ids[name] = id;
        }
        return ids;
      },
      { timeoutMs: 30_000 },
    );
  }

  it('switches exactly the at-risk listeners and sets prevent-loopback; corrects drift; restores everything on delete', async () => {
    const ns = await createNamespace('l4-enforce');
    namespaces.add(ns);
    const ids = await createAndAssign(
      ns,
      [
        lbService('local-multi', { annotations: SUBNET, etp: 'Local', ports: [[80, 'TCP'], [53, 'UDP']] }),
        lbService('bound', { annotations: { ...SUBNET, [PREVENT]: 'true' } }),
        lbService('private-cluster', { annotations: SUBNET }),
        lbService('public', { etp: 'Local' }),
        // IPv6 CLBs are public-only (tencent-cloud.md §9 #4). With prevent-loopback, kube-proxy still binds the IPv6 VIP and
        // drops its VIP-sourced health checks, and no 100.64 source exists for IPv6: Unsupported, not just Public.
        lbService('ipv6', { annotations: { [PREVENT]: 'true', 'service.kubernetes.io/service.extensiveParameters': '{"AddressIPVersion":"IPV6"}' }, etp: 'Local' }),
        lbService('opted-out', { annotations: { ...SUBNET, 'loopguard.dev/skip': 'true' }, etp: 'Local' }),
        lbService('pending', { annotations: { ...SUBNET, 'service.kubernetes.io/tke-existed-lbid': 'lb-notyet00' }, etp: 'Local' }),
      ],
      ['pending'],
    );
    // A console user's non-default health-check settings must survive every write.
    const multi = await listenersOf(ids['local-multi'] ?? '');
    const tcp = multi.find((l) => l.Protocol === 'TCP');
    const udp = multi.find((l) => l.Protocol === 'UDP');
    expect(tcp && udp).toBeTruthy();
    await emulator.admin.patchListener(ids['local-multi'] ?? '', tcp?.ListenerId ?? '', { HealthCheck: { IntervalTime: 13, HealthNum: 4, TimeOut: 3 } });
    await emulator.admin.patchListener(ids['local-multi'] ?? '', udp?.ListenerId ?? '', {
      HealthCheck: { CheckType: 'CUSTOM', ContextType: 'TEXT', SendContext: 'ping', RecvContext: 'pong', UnHealthNum: 5 },
    });
    // kube-proxy (ipvs-new) binds the VIP for the user's prevent-loopback: VIP-sourced probes all drop.
    const boundLb = ids.bound ?? '';
    await waitFor('bound: all Dead', async () => {
      const h = await health(boundLb);
      return h.length > 0 && h.every((s) => s !== 'Alive') ? true : undefined;
    });
    const allIds = Object.values(ids);
    const before = await snapshot(allIds);
    await emulator.admin.resetStats();

    const policy = { namespace: ns, name: 'enforce' };
    await applyEnforce(policy);
    await waitForCondition(policy, 'Ready', { timeoutMs: 45_000, context: operatorLogs });
    const got = reportedStatus(await getPolicy(policy));
    const verdicts = Object.fromEntries(got.targets.map((t) => [t.name, `${t.verdict}/${t.rootCause}`]));
    expect(verdicts).toEqual({
      'local-multi': 'Mitigated/LoopbackPrevented',
      bound: 'Mitigated/LoopbackPrevented',
      'private-cluster': 'NotApplicable/MasqueradedToNodeIp',
      public: 'NotApplicable/PublicClb',
      ipv6: expect.stringMatching(/^Unsupported\/Ipv6Clb$/),
      'opted-out': 'Skipped/SkipAnnotation',
      pending: expect.stringMatching(/^Pending\//),
    });
    expect(got.conditions.find((c) => c.type === 'Stalled')).toBeUndefined();

    // SourceIpType=1 exactly on the at-risk listeners; every other field as before.
    const atRisk = new Set([...(await listenersOf(ids['local-multi'] ?? '')), ...(await listenersOf(boundLb))].map((l) => l.ListenerId));
    const after = await snapshot(allIds);
    for (const [key, hc] of before) {
      const listenerId = key.split('/')[1] ?? '';
      const expected = hc && atRisk.has(listenerId) ? { ...hc, SourceIpType: 1 } : hc;
      expect({ key, hc: after.get(key) }).toEqual({ key, hc: expected });
    }
    // One write per switched listener, nothing else; no throttling with faults off.
    const stats = await emulator.admin.stats();
    expect(Object.values(stats.listenerWrites).sort()).toEqual([1, 1, 1]);
    expect(Object.keys(stats.listenerWrites).every((k) => atRisk.has(k.split('/')[1] ?? ''))).toBe(true);
    expect(Object.values(stats.throttled).reduce((a, b) => a + b, 0)).toBe(0);

    // The annotation is set and recorded as absent originally (that it waits for the switch, and comes off
    // first on delete, is shown under failing writes in l4-restart.test.ts).
    const svc = await core.readNamespacedService({ namespace: ns, name: 'local-multi' });
    expect(svc.metadata?.annotations?.[PREVENT]).toBe('true');
    // The record also names what took effect (the drift rule reads it), written with the annotation.
    // The originals live in a LoopbackRecord no namespace user can write, not on the Service.
    expect(Object.keys(svc.metadata?.annotations ?? {}).filter((k) => k.startsWith('loopguard.dev/'))).toEqual([]);
    const entry = await findRecord('Service', ns, 'local-multi');
    expect(entry?.spec.policy).toEqual({ namespace: ns, name: 'enforce' });
    expect(entry?.spec.originals).toEqual({
      v: 1,
      listeners: { [tcp?.ListenerId ?? '']: { sourceIpType: 0 }, [udp?.ListenerId ?? '']: { sourceIpType: 0 } },
      annotations: { [PREVENT]: null },
      // The CLB the listener originals were read from: a restore goes there, whatever the annotation says later.
      loadBalancerId: ids['local-multi'],
      applied: [`annotation/${PREVENT}`, `listener/${tcp?.ListenerId ?? ''}/sourceIpType`, `listener/${udp?.ListenerId ?? ''}/sourceIpType`].sort(),
    });
    expect(svc.metadata?.managedFields?.some((f) => f.manager === 'loopguard')).toBe(true);
    // Events are queued (src/kube/events.ts), so the status of the same round can be written before them.
    const switchedEvents = await waitFor('the switch and annotation Events', () => core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=local-multi' }), {
      until: (list) => ['HealthCheckSourceSwitched', 'PreventLoopbackAnnotated'].every((r) => list.items.some((e) => e.reason === r)),
      timeoutMs: 30_000,
    });
    expect(switchedEvents.items.map((e) => e.reason)).toEqual(expect.arrayContaining(['HealthCheckSourceSwitched', 'PreventLoopbackAnnotated']));

    // Health checks from 100.64 are not dropped: all Dead → all Alive.
    await waitFor('bound: all Alive', async () => {
      const h = await health(boundLb);
      return h.length > 0 && h.every((s) => s === 'Alive') ? true : undefined;
    });

    // Not yet assigned → picked up once TKE writes the CLB id (here: the named existing CLB appears).
    await emulator.admin.seedLoadBalancer({ LoadBalancerId: 'lb-notyet00', LoadBalancerType: 'INTERNAL' });
    await core.patchNamespacedService(
      { namespace: ns, name: 'pending', body: { metadata: { labels: { nudge: '1' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor(
      'late Service mitigated',
      async () => {
        const ls = await listenersOf('lb-notyet00');
        if (ls.length < 1 || ls.some((l) => l.HealthCheck?.SourceIpType !== 1)) return undefined;
        const row = reportedStatus(await getPolicy(policy)).targets.find((t) => t.name === 'pending');
        return row?.verdict === 'Mitigated' ? true : undefined;
      },
      { timeoutMs: 20_000 },
    );

    // Opting a mitigated target out gives back what loopguard changed on it (and only that) — except that no source
    // goes back to the VIP its user's own prevent-loopback keeps bound: they stay on 100.64, their originals forgotten.
    await core.patchNamespacedService(
      { namespace: ns, name: 'bound', body: { metadata: { annotations: { 'loopguard.dev/skip': 'true' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor('skipped target released', async () => ((await findRecord('Service', ns, 'bound')) === undefined ? true : undefined));
    expect((await listenersOf(boundLb)).map((l) => l.HealthCheck?.SourceIpType)).toEqual((await listenersOf(boundLb)).map(() => 1));
    const released = await health(boundLb);
    expect(released.length > 0 && released.every((h) => h === 'Alive')).toBe(true);
    expect((await core.readNamespacedService({ namespace: ns, name: 'bound' })).metadata?.annotations?.[PREVENT]).toBe('true');

    // Drift: a console user puts one listener back to the VIP; loopguard corrects it with a Warning Event.
    await emulator.admin.patchListener(ids['local-multi'] ?? '', tcp?.ListenerId ?? '', { HealthCheck: { SourceIpType: 0 } });
    await waitFor(
      'drift corrected',
      async () => {
        const l = (await listenersOf(ids['local-multi'] ?? '')).find((x) => x.ListenerId === tcp?.ListenerId);
        if (l?.HealthCheck?.SourceIpType !== 1) return undefined;
        const ev = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=local-multi' });
        return ev.items.some((e) => e.reason === 'DriftCorrected' && e.type === 'Warning') ? true : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const metrics = await waitFor('local-multi reported Mitigated', async () => {
      const text = await (await fetch(`http://127.0.0.1:${operator.port}/metrics`)).text();
      return text.includes(`loopguard_target_risk{namespace="${ns}",policy="enforce",kind="Service",name="local-multi",verdict="Mitigated"} 1`) ? text : undefined;
    });
    expect(metrics).toMatch(/loopguard_drift_corrections_total\{kind="ListenerHealthCheckSource"\} [1-9]/);
    // Its earlier AtRisk series is gone (an AtRisk alert clears), and it has no error series.
    expect(metrics).not.toContain(`loopguard_target_risk{namespace="${ns}",policy="enforce",kind="Service",name="local-multi",verdict="AtRisk"}`);
    expect(metrics).not.toContain(`loopguard_target_errors{namespace="${ns}",policy="enforce",kind="Service",name="local-multi"`);

    // Delete: sources restored exactly, loopguard's bookkeeping gone (the order is shown in l4-restart.test.ts) — but
    // bound's, released on opt-out above, stay on 100.64 under its user's own prevent-loopback.
    await deletePolicy(policy, { context: operatorLogs });
    const expected: HcSnapshot = new Map([...before].map(([key, hc]) => [key, key.startsWith(`${boundLb}/`) && hc ? { ...hc, SourceIpType: 1 } : hc]));
    expect(await snapshot(allIds)).toEqual(expected);
    for (const s of (await core.listNamespacedService({ namespace: ns })).items) {
      const ann = s.metadata?.annotations ?? {};
      expect({ name: s.metadata?.name, keys: Object.keys(ann).filter((k) => k.startsWith('loopguard.dev/') && k !== 'loopguard.dev/skip') }).toEqual({
        name: s.metadata?.name,
        keys: [],
      });
    }
    expect((await core.readNamespacedService({ namespace: ns, name: 'local-multi' })).metadata?.annotations?.[PREVENT]).toBeUndefined();
    expect((await listenersOf('lb-notyet00')).map((l) => l.HealthCheck?.SourceIpType)).toEqual([0]);
    // The user's own prevent-loopback stays.
    expect((await core.readNamespacedService({ namespace: ns, name: 'bound' })).metadata?.annotations?.[PREVENT]).toBe('true');
    await waitFor('OriginalsRestored on local-multi', async () =>
      (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=local-multi' })).items.some((e) => e.reason === 'OriginalsRestored') ? true : undefined,
    );
  });

  it('converges with 20 % injected faults, one accepted write per listener', async () => {
    const ns = await createNamespace('l4-faults');
    namespaces.add(ns);
    const names = ['f-a', 'f-b', 'f-c', 'f-d'];
    const ids = await createAndAssign(
      ns,
      names.map((n) => lbService(n, { annotations: SUBNET, etp: 'Local', ports: [[80, 'TCP'], [53, 'UDP']] })),
    );
    const allIds = Object.values(ids);
    const before = await snapshot(allIds);
    await emulator.admin.resetStats();
    await emulator.admin.setFaults({
      seed: 42,
      rules: [
        { action: '*', rate: 0.08, kind: 'error', code: 'RequestLimitExceeded' },
        { action: '*', rate: 0.06, kind: 'error', code: 'FailedOperation.ResourceInOperating' },
        { action: '*', rate: 0.06, kind: 'http5xx' },
      ],
    });
    const policy = { namespace: ns, name: 'faulty' };
    try {
      await applyEnforce(policy);
      await waitForCondition(policy, 'Ready', { timeoutMs: 60_000, context: operatorLogs });
      const got = reportedStatus(await getPolicy(policy));
      expect(got.targets.map((t) => `${t.name}:${t.verdict}`).sort()).toEqual(names.map((n) => `${n}:Mitigated`));
      const after = await snapshot(allIds);
      for (const [key, hc] of before) expect({ key, hc: after.get(key) }).toEqual({ key, hc: hc ? { ...hc, SourceIpType: 1 } : hc });
      const stats = await emulator.admin.stats();
      expect(Object.keys(stats.listenerWrites)).toHaveLength(names.length * 2);
      expect(Math.max(...Object.values(stats.listenerWrites))).toBe(1);
      expect(Object.values(stats.errors).length).toBeGreaterThan(0);
    } finally {
      await emulator.admin.clearFaults();
    }
    await deletePolicy(policy, { context: operatorLogs });
    expect(await snapshot(allIds)).toEqual(before);
  });
  // Issue 15 #7, in this TKE that does not maintain the source itself (in the documented default TKE puts a
  // drifted source back on its own resync, because prevent-loopback asks it to).
  it('Enforce → Audit keeps the changes made in Enforce, corrects their drift, makes no new change, and says so', async () => {
    const ns = await createNamespace('mode-switch');
    namespaces.add(ns);
    const ids = await createAndAssign(ns, [lbService('web', { annotations: SUBNET, etp: 'Local' })]);
    const lb = ids.web ?? '';
    const ref: PolicyRef = { namespace: ns, name: 'p' };
    await applyEnforce(ref);
    await waitForPolicy(ref, 'web Mitigated', (p) => reportedStatus(p).targets.find((t) => t.name === 'web')?.verdict === 'Mitigated', { timeoutMs: 60_000, context: operatorLogs });
    expect((await applyPolicy(policyManifest(ref, { mode: 'Audit', revertOnDelete: true }))).stderr).toBe('');
    const audit = await waitForPolicy(ref, 'Audit evaluated', (p) => p.status?.observedGeneration === p.metadata?.generation && reportedStatus(p).conditions.some((c) => c.reason === 'AuditComplete'), {
      timeoutMs: 60_000,
      context: operatorLogs,
    });
    expect(reportedStatus(audit).conditions.find((c) => c.type === 'Ready')?.message).toMatch(/1 target keep the changes made in Enforce/);
    expect(reportedStatus(audit).targets.find((t) => t.name === 'web')?.message).toMatch(/Audit: loopguard keeps the changes it made in Enforce/);
    expect((await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[PREVENT]).toBe('true');

    // A new at-risk Service under Audit: reported with its plan, never written.
    const fresh = (await createAndAssign(ns, [lbService('fresh', { annotations: SUBNET, etp: 'Local' })])).fresh ?? '';
    const freshBefore = await snapshot([fresh]);
    await waitForPolicy(ref, 'fresh planned', (p) => (reportedStatus(p).targets.find((t) => t.name === 'fresh')?.plan ?? []).length > 0, { timeoutMs: 60_000, context: operatorLogs });

    // Someone puts web's listener back on the VIP while prevent-loopback stays: every health check would drop.
    const listener = (await listenersOf(lb))[0]!;
    await emulator.admin.patchListener(lb, listener.ListenerId ?? '', { HealthCheck: { SourceIpType: 0 } });
    await waitFor('the drift corrected under Audit', async () => ((await listenersOf(lb)).every((l) => l.HealthCheck?.SourceIpType === 1) ? true : undefined), { timeoutMs: 60_000 });
    await waitFor(
      'a DriftCorrected Event on web',
      async () => ((await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=DriftCorrected,involvedObject.name=web' })).items.length > 0 ? true : undefined),
      { timeoutMs: 30_000, context: operatorLogs },
    );
    expect(await snapshot([fresh])).toEqual(freshBefore);
    expect((await core.readNamespacedService({ namespace: ns, name: 'fresh' })).metadata?.annotations?.[PREVENT]).toBeUndefined();
    await deletePolicy(ref, { context: operatorLogs });
  });

  // Last: the operator remembers the refusal for the account (AccountCapabilities) for the rest of its life.
  it('goes Stalled with the cause and fix when the account lacks the 100.64 source, and never annotates', async () => {
    const ns = await createNamespace('l4-capability');
    namespaces.add(ns);
    const ids = await createAndAssign(ns, [lbService('nocap', { annotations: SUBNET, etp: 'Local', ports: [[80, 'TCP'], [53, 'UDP']] })]);
    const before = await snapshot(Object.values(ids));
    await emulator.admin.setCapabilities({ healthCheckSource100_64: false });
    const policy = { namespace: ns, name: 'nocap' };
    try {
      await applyEnforce(policy);
      await waitForCondition(policy, 'Stalled', { timeoutMs: 30_000, context: operatorLogs });
      const st = reportedStatus(await getPolicy(policy));
      const stalled = st.conditions.find((c) => c.type === 'Stalled');
      expect(stalled).toMatchObject({ status: 'True', reason: 'HealthCheckSourceCapabilityMissing' });
      expect(stalled?.message ?? '').toMatch(/ticket/i);
      expect(await snapshot(Object.values(ids))).toEqual(before);
      const svc = await core.readNamespacedService({ namespace: ns, name: 'nocap' });
      expect(svc.metadata?.annotations?.[PREVENT]).toBeUndefined();
      await waitFor('a CapabilityMissing Warning on nocap', async () =>
        (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=nocap' })).items.some((e) => e.reason === 'CapabilityMissing' && e.type === 'Warning') ? true : undefined,
      );
    } finally {
      await emulator.admin.setCapabilities({ healthCheckSource100_64: true });
    }
    await deletePolicy(policy, { context: operatorLogs });
    const after = await core.readNamespacedService({ namespace: ns, name: 'nocap' });
    expect(Object.keys(after.metadata?.annotations ?? {}).filter((k) => k.startsWith('loopguard.dev/'))).toEqual([]);
    expect(await snapshot(Object.values(ids))).toEqual(before);
  });
});
