// The integration project's global setup and teardown: one real kube-apiserver + etcd for the whole run.
// Suites find it through KUBECONFIG (inherited by the workers) and isolate themselves by namespace.
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds } from '../controlplane/crds.js';
import {
  killControlPlaneSync,
  reapOrphans,
  startControlPlane,
  stopControlPlane,
  type ControlPlaneState,
} from '../controlplane/launcher.js';

declare global {
  var __LOOPGUARD_CONTROL_PLANE__: ControlPlaneState | undefined;
}

export async function setup(): Promise<void> {
  if (process.env.LOOPGUARD_USE_EXISTING_CLUSTER === 'true') {
    const kubeconfig = process.env.KUBECONFIG;
    if (!kubeconfig) throw new Error('LOOPGUARD_USE_EXISTING_CLUSTER=true needs KUBECONFIG=/path/to/kubeconfig');
    const crds = await installCrds(kubeconfig);
    console.log(`\n[loopguard] using the existing cluster in ${kubeconfig} (${crds.length} CRDs established)`);
    return;
  }
  const reaped = await reapOrphans();
  if (reaped > 0) console.log(`\n[loopguard] stopped ${reaped} control plane(s) left behind by a killed run`);

  const t0 = Date.now();
  const binaries = await ensureControlPlaneBinaries();
  const t1 = Date.now();
  const state = await startControlPlane({ binaries });
  globalThis.__LOOPGUARD_CONTROL_PLANE__ = state;
  // Last resort if jest dies without running the teardown; children share our process group anyway.
  process.on('exit', () => killControlPlaneSync(state));
  const crds = await installCrds(state.kubeconfig);
  const t2 = Date.now();
  console.log(
    `\n[loopguard] control plane ${state.version} ready in ${((t2 - t1) / 1000).toFixed(1)} s ` +
      `(binaries ${((t1 - t0) / 1000).toFixed(1)} s, ${crds.length} CRDs established) at ${state.server}`,
  );
  process.env.KUBECONFIG = state.kubeconfig;
  process.env.LOOPGUARD_TEST_USER_KUBECONFIG = state.userKubeconfig;
}

export async function teardown(): Promise<void> {
  const state = globalThis.__LOOPGUARD_CONTROL_PLANE__;
  if (!state) return;
  await stopControlPlane(state);
  globalThis.__LOOPGUARD_CONTROL_PLANE__ = undefined;
  console.log('[loopguard] control plane stopped');
}
