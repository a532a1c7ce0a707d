// One cluster of bench:fleet: its own control plane (kube-apiserver + etcd), TKE simulator and loopguard, on the
// shared emulator account with credentials of their own (callers `loopguard-<i>` and `tke-<i>`), so the emulator
// tells every caller apart while all of them spend the one quota.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ClbEmulator } from '../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator, type TkeSimulator } from '../sim/tke-simulator/index.js';
import type { ControlPlaneBinaries } from '../test/controlplane/binaries.js';
import { installCrds } from '../test/controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../test/controlplane/launcher.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../test/support/kube.js';
import { installOperatorRbac, serviceAccountKubeconfig, startOperatorProcess, type OperatorProcess } from '../test/support/operator.js';
import { AT_RISK_L4, lbService } from '../test/support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';

export interface FleetCluster {
  name: string;
  loopguard: string;
  tke: string;
  kubeconfig: string;
  kc: KubeConfig;
  core: CoreV1Api;
  namespaces: Set<string>;
  simulator: TkeSimulator;
  operator?: OperatorProcess;
  stop(): Promise<void>;
}

export async function startFleetCluster(i: number, binaries: ControlPlaneBinaries, emulator: ClbEmulator): Promise<FleetCluster> {
  const name = `c${i}`;
  const cp: ControlPlaneState = await startControlPlane({ binaries });
  let simulator: TkeSimulator | undefined;
  try {
    await installCrds(cp.kubeconfig);
    const kc = kubeConfig(cp.kubeconfig);
    await applyClusterProfile(kc, 'ipvs-new');
    const namespaces = new Set<string>();
    const tke = `tke-${i}`;
    const credentials = emulator.callers[tke];
    if (!credentials) throw new Error(`the emulator has no caller ${tke}`);
    simulator = await startTkeSimulator({
      kubeConfig: kc,
      clusterId: `cls-fleet${String(i).padStart(3, '0')}`,
      clb: { endpoint: emulator.endpoint, region: emulator.region, credentials, protocol: 'http://' },
      namespaceFilter: (n) => namespaces.has(n),
      resyncIntervalMs: 0,
      concurrency: 32,
    });
    await installOperatorRbac(cp.kubeconfig);
    const sim = simulator;
    const cluster: FleetCluster = {
      name,
      loopguard: `loopguard-${i}`,
      tke,
      kubeconfig: cp.kubeconfig,
      kc,
      core: kc.makeApiClient(CoreV1Api),
      namespaces,
      simulator: sim,
      stop: async () => {
        await cluster.operator?.stop();
        await sim.stop();
        await stopControlPlane(cp);
      },
    };
    return cluster;
  } catch (err) {
    await simulator?.stop();
    await stopControlPlane(cp);
    throw err;
  }
}

/** Starts the cluster's loopguard under its ServiceAccount with the cluster's own emulator credentials. */
export async function startFleetOperator(c: FleetCluster, emulator: ClbEmulator, extraArgs: string[]): Promise<OperatorProcess> {
  const credentials = emulator.callers[c.loopguard];
  if (!credentials) throw new Error(`the emulator has no caller ${c.loopguard}`);
  c.operator = await startOperatorProcess({
    kubeconfig: await serviceAccountKubeconfig(c.kubeconfig),
    emulator: { endpoint: emulator.endpoint, region: emulator.region, credentials },
    extraArgs,
  });
  return c.operator;
}

/** A namespace TKE serves (the simulator only touches namespaces it was told of). */
export async function tkeNamespace(c: FleetCluster, prefix: string): Promise<string> {
  const ns = await createNamespace(prefix, c.kc);
  c.namespaces.add(ns);
  return ns;
}

export async function applyPolicy(c: FleetCluster, ns: string, name: string): Promise<void> {
  const policy = `apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: {mode: Enforce, revertOnDelete: true, l4: {sourceSwitch: Direct}}\n`;
  const applied = await kubectl(['apply', '-f', '-'], { input: policy, kubeconfig: c.kubeconfig });
  if (applied.code !== 0) throw new Error(`${c.name}: ${applied.stderr}`);
}

/**
 * TKE's latency as its users see it: a new at-risk Service in a namespace no policy covers, from creation until TKE
 * has given it a CLB with both listeners (CreateLoadBalancer, CreateListener, reads and task polls on the account).
 */
export async function tkeServiceLatency(c: FleetCluster, emulator: ClbEmulator, ns: string, name: string): Promise<number> {
  const t0 = Date.now();
  await c.core.createNamespacedService({ namespace: ns, body: lbService(name, AT_RISK_L4) });
  return waitFor(
    `${c.name}: TKE assigns ${name} a CLB`,
    async () => {
      const s = await c.core.readNamespacedService({ namespace: ns, name });
      const id = s.metadata?.annotations?.[LB_ID];
      if (!id) return undefined;
      const lb = await emulator.admin.getLoadBalancer(id);
      return lb.Listeners.length >= 2 ? Date.now() - t0 : undefined;
    },
    // 100 ms: enough against latencies of 0.4 s and more, and light on the machine the clusters share.
    { timeoutMs: 300_000, intervalMs: 100 },
  );
}
