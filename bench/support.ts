// What the benches share: their cluster (the test ground's control plane, or an existing one) and a wait until
// the emulator has gone quiet (TKE done with its follow-up syncs).
import type { CoreV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../sim/clb-emulator/index.js';
import { ensureControlPlaneBinaries } from '../test/controlplane/binaries.js';
import { installCrds } from '../test/controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../test/controlplane/launcher.js';
import { kubectl, waitFor } from '../test/support/kube.js';
import { AT_RISK_L4, lbService } from '../test/support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';

/**
 * A control plane of its own, or the cluster KUBECONFIG names when LOOPGUARD_USE_EXISTING_CLUSTER=true; CRDs
 * installed, KUBECONFIG set. `stop` tears down only what was started here.
 */
export async function benchCluster(): Promise<{ stop: () => Promise<void> }> {
  let cp: ControlPlaneState | undefined;
  if (process.env.LOOPGUARD_USE_EXISTING_CLUSTER === 'true') {
    if (!process.env.KUBECONFIG) throw new Error('LOOPGUARD_USE_EXISTING_CLUSTER=true needs KUBECONFIG');
    await installCrds(process.env.KUBECONFIG);
  } else {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    process.env.KUBECONFIG = cp.kubeconfig;
  }
  return { stop: async () => (cp ? stopControlPlane(cp) : undefined) };
}

/** Resolves once the emulator has seen no API call for `quietMs` (everyone idle); returns when that began. */
export async function quiet(emulator: ClbEmulator, quietMs = 3_000): Promise<number> {
  let last = -1;
  let quietSince = Date.now();
  return waitFor(
    'CLB callers idle',
    async () => {
      const calls = Object.values((await emulator.admin.stats()).calls).reduce((a, b) => a + b, 0);
      if (calls !== last) {
        last = calls;
        quietSince = Date.now();
      }
      return Date.now() - quietSince > quietMs ? quietSince : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 500 },
  );
}

/**
 * N at-risk private LoadBalancer Services (2 listeners each) in `ns`, created as fast as the apiserver takes them
 * (16 at a time, retrying its ClusterIP allocation races); resolves with their CLB ids once TKE has built every CLB
 * with both listeners. The test apiserver's service range is a /24, so a larger N first gets a ServiceCIDR.
 */
export async function createAtRiskServices(
  core: CoreV1Api,
  emulator: ClbEmulator,
  ns: string,
  n: number,
  log: (line: string) => void,
): Promise<string[]> {
  if (2 * n + 20 > 250) {
    const cidr = `apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: bench-${ns}}\nspec: {cidrs: [10.96.0.0/20]}\n`;
    const res = await kubectl(['apply', '-f', '-'], { input: cidr });
    if (res.code !== 0) log(`could not add a ServiceCIDR (${res.stderr.trim()}); N is limited by the /24 service range`);
  }
  let next = 0;
  const create = async () => {
    for (let i = next++; i < n; i = next++) {
      const body = lbService(`svc-${String(i).padStart(4, '0')}`, AT_RISK_L4);
      await waitFor(`create ${body.metadata?.name}`, async () => (await core.createNamespacedService({ namespace: ns, body }), true), { timeoutMs: 30_000, intervalMs: 50 });
    }
  };
  await Promise.all(Array.from({ length: 16 }, create));
  return waitFor(
    'every CLB assigned with 2 listeners',
    async () => {
      const ids = (await core.listNamespacedService({ namespace: ns })).items.map((s) => s.metadata?.annotations?.[LB_ID]).filter((x): x is string => !!x);
      if (ids.length < n) return undefined;
      const ready = new Set((await emulator.admin.state()).loadBalancers.filter((lb) => lb.Listeners.length >= 2).map((lb) => lb.LoadBalancerId));
      return ids.every((id) => ready.has(id)) ? ids : undefined;
    },
    { timeoutMs: 900_000, intervalMs: 500 },
  );
}
