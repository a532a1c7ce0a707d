// A new leader's first round plans every target once (docs/benchmarks.md "One first round"). The workload and an
// Audit policy exist before the operator starts, as after an install or a restart: the policy's informer queues it with
// every target before leadership comes, and leadership queues every policy with every target again. Queued while the
// first round already ran, the second made a full round right after it (the process's memory peak at 3,000 CLBs);
// queued before the queue runs, both are one round. Counted by the operator's own loopguard_targets_planned_total,
// which counts every policy's targets: on a control plane of its own, so that no other suite's policy is counted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds } from '../controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, getPolicy, policyManifest, waitForCondition } from '../support/policy.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const BOUND = 3;
const CLUSTER_IP = 4;

async function targetsPlanned(operator: OperatorProcess): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${operator.port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('loopguard_targets_planned_total '));
  return Number(line?.split(' ')[1] ?? NaN);
}

describe("a new leader's first round", () => {
  let cp: ControlPlaneState;
  let tke: LocalTke;

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    tke = await startLocalTke({ kubeconfig: cp.kubeconfig, allNamespaces: true, operator: false });
  }, 180_000);

  afterAll(async () => {
    await tke?.stop();
    if (cp) await stopControlPlane(cp);
  });

  it('plans every target once, not once more right after', async () => {
    const kc = kubeConfig(cp.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await createNamespace('first-round', kc);
    for (let i = 0; i < BOUND; i++) await core.createNamespacedService({ namespace: ns, body: lbService(`lb-${i}`, AT_RISK_L4) });
    for (let i = 0; i < CLUSTER_IP; i++) await core.createNamespacedService({ namespace: ns, body: { metadata: { name: `cip-${i}` }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } } });
    // TKE's writes to the Services done (the id, the status VIP, the listeners): none comes after the operator starts.
    await waitFor('every CLB built with its listeners', async () => {
      for (let i = 0; i < BOUND; i++) {
        const svc = await core.readNamespacedService({ namespace: ns, name: `lb-${i}` });
        const id = svc.metadata?.annotations?.[LB_ID];
        if (!id || !svc.status?.loadBalancer?.ingress?.length || (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length < 2) return undefined;
      }
      return true;
    });
    const policy = { namespace: ns, name: 'audit', kubeconfig: cp.kubeconfig };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Audit' }), { kubeconfig: cp.kubeconfig })).code).toBe(0);

    const operator = await tke.startOperator();
    await waitForCondition(policy, 'Ready');
    expect((await getPolicy(policy)).status?.counts?.total).toBe(BOUND + CLUSTER_IP);
    // One more target: its round comes after any round already queued, and plans it alone (no CLB, nothing shared).
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'marker' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } } });
    await waitFor('the marker reported', async () => ((await getPolicy(policy)).status?.counts?.total === BOUND + CLUSTER_IP + 1 ? true : undefined));
    expect(await targetsPlanned(operator)).toBe(BOUND + CLUSTER_IP + 1);
  }, 180_000);
});
