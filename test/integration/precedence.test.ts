// Issue 38 #1, #2 and #8 (and issue 37 #5) on a private local TKE (its own kube-apiserver, so the cluster-wide
// admission policy and the cluster policies reach no other suite): one rule decides which policy manages a target
// (docs/cluster-policy.md §5), and the admission parameters follow the same rule.
//   - prec-p: a NamespacedFirst Enforce ClusterLoopbackPolicy (`fix`) and the tenant's Audit LoopbackPolicy (`own`)
//     both select a new at-risk Service: the cluster policy enforces it (an Audit policy never takes a target from one
//     that enforces it), so `kubectl apply` rightly warns nothing.
//   - prec-q: an older Audit cluster policy (`watch`) and the younger Enforce one (`fix`) overlap: `fix` enforces.
//   - prec-r: only `watch` (Audit): nothing enforces the Service, and `kubectl apply` warns.
// Each at-risk Service applied is either warned about at admission or enforced: never neither.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClusterLoopbackPolicy } from '../../src/api/clusterloopbackpolicy.js';
import type { LoopbackPolicy } from '../../src/api/loopbackpolicy.js';
import { ADMISSION_PARAMS_NAME } from '../../src/admission/params.js';
import { ADMISSION_PARAMS_API_VERSION, ADMISSION_PARAMS_KIND, type AdmissionParams } from '../../src/api/admissionparams.js';
import { POLICY_NAME } from '../../src/admission/policy.js';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds } from '../controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { kubectl, readObject, waitFor } from '../support/kube.js';
import { defaultOverlay } from '../support/overlay.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE } from '../support/operator.js';
import { findRecord } from '../support/records.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const SERVICE_LB_ID = 'service.kubernetes.io/loadbalance-id';
const NS = { p: 'prec-p', q: 'prec-q', r: 'prec-r' } as const;
type Which = keyof typeof NS;

describe('precedence: one rule for the manager and the admission warnings', () => {
  let cp: ControlPlaneState;
  let tke: LocalTke;
  const admin = () => ({ kubeconfig: cp.kubeconfig });
  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;
  const apply = (manifest: unknown, extra: string[] = []) => kubectl(['apply', ...extra, '-f', '-'], { ...admin(), input: JSON.stringify(manifest) });
  const getJson = async <T>(args: string[]): Promise<T | undefined> => {
    const r = await kubectl(['get', ...args, '-o', 'json'], admin());
    return r.code === 0 ? (JSON.parse(r.stdout) as T) : undefined;
  };
  const ours = (stderr: string) => stderr.split('\n').filter((l) => l.includes(POLICY_NAME));
  const service = (which: Which, name = 'web') => ({ apiVersion: 'v1', kind: 'Service', ...lbService(name, AT_RISK_L4), metadata: { ...lbService(name, AT_RISK_L4).metadata, namespace: NS[which] } });
  const clusterPolicy = (name: string, mode: 'Audit' | 'Enforce', label: string) => ({
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'ClusterLoopbackPolicy',
    metadata: { name },
    spec: { mode, namespaceSelector: { matchLabels: { [label]: 'true' } } },
  });
  // loopguard's own param kind (AdmissionParams), not a ConfigMap: kubernetes/kubernetes#130887.
  // Polled, so read in this process (readObject); what the test looks at once goes through kubectl (getJson).
  const params = async () => (await readObject<AdmissionParams>({ apiVersion: ADMISSION_PARAMS_API_VERSION, kind: ADMISSION_PARAMS_KIND, name: ADMISSION_PARAMS_NAME, namespace: OPERATOR_NAMESPACE }, cp.kubeconfig))?.data;
  /** Health-check source types of the CLB's listeners: 1 = 100.64.0.0/10, 0 = the VIP. */
  const sources = async (id: string) => (await tke.emulator.admin.getLoadBalancer(id)).Listeners.map((l) => l.HealthCheck?.SourceIpType ?? 0);
  const lbOf = (which: Which) =>
    waitFor(`CLB of ${NS[which]}/web`, async () => (await readObject({ apiVersion: 'v1', kind: 'Service', name: 'web', namespace: NS[which] }, cp.kubeconfig))?.metadata?.annotations?.[SERVICE_LB_ID]);
  const recordOwner = async (which: Which) => (await findRecord('Service', NS[which], 'web', cp.kubeconfig))?.spec.policy;
  const webOf = (p: { status?: { targets?: { namespace?: string; name: string; verdict?: string; rootCause?: string; message?: string }[] } } | undefined, which: Which) =>
    p?.status?.targets?.find((t) => (t.namespace ?? NS[which]) === NS[which] && t.name === 'web');
  const warned: Partial<Record<Which, string[]>> = {};

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    // As the README installs it on a minor that serves VAP v1: config/default plus the admission-warnings component.
    const installed = await kubectl(['apply', '--server-side', '-k', defaultOverlay(['admission-warnings'])], admin());
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' });
    tke = await startLocalTke({
      kubeconfig: cp.kubeconfig,
      allNamespaces: true,
      profile: 'ipvs-new',
      emulator: { taskDurationMs: 30 },
      resyncIntervalMs: 1_500,
      operator: { leaderElect: false, extraArgs: ['--drift-check-interval=3s', '--tke-grace-period=3s'] },
    });
    const labels: Record<Which, Record<string, string>> = { p: { 'prec.test/fix': 'true' }, q: { 'prec.test/fix': 'true', 'prec.test/watch': 'true' }, r: { 'prec.test/watch': 'true' } };
    for (const which of ['p', 'q', 'r'] as const) expect((await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS[which], labels: labels[which] } })).code).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await tke?.stop();
    if (cp) await stopControlPlane(cp);
  });

  it('the policies: an older Audit cluster policy, a younger NamespacedFirst Enforce one, an Audit LoopbackPolicy', async () => {
    expect((await apply(clusterPolicy('watch', 'Audit', 'prec.test/watch'))).code).toBe(0);
    expect((await kubectl(['wait', '--for=condition=Ready', 'clbp/watch', '--timeout=60s'], admin())).code).toBe(0);
    // `fix` must be older by its creationTimestamp (second precision), not only by a uid: the rule that used to decide.
    const watchCreated = Date.parse((await getJson<ClusterLoopbackPolicy>(['clbp', 'watch']))?.metadata.creationTimestamp as unknown as string);
    await waitFor('a new second on the apiserver clock', () => (Date.now() >= watchCreated + 1_000 ? true : undefined), { timeoutMs: 5_000 });
    expect((await apply(clusterPolicy('fix', 'Enforce', 'prec.test/fix'))).code).toBe(0);
    expect((await apply({ apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { name: 'own', namespace: NS.p }, spec: { mode: 'Audit' } })).code).toBe(0);
    for (const ref of ['clbp/fix', `lbp/own -n ${NS.p}`]) expect((await kubectl(['wait', '--for=condition=Ready', ...ref.split(' '), '--timeout=60s'], admin())).code).toBe(0);
    const fix = (await getJson<ClusterLoopbackPolicy>(['clbp', 'fix']))!;
    expect(Date.parse(fix.metadata.creationTimestamp as unknown as string)).toBeGreaterThan(watchCreated);
  }, 120_000);

  it('the admission parameters name the winner where it enforces, and nothing where only Audit covers', async () => {
    const data = await waitFor('parameters covering prec-p and prec-q', params, {
      until: (d) => d?.[`enforce.Service.${NS.p}`] === 'ClusterLoopbackPolicy/fix' && d[`enforce.Service.${NS.q}`] === 'ClusterLoopbackPolicy/fix',
      timeoutMs: 60_000,
      intervalMs: 250,
      context: logs,
    });
    expect(Object.keys(data ?? {}).filter((k) => k.startsWith('enforce.') && k.includes('prec-')).sort()).toEqual([
      `enforce.Ingress.${NS.p}`,
      `enforce.Ingress.${NS.q}`,
      `enforce.Service.${NS.p}`,
      `enforce.Service.${NS.q}`,
    ]);
    // The apiserver reads the parameters through informers: a dry run under another name shows when it has them.
    for (const [which, warns] of [['r', true], ['p', false], ['q', false]] as const) {
      await waitFor(`a dry run in ${NS[which]}: ${warns ? 'a warning' : 'no warning'}`, async () => ours((await apply(service(which, 'dry-run-probe'), ['--dry-run=server'])).stderr), {
        until: (lines) => (lines.length > 0) === warns,
        timeoutMs: 30_000,
        intervalMs: 250,
      });
    }
  }, 120_000);

  it('kubectl apply of a new at-risk Service: warned only where nothing enforces it', async () => {
    for (const which of ['p', 'q', 'r'] as const) {
      const r = await apply(service(which));
      expect(r.code).toBe(0);
      warned[which] = ours(r.stderr);
    }
    expect(warned.p).toEqual([]);
    expect(warned.q).toEqual([]);
    expect(warned.r).toHaveLength(1);
    expect(warned.r?.[0]).toContain(`Service ${NS.r}/web`);
  }, 60_000);

  it('the NamespacedFirst Enforce cluster policy enforces it beside the Audit LoopbackPolicy, and beside the older Audit cluster policy', async () => {
    for (const which of ['p', 'q'] as const) {
      const lb = await lbOf(which);
      await waitFor(`the record of ${NS[which]}/web held by ClusterLoopbackPolicy/fix`, async () => ((await recordOwner(which))?.name === 'fix' ? true : undefined), { timeoutMs: 60_000, context: logs });
      await waitFor(`${NS[which]}/web's listeners on 100.64.0.0/10`, async () => ((await sources(lb)).every((s) => s === 1) ? true : undefined), { timeoutMs: 60_000, context: logs });
    }
    // The losers say who manages it and why.
    const own = await waitFor('LoopbackPolicy own reports web lost by mode', async () => {
      const p = await getJson<LoopbackPolicy>(['lbp', 'own', '-n', NS.p]);
      return webOf(p, 'p')?.rootCause === 'PolicyPrecedence' ? webOf(p, 'p') : undefined;
    }, { timeoutMs: 60_000, context: logs });
    expect(own).toMatchObject({ verdict: 'Conflict', message: 'managed by ClusterLoopbackPolicy/fix, which enforces it: this policy is in Audit here, and an Audit policy never takes a target from one that enforces it' });
    const watch = await waitFor('ClusterLoopbackPolicy watch reports web in prec-q lost by mode', async () => {
      const p = await getJson<ClusterLoopbackPolicy>(['clbp', 'watch']);
      return webOf(p, 'q')?.verdict === 'Conflict' ? webOf(p, 'q') : undefined;
    }, { timeoutMs: 60_000, context: logs });
    expect(watch?.message).toMatch(/^managed by ClusterLoopbackPolicy\/fix, which enforces it/);
  }, 180_000);

  it('where only Audit covers, nothing is written and the Service stays at risk (the warning was right)', async () => {
    const lb = await lbOf('r');
    const watch = await waitFor('ClusterLoopbackPolicy watch reports prec-r/web at risk', async () => {
      const p = await getJson<ClusterLoopbackPolicy>(['clbp', 'watch']);
      return webOf(p, 'r')?.verdict === 'AtRisk' ? p : undefined;
    }, { timeoutMs: 60_000, context: logs });
    expect(webOf(watch, 'r')?.verdict).toBe('AtRisk');
    expect(await recordOwner('r')).toBeUndefined();
    expect(await sources(lb)).toEqual([0, 0]);
    expect((await tke.emulator.admin.writes()).filter((w) => w.loadBalancerId === lb && w.caller === 'loopguard')).toEqual([]);
  }, 120_000);
});
