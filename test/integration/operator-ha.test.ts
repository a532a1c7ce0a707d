// Availability of the operator itself: two replicas where only the leader reconciles, hand-over after the
// leader crashes, and recovery when the kube-apiserver restarts under a running operator. This suite kills
// an apiserver, so it runs on its own private control plane.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds } from '../controlplane/crds.js';
import { restartApiserver, startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';

const LEADER_METRIC = 'leader_election_master_status{name="loopguard-leader"} 1';

async function metricsOf(op: OperatorProcess): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${op.port}/metrics`).catch(() => undefined);
  return res ? res.text() : '';
}

function reconciles(metrics: string): number {
  return [...metrics.matchAll(/^controller_runtime_reconcile_total\{controller="loopbackpolicy",[^}]*\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

describe('operator availability', () => {
  let cp: ControlPlaneState;
  let kc: KubeConfig;
  let tke: LocalTke;
  const operators: OperatorProcess[] = [];

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfig);
    tke = await startLocalTke({ kubeconfig: cp.kubeconfig, allNamespaces: true, operator: false });
  });

  afterAll(async () => {
    for (const op of operators) await op.stop('SIGKILL');
    await tke?.stop();
    if (cp) await stopControlPlane(cp);
  });

  async function policyState(name: string): Promise<{ generation: number; observed?: number; ready?: string }> {
    const p = (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: 'loopguard.dev',
      version: 'v1alpha1',
      plural: 'loopbackpolicies',
      namespace: 'default',
      name,
    })) as { metadata: { generation: number }; status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string }> } };
    return {
      generation: p.metadata.generation,
      ...(p.status?.observedGeneration !== undefined ? { observed: p.status.observedGeneration } : {}),
      ...(p.status?.conditions ? { ready: p.status.conditions.find((c) => c.type === 'Ready')?.status } : {}),
    };
  }

  async function converged(name: string, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      `policy ${name} Ready at its latest generation`,
      async () => {
        const s = await policyState(name);
        return s.observed === s.generation && s.ready === 'True' ? true : undefined;
      },
      { timeoutMs },
    );
  }

  it('runs two replicas where only the leader reconciles, and hands over within 20 s when the leader dies', async () => {
    const a = await tke.startOperator({ identity: 'replica-a' });
    operators.push(a);
    await waitFor('replica-a leads', async () => ((await metricsOf(a)).includes(LEADER_METRIC) ? true : undefined));
    const b = await tke.startOperator({ identity: 'replica-b' });
    operators.push(b);

    const policy = 'apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: ha, namespace: default}\nspec: {mode: Audit}\n';
    expect((await kubectl(['apply', '-f', '-'], { input: policy, kubeconfig: cp.kubeconfig })).code).toBe(0);
    await converged('ha');
    expect(reconciles(await metricsOf(a))).toBeGreaterThan(0);
    // The standby is ready (caches synced) but has reconciled nothing.
    expect((await fetch(`http://127.0.0.1:${b.port}/readyz`)).status).toBe(200);
    expect(reconciles(await metricsOf(b))).toBe(0);
    expect(await metricsOf(b)).not.toContain(LEADER_METRIC);

    // A crash: no graceful release of the lease, so b must wait for it to expire (15 s) and take over.
    const killed = Date.now();
    await a.stop('SIGKILL');
    await waitFor('replica-b leads', async () => ((await metricsOf(b)).includes(LEADER_METRIC) ? true : undefined), {
      timeoutMs: 25_000,
      intervalMs: 250,
    });
    const handover = Date.now() - killed;
    expect(handover).toBeLessThan(20_000);

    // The new leader reconciles a spec change.
    expect((await kubectl(['patch', '-n', 'default', 'lbp/ha', '--type=merge', '-p', '{"spec":{"targets":["Service"]}}'], { kubeconfig: cp.kubeconfig })).code).toBe(0);
    await converged('ha');
    expect(reconciles(await metricsOf(b))).toBeGreaterThan(0);
  });

  it('recovers when the kube-apiserver restarts under it, and converges on changes made afterwards', async () => {
    const leader = operators.find((o) => o.child.exitCode === null);
    expect(leader).toBeDefined();
    await restartApiserver(cp, 2_000);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'after-restart', annotations: { 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid': 'subnet-1' } },
        spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] },
      },
    });
    expect((await kubectl(['patch', '-n', 'default', 'lbp/ha', '--type=merge', '-p', '{"spec":{"targets":["Service","Ingress"]}}'], { kubeconfig: cp.kubeconfig })).code).toBe(0);
    await converged('ha', 45_000);
    await waitFor(
      'the new Service diagnosed',
      async () => {
        const out = await kubectl(['get', '-n', 'default', 'lbp/ha', '-o', 'jsonpath={.status.targets[?(@.name=="after-restart")].verdict}'], { kubeconfig: cp.kubeconfig });
        if (out.stdout !== 'AtRisk') {
          const svc = await core.readNamespacedService({ namespace: 'default', name: 'after-restart' });
          throw new Error(`verdict ${out.stdout}; loadbalance-id ${svc.metadata?.annotations?.['service.kubernetes.io/loadbalance-id']}`);
        }
        return true;
      },
      { timeoutMs: 45_000 },
    );
    expect(leader!.child.exitCode).toBeNull();
  });
});
