// Issue 38 #3 and #4 on the test apiserver: loopguard's own namespace is explicit, and what a tenant can read
// names only that tenant's objects.
// - Run out of cluster with a kubeconfig context that names no namespace and no --namespace, the operator refuses
//   to start with one line naming the flag, and writes nothing (no Lease in `default`, where it used to go).
// - A ClusterLoopbackPolicy over two namespaces: its Events (which the apiserver keeps in `default` for a
//   cluster-scoped object) count the targets of a blocked deletion and of an abandoned revert and name none; each
//   target's own Event, in its own namespace, names it; the policy's status (cluster-level readers only) still does.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type CoreV1Event } from '@kubernetes/client-node';
import type { ClusterLoopbackPolicy } from '../../src/api/clusterloopbackpolicy.js';
import { findCondition } from '../../src/api/conditions.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { createNamespace, kubeConfig, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { entrypointArgs } from '../support/operator.js';
import { applyPolicy } from '../support/policy.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const SERVICE_LB_ID = 'service.kubernetes.io/loadbalance-id';
const API = { group: 'loopguard.dev', version: 'v1alpha1', plural: 'clusterloopbackpolicies' };

describe("loopguard's own namespace is explicit", () => {
  it('out of cluster without --namespace: refuses to start, naming the flag, and writes nothing to default', async () => {
    const kc = kubeConfig();
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace ?? '').toBe(''); // the case: a context with no namespace
    const lease = `own-ns-${randomBytes(4).toString('hex')}`;
    const child = spawn(
      process.execPath,
      entrypointArgs([`--kubeconfig=${kubeconfigPath()}`, '--region=ap-guangzhou', '--clb-endpoint=127.0.0.1:9', '--clb-protocol=http://', '--probe-port=0', `--leader-election-id=${lease}`]),
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TENCENTCLOUD_SECRET_ID: 'AKIDx', TENCENTCLOUD_SECRET_KEY: 'x' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 30_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect({ code, output }).toEqual({ code: 2, output: expect.stringContaining('set --namespace or LOOPGUARD_NAMESPACE') });
    const leases = await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'default' });
    expect(leases.items.map((l) => l.metadata?.name)).not.toContain(lease);
  }, 60_000);
});

describe("a cluster policy's Events name no tenant's objects", () => {
  let tke: LocalTke;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const suite = randomBytes(4).toString('hex');
  const name = `tenants-${suite}`;
  const ns: string[] = [];
  const lb: string[] = [];
  const logs = () => `--- operator logs (tail) ---\n${tke.operator?.logs().slice(-4000) ?? ''}`;
  const get = async () => (await custom.getClusterCustomObject({ ...API, name })) as ClusterLoopbackPolicy;
  /** The policy's own Events of `reason`, wherever they are (kubectl describe searches every namespace too). */
  const policyEvents = async (reason: string): Promise<CoreV1Event[]> =>
    (await core.listEventForAllNamespaces({ fieldSelector: `involvedObject.kind=ClusterLoopbackPolicy,involvedObject.name=${name},reason=${reason}` })).items;
  const targetEvent = async (namespace: string, reason: string) =>
    (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=Service,involvedObject.name=web,reason=${reason}` })).items[0];
  /** No other tenant's names in a message: neither namespace nor the Service's name with it. */
  const expectNamesNone = (message: string | undefined) => {
    for (const n of ns) expect(message).not.toContain(n);
  };

  beforeAll(async () => {
    tke = await startLocalTke({ resyncIntervalMs: 1_500, simulator: { syncScope: 'declared' }, operator: { leaderElect: false, extraArgs: ['--drift-check-interval=3s', '--tke-grace-period=3s'] } });
    for (const k of ['a', 'b']) {
      const n = await createNamespace(`tenant-${k}`);
      ns.push(n);
      tke.namespaces.add(n);
      await core.patchNamespace({ name: n, body: { metadata: { labels: { 'loopguard.test/suite': suite } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await core.createNamespacedService({ namespace: n, body: lbService('web', AT_RISK_L4) });
    }
    for (const n of ns) lb.push(await waitFor(`CLB of ${n}/web`, async () => (await core.readNamespacedService({ namespace: n, name: 'web' })).metadata?.annotations?.[SERVICE_LB_ID]));
  }, 120_000);

  afterAll(async () => {
    await tke?.emulator.admin.clearFaults();
    const left = await custom.getClusterCustomObject({ ...API, name }).catch(() => undefined);
    if (left) {
      await custom.patchClusterCustomObject({ ...API, name, body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
      await custom.deleteClusterCustomObject({ ...API, name }).catch(() => undefined);
    }
    await tke?.stop();
  });

  it('DeletionBlocked and RevertAbandoned on the policy count; on each target they name', async () => {
    const manifest = `apiVersion: loopguard.dev/v1alpha1
kind: ClusterLoopbackPolicy
metadata: {name: ${name}}
spec:
  mode: Enforce
  namespaceSelector:
    matchLabels: {loopguard.test/suite: "${suite}"}
`;
    expect((await applyPolicy(manifest)).code).toBe(0);
    await waitFor('both targets Mitigated', async () => ((await get()).status?.counts?.mitigated === 2 ? true : undefined), { timeoutMs: 90_000, context: logs });
    // Restoring both CLBs' listeners is refused: the deletion blocks on both targets.
    await tke.emulator.admin.setFaults({ rules: lb.map((id) => ({ action: 'ModifyListener', rate: 1, kind: 'error' as const, code: 'UnauthorizedOperation', message: 'denied (injected)', loadBalancerId: id })) });
    expect((await kubectl(['delete', 'clusterloopbackpolicy', name, '--wait=false'])).code).toBe(0);

    const blocked = await waitFor('DeletionBlocked on the policy', async () => (await policyEvents('DeletionBlocked'))[0], { timeoutMs: 60_000, context: logs });
    expect(blocked.metadata?.namespace).toBe('default');
    expect(blocked.message).toContain('deletion waits for the revert of 2 target(s) in 2 namespace(s)');
    expect(blocked.message).toContain(`kubectl annotate clusterloopbackpolicy ${name} loopguard.dev/abandon=true`);
    expectNamesNone(blocked.message);
    for (const n of ns) {
      const own = await waitFor(`DeletionBlocked on ${n}/web`, () => targetEvent(n, 'DeletionBlocked'), { timeoutMs: 30_000, context: logs });
      expect(own.message).toContain(`ClusterLoopbackPolicy/${name} cannot restore this Service`);
    }
    // Status is for cluster-level readers: it may name the target it waits for.
    const stalled = findCondition((await get()).status?.conditions, 'Stalled');
    expect(stalled?.message).toMatch(new RegExp(`e\\.g\\. Service (${ns.join('|')})/web`));

    expect((await kubectl(['annotate', 'clusterloopbackpolicy', name, 'loopguard.dev/abandon=true'])).code).toBe(0);
    const abandoned = await waitFor('RevertAbandoned on the policy', async () => (await policyEvents('RevertAbandoned'))[0], { timeoutMs: 60_000, context: logs });
    expect(abandoned.message).toContain('targets left as loopguard set them: 2 target(s) in 2 namespace(s)');
    expectNamesNone(abandoned.message);
    for (const n of ns) {
      const own = await waitFor(`RevertAbandoned on ${n}/web`, () => targetEvent(n, 'RevertAbandoned'), { timeoutMs: 30_000, context: logs });
      expect(own.involvedObject.namespace).toBe(n);
    }
    // Every Event loopguard wrote about this policy: none names a tenant's namespace.
    const all = (await core.listEventForAllNamespaces({ fieldSelector: `involvedObject.kind=ClusterLoopbackPolicy,involvedObject.name=${name}` })).items;
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const e of all) expectNamesNone(e.message);
  }, 240_000);
});
