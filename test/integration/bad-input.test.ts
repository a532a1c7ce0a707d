// Bad input at scale (issue 13, item 5), on the local TKE with the operator as its own process:
//  - 20 malformed values across every annotation loopguard reads on targets (src/api/annotation-checks.ts): each
//    target gets ONE Warning Event. "One" as Kubernetes aggregates Events: one Event object per target and problem
//    (reason InvalidAnnotation), whose `count` is not bumped by later reconcile rounds (the problem is standing, not
//    recurring: src/kube/events.ts re-asserts it only every 30 min) nor by a restart of the operator, which adopts the
//    Event it finds instead of writing a second one. The operator keeps running and reconciling the other targets.
//  - The largest annotation the apiserver accepts (its 256 KiB total), and what a user sees for a 1 MiB one.
//  - Unicode where Kubernetes allows it (annotation values, Event messages, a policy's annotations).
//  - A policy that selects nothing is Ready with a message saying so; `kubectl wait --for=condition=Ready` returns.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, NetworkingV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, getPolicy, policyManifest, reportedStatus, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { PRIVATE_SUBNET, lbIngress, lbService } from '../support/workload.js';

const SVC_LB_ID = 'service.kubernetes.io/loadbalance-id';
const SKIP = 'loopguard.dev/skip';
const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const SVC_DIRECT = 'service.cloud.tencent.com/direct-access';
const SVC_MODE = 'service.cloud.tencent.com/mode';
const SVC_CONFIG = 'service.cloud.tencent.com/tke-service-config';
const ING_PASS = 'ingress.cloud.tencent.com/pass-to-target';
const ING_AUTO = 'ingress.cloud.tencent.com/tke-service-config-auto';
const ING_DIRECT = 'ingress.cloud.tencent.com/direct-access';
const ING_CONFIG = 'ingress.cloud.tencent.com/tke-service-config';
const ING_MODE = 'ingress.cloud.tencent.com/mode';
/** The apiserver's bound on all annotations of an object together (keys and values). */
const ANNOTATIONS_LIMIT = 256 * 1024;
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

interface Malformed {
  name: string;
  kind: 'Service' | 'Ingress';
  key: string;
  value: string;
  /** What it is (wrong type, bad JSON, ...). */
  what: string;
  /** TKE writes its CLB id back on every sync: these targets live in a namespace TKE never sees. */
  outOfTke?: boolean;
  /** The Event's message says this too (beyond the key). */
  says?: string;
}

const MALFORMED: Malformed[] = [
  { name: 's-skip-word', kind: 'Service', key: SKIP, value: 'yes', what: 'a word for a boolean', says: 'opted out until it is fixed' },
  { name: 's-skip-ctrl', kind: 'Service', key: SKIP, value: 'tr\u0007ue\u001b[31m', what: 'control characters', says: '\\u0007' },
  { name: 's-skip-unicode', kind: 'Service', key: SKIP, value: '是的', what: 'Unicode "yes"', says: '"是的"' },
  { name: 's-pl-number', kind: 'Service', key: PREVENT, value: '1', what: 'a number for a boolean' },
  { name: 's-pl-negative', kind: 'Service', key: PREVENT, value: '-1', what: 'a negative number' },
  { name: 's-pl-json', kind: 'Service', key: PREVENT, value: '{"enabled": tru', what: 'bad JSON', says: '"{\\"enabled\\": tru"' },
  { name: 's-da-fullwidth', kind: 'Service', key: SVC_DIRECT, value: 'ｔｒｕｅ', what: 'full-width Unicode letters', says: '"ｔｒｕｅ"' },
  { name: 's-da-empty', kind: 'Service', key: SVC_DIRECT, value: '', what: 'empty' },
  { name: 's-da-huge', kind: 'Service', key: SVC_DIRECT, value: 'y'.repeat(100 * 1024), what: '100 KiB', says: '(102400 characters)' },
  { name: 's-mode-enum', kind: 'Service', key: SVC_MODE, value: 'skpi', what: 'an unknown enum value', says: 'expected "skip"' },
  { name: 's-mode-bidi', kind: 'Service', key: SVC_MODE, value: 'skip\u202e', what: 'a direction-override character', says: '\\u202e' },
  { name: 's-config-name', kind: 'Service', key: SVC_CONFIG, value: 'My Config!', what: 'not an object name', says: 'name of a TkeServiceConfig' },
  { name: 's-config-path', kind: 'Service', key: SVC_CONFIG, value: '../kube-system/cfg', what: 'a path', says: 'name of a TkeServiceConfig' },
  { name: 's-id-path', kind: 'Service', key: SVC_LB_ID, value: 'lb-../../x', what: 'a path for the CLB id', outOfTke: true, says: 'expected a CLB id' },
  { name: 's-id-upper', kind: 'Service', key: SVC_LB_ID, value: 'LB-ABCD1234', what: 'an id in capitals', outOfTke: true, says: 'expected a CLB id' },
  { name: 'i-pass-word', kind: 'Ingress', key: ING_PASS, value: 'maybe', what: 'a word for a boolean', says: 'allow traffic by default' },
  { name: 'i-auto-number', kind: 'Ingress', key: ING_AUTO, value: '0', what: 'a number for a boolean' },
  { name: 'i-da-nul', kind: 'Ingress', key: ING_DIRECT, value: 'true\u0000', what: 'a NUL character', says: '\\u0000' },
  { name: 'i-config-case', kind: 'Ingress', key: ING_CONFIG, value: 'Web_Config', what: 'capitals and "_"', says: 'name of a TkeServiceConfig' },
  { name: 'i-mode-enum', kind: 'Ingress', key: ING_MODE, value: 'disabled', what: 'an unknown enum value', says: 'expected "skip"' },
];

function reconciles(metrics: string): number {
  return [...metrics.matchAll(/^controller_runtime_reconcile_total\{controller="loopbackpolicy",[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('bad input at scale', () => {
  let tke: LocalTke;
  let operator: OperatorProcess;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const logs = () => `--- operator logs (tail) ---\n${operator.logs().slice(-6000)}`;
  const work = mkdtempSync(join(tmpdir(), 'loopguard-bad-input-'));

  beforeAll(async () => {
    // A short drift interval: many reconcile rounds in a few seconds, which is what the Event deduplication must survive.
    tke = await startLocalTke({ operator: { extraArgs: ['--drift-check-interval=2s'] } });
    operator = tke.operator!;
  });

  afterAll(async () => {
    await tke?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  async function policyReconciles(): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${operator.port}/metrics`);
    return reconciles(await res.text());
  }

  async function healthy(op: OperatorProcess): Promise<boolean> {
    const res = await fetch(`http://127.0.0.1:${op.port}/healthz`).catch(() => undefined);
    return op.child.exitCode === null && res?.status === 200;
  }

  async function createService(ns: string, name: string, annotations: Record<string, string> = {}): Promise<void> {
    await core.createNamespacedService({ namespace: ns, body: lbService(name, { annotations: { ...PRIVATE_SUBNET, ...annotations }, etp: 'Local', ports: [80] }) });
  }

  async function clbOf(ns: string, name: string): Promise<string> {
    return waitFor(`CLB and listener of Service ${ns}/${name}`, async () => {
      const s = await core.readNamespacedService({ namespace: ns, name });
      const id = s.metadata?.annotations?.[SVC_LB_ID];
      if (!id || !s.status?.loadBalancer?.ingress?.[0]?.ip) return undefined;
      return (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length >= 1 ? id : undefined;
    });
  }

  /** A merge patch through kubectl, from a file: a patch of 256 KiB does not fit on a command line. */
  async function patchFile(kind: string, ns: string, name: string, patch: unknown) {
    const file = join(work, `${name}.json`);
    writeFileSync(file, JSON.stringify(patch));
    return kubectl(['patch', kind, name, '-n', ns, '--type=merge', `--patch-file=${file}`]);
  }

  const invalidEvents = async (ns: string): Promise<CoreV1Event[]> =>
    (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=InvalidAnnotation' })).items;

  async function listenerWrites(ids: readonly string[]): Promise<number> {
    const stats = await tke.emulator.admin.stats();
    return Object.entries(stats.listenerWrites)
      .filter(([k]) => ids.some((id) => k.startsWith(`${id}/`)))
      .reduce((n, [, v]) => n + v, 0);
  }

  it('20 malformed annotation values: one Warning Event each, across rounds and a restart; no crash, nothing written for them, the rest reconciled', async () => {
    expect(MALFORMED).toHaveLength(20);
    expect(new Set(MALFORMED.map((m) => m.name)).size).toBe(20);
    const ns = await createNamespace('bad-annotations');
    const nsIds = await createNamespace('bad-ids');
    tke.namespaces.add(ns);
    const nsOf = (m: Malformed) => (m.outOfTke ? nsIds : ns);
    for (const m of MALFORMED) {
      const annotations = { [m.key]: m.value };
      if (m.kind === 'Service') await createService(nsOf(m), m.name, annotations);
      // nginx class: TKE builds no CLB, loopguard reports NotClbIngress, and still checks the annotations it reads.
      else await net.createNamespacedIngress({ namespace: ns, body: lbIngress(m.name, { annotations: { 'kubernetes.io/ingress.class': 'nginx', ...annotations }, rules: [{ paths: ['/'] }] }) });
    }
    await createService(ns, 'ok');
    const clbs = new Map<string, string>();
    for (const m of [...MALFORMED.filter((x) => x.kind === 'Service' && !x.outOfTke), { name: 'ok' }]) clbs.set(m.name, await clbOf(ns, m.name));
    // Opted out (s-skip-*): loopguard must write to none of their CLBs.
    const untouchable = MALFORMED.filter((m) => m.key === SKIP).map((m) => clbs.get(m.name)!);
    const writesBefore = await listenerWrites(untouchable);

    const ref: PolicyRef = { namespace: ns, name: 'p' };
    const refIds: PolicyRef = { namespace: nsIds, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).code).toBe(0);
    expect((await applyPolicy(policyManifest(refIds, { mode: 'Enforce' }))).code).toBe(0);
    await waitForPolicy(ref, 'ok Mitigated, every target reported, Ready', (p) => {
      const s = p.status;
      return s?.targets?.find((t) => t.name === 'ok')?.verdict === 'Mitigated' && s.counts?.total === 19 && s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    }, { timeoutMs: 90_000, context: logs });
    await waitForPolicy(refIds, 'the targets with junk CLB ids reported, Ready', (p) => {
      const s = p.status;
      return s?.counts?.total === 2 && s.targets?.every((t) => t.rootCause === 'ClbNotFound') === true && s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    }, { timeoutMs: 60_000, context: logs });
    const bad = new Set(MALFORMED.map((m) => m.name));
    const invalidEventsOfBoth = async () => [...(await invalidEvents(ns)), ...(await invalidEvents(nsIds))];
    await waitFor('an InvalidAnnotation Event on each of the 20 targets', async () => {
      const on = new Set((await invalidEventsOfBoth()).map((e) => e.involvedObject.name));
      return [...bad].every((n) => on.has(n)) ? true : undefined;
    }, {
      timeoutMs: 60_000,
      context: async () => {
        const on = new Set((await invalidEventsOfBoth()).map((e) => e.involvedObject.name));
        const missing = (await getPolicy(ref)).status?.targets?.filter((t) => bad.has(t.name) && !on.has(t.name));
        return `no Event on: ${JSON.stringify(missing)}\n${logs()}`;
      },
    });

    // Rounds go on every 2 s: three more, then the Events are what they were.
    const expectOneEachOnce = async (when: string) => {
      const events = await invalidEventsOfBoth();
      const byTarget = new Map<string, CoreV1Event[]>();
      for (const e of events) byTarget.set(e.involvedObject.name ?? '', [...(byTarget.get(e.involvedObject.name ?? '') ?? []), e]);
      expect({ when, targets: [...byTarget.keys()].sort() }).toEqual({ when, targets: [...bad].sort() });
      for (const m of MALFORMED) {
        const mine = byTarget.get(m.name) ?? [];
        const e = mine[0]!;
        expect({ when, target: m.name, what: m.what, events: mine.length, count: e.count, type: e.type, kind: e.involvedObject.kind }).toEqual({
          when,
          target: m.name,
          what: m.what,
          events: 1,
          count: 1,
          type: 'Warning',
          kind: m.kind,
        });
        const message = e.message ?? '';
        expect(message).toContain(`annotation ${m.key}=`);
        if (m.says) expect(message).toContain(m.says);
        expect(message.length).toBeLessThanOrEqual(1024);
        expect({ target: m.name, unsafe: UNSAFE.test(message) }).toEqual({ target: m.name, unsafe: false });
      }
    };
    const rounds = await policyReconciles();
    await waitFor('three more reconcile rounds', async () => ((await policyReconciles()) >= rounds + 3 ? true : undefined), { timeoutMs: 30_000, context: logs });
    await expectOneEachOnce('after three more rounds');

    // Still reconciling: a target created now is assessed and mitigated like any other.
    tke.namespaces.add(ns);
    await createService(ns, 'late');
    await clbOf(ns, 'late');
    const p = await waitForPolicy(ref, 'late Mitigated', (x) => x.status?.targets?.find((t) => t.name === 'late')?.verdict === 'Mitigated', { timeoutMs: 60_000, context: logs });
    const status = reportedStatus(p);
    expect(status.observedGeneration).toBe(p.metadata?.generation);
    expect(status.conditions.find((c) => c.type === 'Stalled')).toBeUndefined();
    expect(status.counts?.total).toBe(20);
    const verdict = (n: string) => status.targets.find((t) => t.name === n);
    for (const m of MALFORMED.filter((x) => x.key === SKIP)) expect(verdict(m.name)?.verdict).toBe('Skipped');
    for (const m of MALFORMED.filter((x) => x.kind === 'Ingress')) expect(verdict(m.name)?.rootCause).toBe('NotClbIngress');
    // A malformed value of a TKE annotation is read as absent: those targets are mitigated like any other.
    for (const m of MALFORMED.filter((x) => [PREVENT, SVC_DIRECT, SVC_MODE, SVC_CONFIG].includes(x.key))) expect({ name: m.name, verdict: verdict(m.name)?.verdict }).toEqual({ name: m.name, verdict: 'Mitigated' });
    for (const t of status.targets) expect({ name: t.name, unsafe: UNSAFE.test(`${t.message ?? ''}${t.loadBalancerId ?? ''}`) }).toEqual({ name: t.name, unsafe: false });
    expect(await listenerWrites(untouchable)).toBe(writesBefore);
    expect((await invalidEvents(ns)).filter((e) => ['ok', 'late'].includes(e.involvedObject.name ?? ''))).toEqual([]);
    expect(await healthy(operator)).toBe(true);

    // A restart (or a new leader) adopts the Events it finds: still one each, not bumped.
    await operator.stop();
    operator = await tke.startOperator({ extraArgs: ['--drift-check-interval=2s'] });
    await waitFor('three rounds of the new operator', async () => ((await policyReconciles()) >= 3 ? true : undefined), { timeoutMs: 60_000, context: logs });
    await expectOneEachOnce('after a restart');
    expect(await healthy(operator)).toBe(true);
  }, 300_000);

  it('a 1 MiB annotation is refused by the apiserver with its limit; the largest it accepts is clipped in the Event and status', async () => {
    const ns = await createNamespace('big-annotation');
    tke.namespaces.add(ns);
    await createService(ns, 'big');
    await clbOf(ns, 'big');
    tke.namespaces.delete(ns);
    await tke.simulator.resyncNow();

    const refused = await patchFile('service', ns, 'big', { metadata: { annotations: { [SVC_DIRECT]: 'x'.repeat(1 << 20) } } });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('metadata.annotations: Too long: may not be more than 262144 bytes');
    expect(refused.stderr.length).toBeLessThan(1_000);

    // The largest value that fits: the limit counts every key and value of the object's annotations.
    const svc = await core.readNamespacedService({ namespace: ns, name: 'big' });
    const used = Object.entries(svc.metadata?.annotations ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    const largest = ANNOTATIONS_LIMIT - used - Buffer.byteLength(SVC_DIRECT);
    expect((await patchFile('service', ns, 'big', { metadata: { annotations: { [SVC_DIRECT]: `\u0007${'z'.repeat(largest)}` } } })).code).not.toBe(0);
    const accepted = await patchFile('service', ns, 'big', { metadata: { annotations: { [SVC_DIRECT]: `\u0007${'z'.repeat(largest - 1)}` } } });
    expect(accepted.stderr).toBe('');

    // Audit: Enforce would add prevent-loopback, which no longer fits (see the next test for what that looks like).
    const ref: PolicyRef = { namespace: ns, name: 'p' };
    expect((await applyPolicy(policyManifest(ref, { mode: 'Audit' }))).code).toBe(0);
    await waitForPolicy(ref, 'big assessed and Ready', (p) => p.status?.targets?.find((t) => t.name === 'big')?.verdict === 'AtRisk' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true, {
      timeoutMs: 60_000,
      context: logs,
    });
    const events = await waitFor('the InvalidAnnotation Event on big', async () => {
      const items = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=InvalidAnnotation,involvedObject.name=big' })).items;
      return items.length > 0 ? items : undefined;
    }, { context: logs });
    expect(events).toHaveLength(1);
    const message = events[0]?.message ?? '';
    expect(message).toContain(`annotation ${SVC_DIRECT}="\\u0007zzz`);
    expect(message).toContain(`(${largest} characters)`);
    expect(message.length).toBeLessThan(400);
    const policy = await kubectl(['get', 'lbp', 'p', '-n', ns, '-o', 'json']);
    expect(policy.stdout.length).toBeLessThan(16 * 1024);

    // Enforce: the source switch goes through, the prevent-loopback annotation no longer fits. The apiserver's refusal
    // is permanent, so the policy is Stalled and says why, in its words; nothing else is attempted on the target.
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).code).toBe(0);
    const stalled = await waitForPolicy(ref, 'Stalled: the annotation does not fit', (p) => p.status?.conditions?.some((c) => c.type === 'Stalled' && c.status === 'True' && c.observedGeneration === p.metadata?.generation) === true, {
      timeoutMs: 60_000,
      context: logs,
    });
    const why = reportedStatus(stalled).conditions.find((c) => c.type === 'Stalled');
    expect(why?.reason).toBe('InvalidRequest');
    expect(why?.message).toContain('metadata.annotations: Too long: may not be more than 262144 bytes');
    expect(reportedStatus(stalled).targets.find((t) => t.name === 'big')?.mitigations).toEqual(['HealthCheckSourceRange100_64']);
    expect(await healthy(operator)).toBe(true);
  }, 180_000);

  it('Unicode where Kubernetes allows it: annotation values and a policy\'s annotations; a policy selecting no target is Ready and says so', async () => {
    const ns = await createNamespace('unicode-empty');
    const ref: PolicyRef = { namespace: ns, name: 'nothing' };
    const manifest = policyManifest(ref, { mode: 'Enforce', selector: { matchLabels: { app: 'no-such-app' } } });
    manifest.metadata = { ...manifest.metadata, annotations: { 'example.com/description': '保护商店的负载均衡 🚀 — ünïcödé' } } as typeof manifest.metadata;
    expect((await applyPolicy(manifest)).stderr).toBe('');
    const wait = await kubectl(['wait', '--for=condition=Ready', `lbp/${ref.name}`, '-n', ns, '--timeout=60s']);
    expect({ code: wait.code, stderr: wait.stderr }).toEqual({ code: 0, stderr: '' });
    const p = await getPolicy(ref);
    const status = reportedStatus(p);
    expect(status.counts?.total).toBe(0);
    expect(status.targets).toEqual([]);
    expect(status.observedGeneration).toBe(p.metadata?.generation);
    const ready = status.conditions.find((c) => c.type === 'Ready');
    expect(ready?.status).toBe('True');
    expect(ready?.message).toMatch(/0 targets|no target/i);
    expect(status.conditions.filter((c) => c.type === 'Stalled' || c.type === 'Reconciling')).toEqual([]);
    expect(p.metadata?.annotations?.['example.com/description']).toBe('保护商店的负载均衡 🚀 — ünïcödé');
    const described = await kubectl(['describe', 'lbp', ref.name, '-n', ns]);
    expect(described.stdout).toContain('保护商店的负载均衡 🚀');
  }, 120_000);
});
