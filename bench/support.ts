// What the benches share: their cluster (the test ground's control plane, or an existing one) and a wait until
// the emulator has gone quiet (TKE done with its follow-up syncs).
import type { ClbEmulator } from '../sim/clb-emulator/index.js';
import { ensureControlPlaneBinaries } from '../test/controlplane/binaries.js';
import { installCrds } from '../test/controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../test/controlplane/launcher.js';
import { waitFor } from '../test/support/kube.js';

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
