// One plan, one executor, end to end on the local TKE: what Audit prints (status.targets[].plan and
// status.releases[].plan) is, step for step, what Enforce then carries out (the operator logs every executed step
// with the same line); and one target failing transiently never hides another target's outcome in the same
// round, while a permanent error makes the policy Stalled in the first round it occurs.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api, Watch } from '@kubernetes/client-node';
import type { LoopbackPolicy } from '../../src/api/loopbackpolicy.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { findCondition } from '../../src/api/conditions.js';
import { planLines } from '../../src/model/status.js';
import { createNamespace, kubeConfig, kubectl, userKubeconfigPath, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, getPolicy, policyManifest, reportedStatus, waitForCondition, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { findRecord } from '../support/records.js';
import { AT_RISK_L4, PRIVATE_INGRESS, PRIVATE_SUBNET, lbIngress, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const ING_LB_ID = 'kubernetes.io/ingress.qcloud-loadbalance-id';
const SELECT = { 'loopguard.dev/protect': 'true' };

/** The object with the selector's labels added. */
function selected<T extends { metadata?: { labels?: Record<string, string> } }>(obj: T): T {
  return { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata?.labels, ...SELECT } } };
}

/** Executed step lines as the status prints them (bounded: long lines are clipped the same way). */
const shown = (lines: readonly string[] | undefined): string[] | undefined => (lines ? planLines(lines) : undefined);

/** The steps the operator executed for `policy`, per `Kind/name`, from its JSON log lines after `from`. */
function executedSteps(logs: string, policy: string, from: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of logs.slice(from).split('\n')) {
    if (!line.includes('"Step applied"')) continue;
    const entry = JSON.parse(line) as { policy?: string; target?: string; step?: string };
    if (entry.policy !== policy || !entry.target || !entry.step) continue;
    const [kind, , name] = entry.target.split('/');
    const key = `${kind}/${name}`;
    out.set(key, [...(out.get(key) ?? []), entry.step]);
  }
  return out;
}

describe('one plan, one executor', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let operator: OperatorProcess;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);

  beforeAll(async () => {
    tke = await startLocalTke({ resyncIntervalMs: 1_500, operator: { extraArgs: ['--drift-check-interval=3s'] } });
    emulator = tke.emulator;
    operator = tke.operator!;
  });

  afterAll(async () => {
    await tke?.stop();
  });

  const logs = () => `--- operator logs (tail) ---\n${operator.logs().slice(-6000)}`;

  async function serviceLb(ns: string, name: string): Promise<string> {
    return waitFor(`CLB and listeners of Service ${name}`, async () => {
      const s = await core.readNamespacedService({ namespace: ns, name });
      const id = s.metadata?.annotations?.[LB_ID];
      if (!id) return undefined;
      return (await emulator.admin.getLoadBalancer(id)).Listeners.length >= (s.spec?.ports?.length ?? 1) ? id : undefined;
    });
  }

  async function ingressLb(ns: string, name: string, listeners: number): Promise<string> {
    return waitFor(`CLB and listeners of Ingress ${name}`, async () => {
      const i = await net.readNamespacedIngress({ namespace: ns, name });
      const id = i.metadata?.annotations?.[ING_LB_ID];
      if (!id) return undefined;
      return (await emulator.admin.getLoadBalancer(id)).Listeners.length >= listeners ? id : undefined;
    });
  }

  /** Audit's printed plan per `Kind/name`: selected targets and releases. */
  async function printedPlans(ref: PolicyRef): Promise<Map<string, string[]>> {
    const status = reportedStatus(await getPolicy(ref));
    const out = new Map<string, string[]>();
    for (const t of status.targets) if (t.plan?.length) out.set(`${t.kind}/${t.name}`, t.plan);
    for (const r of status.releases ?? []) if (r.plan?.length) out.set(`${r.kind}/${r.name}`, r.plan);
    return out;
  }

  /** Switches the policy's mode and waits until the new generation is Ready. */
  async function setMode(ref: PolicyRef, mode: 'Audit' | 'Enforce', reason: RegExp): Promise<void> {
    const manifest = policyManifest(ref, { mode, selector: { matchLabels: SELECT }, l7: { keepalive: true, healthCheckSource: 'Range100_64' } });
    const res = await applyPolicy(manifest);
    expect(res.stderr).toBe('');
    const generation = (await getPolicy(ref)).metadata.generation;
    await waitForPolicy(
      ref,
      `${mode} generation ${generation} Ready (${reason.source})`,
      (p) => {
        const ready = findCondition(p.status?.conditions, 'Ready');
        return p.status?.observedGeneration === generation && ready?.status === 'True' && reason.test(ready.reason ?? '');
      },
      { timeoutMs: 90_000, context: logs },
    );
  }

  it('Enforce carries out exactly the steps Audit printed: L4, L7 through TKE, and releases', async () => {
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: true });
    const ns = await createNamespace('exec-plan');
    tke.namespaces.add(ns);
    for (const body of [
      lbService('local', AT_RISK_L4),
      lbService('cluster', { annotations: PRIVATE_SUBNET }),
      lbService('public'),
    ]) {
      await core.createNamespacedService({ namespace: ns, body: selected(body) });
    }
    await net.createNamespacedIngress({ namespace: ns, body: selected(lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: 'a.example.com', paths: ['/', '/api'] }] })) });
    for (const name of ['local', 'cluster', 'public']) await serviceLb(ns, name);
    const localLb = await serviceLb(ns, 'local');
    await ingressLb(ns, 'web', 1);
    const ref = { namespace: ns, name: 'p' };

    // 1. Audit prints the plan; nothing is written.
    await setMode(ref, 'Audit', /^AuditComplete$/);
    const printed = await printedPlans(ref);
    expect([...printed.keys()].sort()).toEqual(['Ingress/web', 'Service/local']);
    expect(printed.get('Service/local')?.[0]).toMatch(/^record the originals of 2 listener\(s\)/);
    expect(printed.get('Service/local')?.at(-1)).toMatch(/^annotate service\.cloud\.tencent\.com\/prevent-loopback: "true"; record 3 applied field/);
    expect(printed.get('Ingress/web')).toEqual([
      expect.stringMatching(/^annotate ingress\.cloud\.tencent\.com\/tke-service-config-auto: "true"; record/),
      'wait for TKE to create TkeServiceConfig web-auto-ingress-config',
    ]);

    // 2. Enforce executes that plan, each target's steps in the printed order (an L7 target's first round ends
    // at the wait for TKE; later rounds continue from what TKE did).
    let from = operator.logs().length;
    await setMode(ref, 'Enforce', /^Reconciled/);
    let executed = executedSteps(operator.logs(), `${ns}/p`, from);
    for (const [target, plan] of printed) expect({ target, steps: shown(executed.get(target)?.slice(0, plan.length)) }).toEqual({ target, steps: plan });
    const localPrinted = printed.get('Service/local') ?? [];
    const localExecuted = executed.get('Service/local') ?? [];
    expect(shown(localExecuted.slice(0, localPrinted.length))).toEqual(localPrinted);
    // Nothing beyond the printed plan, except a drift correction answering TKE: its resync (every 1.5 s here, sync
    // scope `all`) can land between the source switches and prevent-loopback and put a source back on the VIP.
    const extra = localExecuted.slice(localPrinted.length);
    if (extra.length > 0) {
      expect(extra.every((step) => /\(drift: it had been put back outside loopguard\)$/.test(step))).toBe(true);
      const tkeWrites = (await emulator.admin.writes()).filter((w) => w.caller === 'tke' && w.loadBalancerId === localLb && w.changed.length > 0);
      expect(tkeWrites.length).toBeGreaterThan(0);
    }
    expect(executed.has('Service/public')).toBe(false);
    expect(executed.get('Ingress/web')?.some((s) => /^declare in TkeServiceConfig web-auto-ingress-config: keepaliveEnable: 1/.test(s))).toBe(true);

    // 3. Deselect a mitigated Service and an Ingress in Audit mode: the releases are printed, not carried out.
    await setMode(ref, 'Audit', /^AuditComplete$/);
    for (const args of [
      ['label', 'service', 'local', 'loopguard.dev/protect-', '-n', ns],
      ['label', 'ingress', 'web', 'loopguard.dev/protect-', '-n', ns],
    ]) {
      expect((await kubectl(args)).code).toBe(0);
    }
    const releases = await waitForPolicy(ref, 'releases printed', (p) => (p.status?.releases ?? []).length === 2, { context: logs });
    const releasePlans = new Map((releases.status?.releases ?? []).map((r) => [`${r.kind}/${r.name}`, r.plan ?? []]));
    // prevent-loopback off (its time recorded), then the wait for kube-proxy to release the VIP: the sources go back in
    // a later round (the printed plan ends at the wait, as the Ingress's ends at TKE's).
    expect(releasePlans.get('Service/local')).toEqual([
      'restore annotation(s) remove service.cloud.tencent.com/prevent-loopback; record the time (LoopbackRecord)',
      expect.stringMatching(/^wait for kube-proxy to release the VIP of CLB lb-\S+ \(prevent-loopback taken off\), then put the health-check sources back on it$/),
    ]);
    expect((await core.readNamespacedService({ namespace: ns, name: 'local' })).metadata?.annotations?.['service.cloud.tencent.com/prevent-loopback']).toBe('true');

    // 4. Enforce releases them with exactly those steps (the Ingress's first round ends at the wait for TKE).
    from = operator.logs().length;
    await setMode(ref, 'Enforce', /^Reconciled/);
    await waitForPolicy(ref, 'releases done', (p) => (p.status?.releases ?? []).length === 0, { timeoutMs: 60_000, context: logs });
    executed = executedSteps(operator.logs(), `${ns}/p`, from);
    const localRelease = releasePlans.get('Service/local') ?? [];
    expect(shown(executed.get('Service/local')?.slice(0, localRelease.length))).toEqual(localRelease);
    expect(executed.get('Service/local')?.at(-1)).toBe('delete the LoopbackRecord');
    const webRelease = releasePlans.get('Ingress/web') ?? [];
    expect(shown(executed.get('Ingress/web')?.slice(0, webRelease.length))).toEqual(webRelease);
    const svc = await core.readNamespacedService({ namespace: ns, name: 'local' });
    expect(await findRecord('Service', ns, 'local')).toBeUndefined();
    expect(svc.metadata?.annotations?.['service.cloud.tencent.com/prevent-loopback']).toBeUndefined();
  }, 180_000);

  it('a namespace user who may edit their Services and Ingresses can neither forge nor erase a LoopbackRecord', async () => {
    const ns = await createNamespace('exec-tenant');
    tke.namespaces.add(ns);
    // What the built-in `edit` role grants on targets (the test ground runs no controller-manager, so the aggregated
    // `edit` ClusterRole itself has no rules here): every verb, in the tenant's own namespace.
    const role = await kubectl(['create', 'role', 'tenant-edit', '--verb=*', '--resource=services,ingresses.networking.k8s.io', '-n', ns]);
    expect(role.stderr).toBe('');
    const bind = await kubectl(['create', 'rolebinding', 'tenant-edit', '--role=tenant-edit', '--user=loopguard-test-user', '-n', ns]);
    expect(bind.stderr).toBe('');
    const user = userKubeconfigPath()!;
    const can = async (...args: string[]) => (await kubectl(['auth', 'can-i', ...args], { kubeconfig: user })).stdout.trim();
    // The binding reaches the authorizer's cache within moments.
    await waitFor('edit granted in the namespace', async () => ((await can('patch', 'services', '-n', ns)) === 'yes' ? true : undefined), { timeoutMs: 30_000 });
    for (const verb of ['create', 'update', 'patch', 'delete', 'get']) expect({ verb, answer: await can(verb, 'loopbackrecords.loopguard.dev') }).toEqual({ verb, answer: 'no' });
    const forged = `apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackRecord\nmetadata: {name: service.${ns}.web}\nspec: {target: {kind: Service, namespace: ${ns}, name: web}, policy: {namespace: ${ns}, name: p}, originals: {v: 1}}\n`;
    const res = await kubectl(['apply', '-f', '-'], { input: forged, kubeconfig: user });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/forbidden/i);
  });

  it('one target failing transiently hides no other outcome; a permanent error is Stalled in the first round', async () => {
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: false });
    const ns = await createNamespace('exec-errors');
    tke.namespaces.add(ns);
    for (const name of ['ok', 'busy', 'denied']) await core.createNamespacedService({ namespace: ns, body: lbService(name, AT_RISK_L4) });
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: 'a.example.com', paths: ['/'] }] }) });
    const busy = await serviceLb(ns, 'busy');
    const denied = await serviceLb(ns, 'denied');
    await serviceLb(ns, 'ok');
    await ingressLb(ns, 'web', 1);
    await emulator.admin.setFaults({
      rules: [
        { action: 'ModifyListener', rate: 1, kind: 'error', code: 'RequestLimitExceeded', message: 'throttled (injected)', loadBalancerId: busy },
        { action: 'ModifyListener', rate: 1, kind: 'error', code: 'UnauthorizedOperation', message: 'CAM denies clb:ModifyListener (injected)', loadBalancerId: denied },
      ],
    });
    const ref = { namespace: ns, name: 'p' };
    try {
      // Every status version the operator writes, from the first one on: a watch from the resourceVersion before the
      // policy existed. A watch that ends (the apiserver closes it, or a loaded machine loses the connection: seen in
      // 2 of 3 full runs, no evaluated status delivered while the GET had one) is opened again from the last version
      // it delivered, so the apiserver replays what came since and none is missed.
      const policies = { group: 'loopguard.dev', version: 'v1alpha1', namespace: ns, plural: 'loopbackpolicies' };
      const before = ((await custom.listNamespacedCustomObject(policies)) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
      expect(before).toBeTruthy();
      const seen: LoopbackPolicy[] = [];
      const ends: string[] = [];
      let watch: AbortController | undefined;
      let watching = true;
      const follow = async (rv: string | undefined): Promise<void> => {
        watch = await new Watch(kc).watch(`/apis/loopguard.dev/v1alpha1/namespaces/${ns}/loopbackpolicies`, { resourceVersion: rv }, (_phase, obj: LoopbackPolicy) => void seen.push(obj), (err: unknown) => {
          if (!watching || ends.length >= 5) return;
          ends.push(err instanceof Error ? err.message : String(err));
          void follow(seen.at(-1)?.metadata.resourceVersion ?? rv);
        });
      };
      await follow(before);
      expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', l7: { keepalive: true } }))).stderr).toBe('');
      await waitForCondition(ref, 'Stalled', { timeoutMs: 90_000, context: logs });
      const stalled = await getPolicy(ref);

      // The first evaluated status (Ready no longer Unknown) already has every target's own outcome. The GET above
      // can see the status before the watch delivers it: wait for the watch to have it too.
      const isEvaluated = (p: LoopbackPolicy) => (p.status?.targets?.length ?? 0) > 0 && findCondition(p.status?.conditions, 'Ready')?.status !== 'Unknown';
      const delivered = () =>
        [`the watch ended ${ends.length} time(s)${ends.length > 0 ? `: ${ends.join('; ')}` : ''}`, `${seen.length} object(s) delivered:`, ...seen.map((p) => `  rv ${p.metadata.resourceVersion}: ${p.status?.targets?.length ?? 0} target(s), Ready ${findCondition(p.status?.conditions, 'Ready')?.status ?? '-'}`), `the GET: rv ${stalled.metadata.resourceVersion}`].join('\n');
      await waitFor('the watch to deliver an evaluated status', async () => (seen.some(isEvaluated) ? true : undefined), { timeoutMs: 10_000, context: delivered });
      watching = false;
      watch?.abort();
      const evaluated = seen.filter(isEvaluated);
      expect(evaluated.length).toBeGreaterThan(0);
      const first = reportedStatus(evaluated[0]!);
      const byName = new Map(first.targets.map((t) => [t.name, t]));
      expect(findCondition(first.conditions, 'Stalled')).toMatchObject({ status: 'True', reason: 'PermissionDenied' });
      expect(byName.get('ok')?.verdict).toBe('Mitigated');
      expect(byName.get('denied')?.message).toMatch(/Last error \(PermissionDenied\)/);
      expect(byName.get('busy')?.message).toMatch(/Last error \(RetryingAfterError\)/);
      expect(reportedStatus(stalled).targets.find((t) => t.name === 'busy')?.verdict).toBe('AtRisk');

      // TKE's refusal of keepalive is reported while 'busy' keeps failing transiently.
      const refused = await waitForPolicy(
        ref,
        'the Ingress reports the missing keepalive capability',
        (p) => reportedStatus(p).targets.some((t) => t.name === 'web' && /KeepaliveCapabilityMissing/.test(t.message ?? '')),
        { timeoutMs: 90_000, context: logs },
      );
      expect(reportedStatus(refused).targets.find((t) => t.name === 'busy')?.message).toMatch(/RetryingAfterError/);
      expect(reportedStatus(refused).targets.find((t) => t.name === 'ok')?.verdict).toBe('Mitigated');
    } finally {
      await emulator.admin.clearFaults();
    }

    // A mitigated Service deleted: its record (nothing left to restore on it) is forgotten, no release lingers.
    expect(await findRecord('Service', ns, 'ok')).toBeDefined();
    await core.deleteNamespacedService({ namespace: ns, name: 'ok' });
    await waitFor('the deleted Service\'s record forgotten', async () => ((await findRecord('Service', ns, 'ok')) === undefined ? true : undefined), { timeoutMs: 60_000, context: logs });
    // The record goes first, the status follows in that round's publish: waited for together (a status read between
    // the two, which never had a release for 'ok', still listed its target: a run of 2026-11-30), on a status that
    // still lists the other targets.
    await waitForPolicy(ref, 'neither a release nor a target left for the deleted Service', (p) => (p.status?.targets?.length ?? 0) > 0 && ![...(p.status?.releases ?? []), ...(p.status?.targets ?? [])].some((r) => r.name === 'ok'), { context: logs });
    // Each round waits out the throttled target's client retries (seconds) before it reports; the Ingress needs
    // three rounds (auto config, declaration, TKE's refusal).
  }, 240_000);
});
