// Hostile input (issue 15): a user who may edit Services only in their own namespace tries to steer loopguard at
// CLBs that are not theirs — by overwriting TKE's read-only CLB id annotation with another Service's CLB (in
// another namespace, or a skipped one in their own), by hand-writing loopguard's old bookkeeping annotations, and
// by values built to break status (an id of 200 characters with control characters). The emulator's write log and
// the API server's objects show loopguard wrote nothing outside the user's own targets.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { createNamespace, kubeConfig, kubectl, userKubeconfigPath, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, getPolicy, policyManifest, reportedStatus, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { AT_RISK_L4, PRIVATE_INGRESS, lbIngress, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const SELECT = { 'loopguard.dev/protect': 'true' };
const SKIP = { 'loopguard.dev/skip': 'true' };

describe('hostile input from a namespace user', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let operator: OperatorProcess;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const logs = () => `--- operator logs (tail) ---\n${operator.logs().slice(-6000)}`;

  beforeAll(async () => {
    // TKE re-applies only declared fields (sync scope `declared`): this suite counts loopguard's writes and checks
    // what an abandoned revert leaves, which TKE's documented `all` sync would rewrite on its 1.5 s resync (after an
    // abandon that already removed prevent-loopback it puts the VIP source back itself).
    // A 3 s TKE grace period, not the default 10 s: a restore waits it out between taking prevent-loopback off and
    // putting the sources back, and nothing here depends on its length.
    tke = await startLocalTke({ resyncIntervalMs: 1_500, simulator: { syncScope: 'declared' }, operator: { extraArgs: ['--drift-check-interval=3s', '--tke-grace-period=3s'] } });
    emulator = tke.emulator;
    operator = tke.operator!;
  });

  afterAll(async () => {
    await tke?.stop();
  });

  async function createService(ns: string, name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}): Promise<string> {
    const body = lbService(name, { ...AT_RISK_L4, annotations: { ...AT_RISK_L4.annotations, ...annotations } });
    body.metadata = { ...body.metadata, labels: { ...body.metadata?.labels, ...labels } };
    await core.createNamespacedService({ namespace: ns, body });
    return waitFor(`CLB, listeners and status of Service ${ns}/${name}`, async () => {
      const s = await core.readNamespacedService({ namespace: ns, name });
      const id = s.metadata?.annotations?.[LB_ID];
      if (!id || !s.status?.loadBalancer?.ingress?.[0]?.ip) return undefined;
      return (await emulator.admin.getLoadBalancer(id)).Listeners.length >= 2 ? id : undefined;
    });
  }

  /** The source of each listener of a CLB, and how often the emulator accepted a ModifyListener on it. */
  async function clbState(id: string): Promise<{ sources: number[]; writes: number }> {
    const lb = await emulator.admin.getLoadBalancer(id);
    const stats = await emulator.admin.stats();
    const writes = Object.entries(stats.listenerWrites)
      .filter(([k]) => k.startsWith(`${id}/`))
      .reduce((n, [, v]) => n + v, 0);
    return { sources: lb.Listeners.map((l) => l.HealthCheck?.SourceIpType ?? 0), writes };
  }

  /** A user bound to a Role that grants every verb on Services in `ns` only (what `edit` grants on them). */
  async function tenantOf(ns: string): Promise<string> {
    expect((await kubectl(['create', 'role', 'tenant-edit', '--verb=*', '--resource=services', '-n', ns])).stderr).toBe('');
    expect((await kubectl(['create', 'rolebinding', 'tenant-edit', '--role=tenant-edit', '--user=loopguard-test-user', '-n', ns])).stderr).toBe('');
    const user = userKubeconfigPath()!;
    await waitFor('edit granted in the namespace', async () => ((await kubectl(['auth', 'can-i', 'patch', 'services', '-n', ns], { kubeconfig: user })).stdout.trim() === 'yes' ? true : undefined), {
      timeoutMs: 30_000,
    });
    return user;
  }

  const targetOf = (p: Awaited<ReturnType<typeof getPolicy>>, name: string) => reportedStatus(p).targets.find((t) => t.name === name);

  it('a CLB id overwritten with another Service’s CLB (other namespace, same namespace) is ForeignClb: a Warning, never a write', async () => {
    const a = await createNamespace('tenant-a');
    const b = await createNamespace('tenant-b');
    tke.namespaces.add(a);
    tke.namespaces.add(b);
    // Victims: at risk, opted out; loopguard must never touch them.
    const victimLb = await createService(b, 'victim', SKIP);
    const bystanderLb = await createService(a, 'bystander', SKIP);
    await createService(a, 'web', {}, SELECT);
    await createService(a, 'web2', {}, SELECT);
    const ref: PolicyRef = { namespace: a, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', selector: { matchLabels: SELECT } }))).code).toBe(0);
    await waitForPolicy(ref, 'web and web2 Mitigated', (p) => ['web', 'web2'].every((n) => targetOf(p, n)?.verdict === 'Mitigated'), { timeoutMs: 60_000, context: logs });
    const user = await tenantOf(a);
    const before = { victim: await clbState(victimLb), bystander: await clbState(bystanderLb) };
    expect(before.victim.sources).toEqual([0, 0]);

    // TKE writes its id back on its next sync of the Service; take namespace a out of its sight so the forged
    // ids stand as long as they would in a cluster whose controller is slow or down.
    await outOfTkeSight(a);
    for (const [svc, lb] of [
      ['web', victimLb],
      ['web2', bystanderLb],
    ] as const) {
      const res = await kubectl(['annotate', '--overwrite', 'service', svc, `${LB_ID}=${lb}`, '-n', a], { kubeconfig: user });
      expect(res.stderr).toBe('');
    }
    const p = await waitForPolicy(ref, 'web and web2 ForeignClb', (x) => ['web', 'web2'].every((n) => targetOf(x, n)?.rootCause === 'ForeignClb'), { timeoutMs: 60_000, context: logs });
    expect(targetOf(p, 'web')?.verdict).toBe('Conflict');
    expect(targetOf(p, 'web')?.message).toMatch(/belongs to another object, which loopguard will not touch/);
    // The round writes its status before its Events: wait for both targets' Events rather than race the second.
    const events = await waitFor('ForeignClb Events on web and web2', () => core.listNamespacedEvent({ namespace: a, fieldSelector: 'reason=ForeignClb' }), {
      until: (list) => new Set(list.items.map((e) => e.involvedObject.name)).size === 2,
      timeoutMs: 30_000,
    });
    expect(new Set(events.items.map((e) => e.involvedObject.name))).toEqual(new Set(['web', 'web2']));
    expect(events.items.every((e) => e.type === 'Warning')).toBe(true);
    // Issue 22 #9: namespace a learns nothing about b's Service: not its uid, not the kind of object owning the CLB.
    const victimUid = (await core.readNamespacedService({ namespace: b, name: 'victim' })).metadata?.uid ?? 'no uid';
    const bystanderUid = (await core.readNamespacedService({ namespace: a, name: 'bystander' })).metadata?.uid ?? 'no uid';
    for (const text of [...events.items.map((e) => e.message ?? ''), targetOf(p, 'web')?.message ?? '', targetOf(p, 'web2')?.message ?? '']) {
      expect(text).toMatch(/belongs to another object, which loopguard will not touch/);
      expect(text).not.toContain(victimUid);
      expect(text).not.toContain(bystanderUid);
      expect(text).not.toMatch(/tke-lb-(serviceuuid|ingress-uuid)|for another Service|for an Ingress/);
    }

    // Nothing was written to either victim's CLB, and nothing restored from the records of web/web2 onto them.
    expect(await clbState(victimLb)).toEqual(before.victim);
    expect(await clbState(bystanderLb)).toEqual(before.bystander);
    // web keeps what loopguard did to it: the record is kept, prevent-loopback stays.
    expect((await findRecord('Service', a, 'web'))?.spec.originals.listeners).toBeDefined();
    const web = await core.readNamespacedService({ namespace: a, name: 'web' });
    expect(web.metadata?.annotations?.[PREVENT]).toBe('true');

    // Back in TKE's sight, the ids are written back and the targets are the user's own again: Mitigated.
    tke.namespaces.add(a);
    await tke.simulator.resyncNow();
    await waitForPolicy(ref, 'web and web2 Mitigated again', (x) => ['web', 'web2'].every((n) => targetOf(x, n)?.verdict === 'Mitigated'), { timeoutMs: 60_000, context: logs });
    expect(await clbState(victimLb)).toEqual(before.victim);
  }, 240_000);

  it('hand-written loopguard bookkeeping on an unselected Service restores nothing', async () => {
    const a = await createNamespace('tenant-forge');
    const b = await createNamespace('tenant-victim');
    tke.namespaces.add(a);
    tke.namespaces.add(b);
    const victimLb = await createService(b, 'victim');
    // The victim's own policy switches its listeners to 100.64.
    const victimRef: PolicyRef = { namespace: b, name: 'guard' };
    expect((await applyPolicy(policyManifest(victimRef, { mode: 'Enforce' }))).code).toBe(0);
    await waitForPolicy(victimRef, 'victim Mitigated', (p) => targetOf(p, 'victim')?.verdict === 'Mitigated', { timeoutMs: 60_000, context: logs });
    const listeners = (await emulator.admin.getLoadBalancer(victimLb)).Listeners;
    const before = await clbState(victimLb);
    expect(before.sources).toEqual([1, 1]);

    const user = await tenantOf(a);
    await createService(a, 'forger');
    await outOfTkeSight(a);
    // What loopguard's first versions kept on targets: a policy and originals naming the victim's listeners.
    const originals = JSON.stringify({ v: 1, listeners: Object.fromEntries(listeners.map((l) => [l.ListenerId, { sourceIpType: 0 }])), annotations: { 'example.com/injected': 'pwned' } });
    const res = await kubectl(
      ['annotate', '--overwrite', 'service', 'forger', `loopguard.dev/policy=${b}/guard`, `loopguard.dev/originals=${originals}`, `${LB_ID}=${victimLb}`, '-n', a],
      { kubeconfig: user },
    );
    expect(res.stderr).toBe('');
    // A policy in the forger's namespace that does select it (Audit: it may only report).
    const ref: PolicyRef = { namespace: a, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Audit' }))).code).toBe(0);
    await waitForPolicy(ref, 'forger assessed', (p) => targetOf(p, 'forger')?.rootCause === 'ForeignClb', { timeoutMs: 60_000, context: logs });
    // The victim's policy runs its drift check every 3 s; loopguard reading CLB listeners twice more after the
    // verdict shows one ran. It sees nothing to correct: nothing was put back.
    await emulator.admin.markStats('after-forgery');
    const reads = async () => (await emulator.admin.statsSince('after-forgery')).byCaller['loopguard']?.['DescribeListeners']?.['OK'] ?? 0;
    await waitFor('a drift check after the forgery', async () => ((await reads()) >= 2 ? true : undefined), { timeoutMs: 30_000, context: logs });
    const victimPolicy = await getPolicy(victimRef);
    expect(targetOf(victimPolicy, 'victim')?.verdict).toBe('Mitigated');
    expect(await clbState(victimLb)).toEqual(before);
    expect(await findRecord('Service', a, 'forger')).toBeUndefined();
    const forger = await core.readNamespacedService({ namespace: a, name: 'forger' });
    expect(forger.metadata?.annotations?.['example.com/injected']).toBeUndefined();
    const restored = await core.listNamespacedEvent({ namespace: b, fieldSelector: 'reason=OriginalsRestored' });
    expect(restored.items).toEqual([]);
  }, 180_000);

  it('an id of 200 characters with control characters, a deleted CLB and a malformed id: bounded status, the other targets unaffected', async () => {
    const ns = await createNamespace('tenant-junk');
    tke.namespaces.add(ns);
    for (const name of ['ok', 'long', 'gone', 'odd', 'optout']) await createService(ns, name, {}, SELECT);
    await outOfTkeSight(ns);
    // A well-formed id no CLB has (a deleted CLB looks the same to loopguard).
    await patchMerge(ns, 'gone', { [LB_ID]: 'lb-0deleted' });
    const junk = `lb-${'x'.repeat(190)}\u0007\u001b[31m\u0000`;
    await patchMerge(ns, 'long', { [LB_ID]: junk });
    await patchMerge(ns, 'optout', { 'loopguard.dev/skip': 'tr\u0007ue\u001b' });
    await patchMerge(ns, 'odd', { [LB_ID]: 'lb-GZ_1234/../x' });
    const ref: PolicyRef = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', selector: { matchLabels: SELECT } }))).code).toBe(0);
    const p = await waitForPolicy(ref, 'ok Mitigated and every target reported', (x) => targetOf(x, 'ok')?.verdict === 'Mitigated' && reportedStatus(x).targets.length === 5, {
      timeoutMs: 60_000,
      context: logs,
    });
    const status = reportedStatus(p);
    expect(status.observedGeneration).toBe(p.metadata?.generation);
    for (const t of status.targets) {
      expect((t.loadBalancerId ?? '').length).toBeLessThanOrEqual(64);
      // eslint-disable-next-line no-control-regex
      expect({ name: t.name, control: /[\u0000-\u001f\u007f-\u009f]/.test(`${t.message ?? ''}${t.loadBalancerId ?? ''}`) }).toEqual({ name: t.name, control: false });
    }
    // An unparsable opt-out is honoured (touching a target its owner tried to exclude is worse) and reported.
    expect(targetOf(p, 'optout')?.verdict).toBe('Skipped');
    expect(['ClbNotFound', 'ClbNotObserved']).toContain(targetOf(p, 'long')?.rootCause);
    expect(targetOf(p, 'gone')?.rootCause).toBe('ClbNotFound');
    expect(['ClbNotFound', 'ClbNotObserved']).toContain(targetOf(p, 'odd')?.rootCause);
  }, 180_000);

  it('a revert that cannot finish blocks deletion visibly (Stalled/DeletionBlocked with the way out); abandon releases without restoring', async () => {
    const ns = await createNamespace('deletion');
    tke.namespaces.add(ns);
    const lb = await createService(ns, 'web');
    await createService(ns, 'corrupt');
    const ref: PolicyRef = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).code).toBe(0);
    await waitForPolicy(ref, 'both Mitigated', (p) => ['web', 'corrupt'].every((n) => targetOf(p, n)?.verdict === 'Mitigated'), { timeoutMs: 60_000, context: logs });
    // Restoring web's sources is refused (CAM denies ModifyListener on its CLB); corrupt's record is garbage.
    await emulator.admin.setFaults({ rules: [{ action: 'ModifyListener', rate: 1, kind: 'error', code: 'UnauthorizedOperation', message: 'denied (injected)', loadBalancerId: lb }] });
    const recordName = `service.${ns}.corrupt`;
    const garbage = await kubectl(['patch', 'loopbackrecord', recordName, '--type=merge', '-p', JSON.stringify({ spec: { originals: { v: 1, listeners: { x: { sourceIpType: 'VIP' } } } } })]);
    expect(garbage.stderr).toBe('');
    try {
      expect((await kubectl(['delete', 'loopbackpolicy', 'p', '-n', ns, '--wait=false'])).code).toBe(0);
      const blocked = await waitForPolicy(
        ref,
        'Stalled: DeletionBlocked naming both targets’ causes',
        (p) => {
          const c = reportedStatus(p).conditions.find((x) => x.type === 'Stalled');
          return c?.reason === 'DeletionBlocked' && /2 target/.test(c.message ?? '');
        },
        { timeoutMs: 60_000, context: logs },
      );
      const stalled = reportedStatus(blocked).conditions.find((x) => x.type === 'Stalled');
      expect(stalled?.message).toContain(`kubectl annotate loopbackpolicy p -n ${ns} loopguard.dev/abandon=true`);
      // The Events follow the status write: wait until the policy and both targets have theirs.
      const on = await waitFor(
        'DeletionBlocked Events on the policy and both targets',
        async () => {
          const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=DeletionBlocked' });
          const byName = new Map(events.items.map((e) => [e.involvedObject.name, e.message ?? '']));
          return ['p', 'web', 'corrupt'].every((n) => byName.has(n)) ? byName : undefined;
        },
        { timeoutMs: 30_000, context: logs },
      );
      expect(on.get('p')).toMatch(/deletion waits for the revert/);
      expect(on.get('web')).toMatch(/PermissionDenied|denied/);
      expect(on.get('corrupt')).toContain(`kubectl delete loopbackrecord ${recordName}`);

      // The way out the message names: release without restoring.
      expect((await kubectl(['annotate', 'loopbackpolicy', 'p', '-n', ns, 'loopguard.dev/abandon=true'])).stderr).toBe('');
      await waitFor('the policy gone', async () => ((await kubectl(['get', 'loopbackpolicy', 'p', '-n', ns])).code !== 0 ? true : undefined), { timeoutMs: 60_000 });
    } finally {
      await emulator.admin.clearFaults();
    }
    expect(await findRecord('Service', ns, 'web')).toBeUndefined();
    expect(await findRecord('Service', ns, 'corrupt')).toBeUndefined();
    // Events are queued (src/kube/events.ts): the finalizer can go before the last of them is written.
    const abandoned = await waitFor('RevertAbandoned on p, web and corrupt', () => core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=RevertAbandoned' }), {
      until: (list) => new Set(list.items.map((e) => e.involvedObject.name)).size === 3,
      timeoutMs: 30_000,
    });
    expect(new Set(abandoned.items.map((e) => e.involvedObject.name))).toEqual(new Set(['p', 'web', 'corrupt']));
    // Left as loopguard set them: web's listeners stay on 100.64.
    expect((await clbState(lb)).sources).toEqual([1, 1]);
  }, 180_000);

  it('an Ingress whose TkeServiceConfig was deleted does not hold up the deletion of its policy', async () => {
    const ns = await createNamespace('config-gone');
    tke.namespaces.add(ns);
    const capabilities = await emulator.admin.getCapabilities();
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: true });
    const TSC = { group: 'cloud.tencent.com', version: 'v1alpha1', plural: 'tkeserviceconfigs' };
    await custom.createNamespacedCustomObject({
      ...TSC,
      namespace: ns,
      body: { apiVersion: 'cloud.tencent.com/v1alpha1', kind: 'TkeServiceConfig', metadata: { name: 'mine' }, spec: { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'a.example.com', rules: [{ url: '/' }] }] }] } } },
    });
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('web', { annotations: { ...PRIVATE_INGRESS, 'ingress.cloud.tencent.com/tke-service-config': 'mine' }, rules: [{ host: 'a.example.com', paths: ['/'] }] }) });
    const ref: PolicyRef = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).code).toBe(0);
    await waitForPolicy(ref, 'web Mitigated', (p) => targetOf(p, 'web')?.verdict === 'Mitigated', { timeoutMs: 90_000, context: logs });
    expect(await findRecord('Ingress', ns, 'web')).toBeDefined();
    await custom.deleteNamespacedCustomObject({ ...TSC, namespace: ns, name: 'mine' });
    expect((await kubectl(['delete', 'loopbackpolicy', 'p', '-n', ns, '--wait=false'])).code).toBe(0);
    await waitFor('the policy gone', async () => ((await kubectl(['get', 'loopbackpolicy', 'p', '-n', ns])).code !== 0 ? true : undefined), { timeoutMs: 60_000, context: logs });
    expect(await findRecord('Ingress', ns, 'web')).toBeUndefined();
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: capabilities.l7KeepaliveSnat });
  }, 180_000);

  /**
   * TKE writes its own CLB id back on its next sync of a Service: take the namespace out of the simulator's sight
   * (and let what it queued before finish) so forged ids stand as long as they would with a slow or stopped controller.
   */
  async function outOfTkeSight(ns: string): Promise<void> {
    tke.namespaces.delete(ns);
    await tke.simulator.resyncNow();
  }

  async function patchMerge(ns: string, name: string, annotations: Record<string, string>): Promise<void> {
    const res = await kubectl(['patch', 'service', name, '-n', ns, '--type=merge', '-p', JSON.stringify({ metadata: { annotations } })]);
    expect(res.stderr).toBe('');
  }
});
