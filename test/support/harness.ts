// The integration project's control planes: one real kube-apiserver + etcd per Jest worker, started by the project's
// runner (test/support/integration-runner.js) before its workers and stopped after them. Everything cluster-wide
// (the kube-system/kube-proxy profile, the operator's Lease and checkpoint, the CRDs, ClusterLoopbackPolicies) is
// per control plane, so suites on different workers cannot see each other's; within a worker suites run one after
// the other and isolate themselves by namespace, as before. A worker finds its own control plane through
// JEST_WORKER_ID (test/support/integration-environment.js). The operator the suites start is built here once, as the
// image runs it (operator.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOperatorBundle } from '../../scripts/build-operator.js';
import { gitCommit } from '../../scripts/lib/bundle.js';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { OPERATOR_BUNDLE_ENV, operatorAccountKubeconfig } from './operator.js';
import { installCrds } from '../controlplane/crds.js';
import { installLabCommands } from '../../lab/preflight.js';
import {
  killControlPlaneSync,
  reapOrphans,
  startControlPlane,
  stopControlPlane,
  type ControlPlaneState,
} from '../controlplane/launcher.js';

/** What a worker needs of its control plane, in the environment variable CONTROL_PLANES_ENV (JSON, worker 1 first). */
export interface WorkerControlPlane {
  kubeconfig: string;
  userKubeconfig?: string;
  /** The operator's ServiceAccount (config/'s RBAC applied here): operator.ts `operatorAccountKubeconfig`. */
  operatorKubeconfig: string;
}

export const CONTROL_PLANES_ENV = 'LOOPGUARD_TEST_CONTROL_PLANES';

/** Where this run's operator bundle is, until teardown removes it. */
let bundleDir: string | undefined;

/**
 * Builds the operator once for the run, as the image runs it: through tsx each of the run's ~100 operator starts
 * cost 2.6 s of CPU (Node loading and transforming hundreds of modules), from the bundle 0.6 s (docs/development.md
 * "Where the CPU goes"). Built from the working tree at every run, so it is the code under test.
 */
async function buildOperator(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-test-operator-'));
  bundleDir = dir;
  const t0 = Date.now();
  process.env[OPERATOR_BUNDLE_ENV] = await buildOperatorBundle(dir, gitCommit());
  console.log(`\n[loopguard] operator bundle built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/**
 * Starts `count` control planes side by side (or, with LOOPGUARD_USE_EXISTING_CLUSTER=true, uses KUBECONFIG's
 * cluster, which allows one worker only), installs the CRDs on each and publishes their kubeconfigs in
 * CONTROL_PLANES_ENV, which the workers inherit. Returns what `teardown` stops.
 */
export async function setup(count: number): Promise<ControlPlaneState[]> {
  await buildOperator();
  // On any cluster, an existing one too: the lab suites run on this machine's kernel.
  await installLabCommands((line) => console.log(`\n[loopguard] ${line}`));
  if (process.env.LOOPGUARD_USE_EXISTING_CLUSTER === 'true') {
    const kubeconfig = process.env.KUBECONFIG;
    if (!kubeconfig) throw new Error('LOOPGUARD_USE_EXISTING_CLUSTER=true needs KUBECONFIG=/path/to/kubeconfig');
    if (count !== 1) throw new Error(`an existing cluster serves one worker, not ${count}`);
    const crds = await installCrds(kubeconfig);
    console.log(`\n[loopguard] using the existing cluster in ${kubeconfig} (${crds.length} CRDs established)`);
    publish([{ kubeconfig, userKubeconfig: process.env.LOOPGUARD_TEST_USER_KUBECONFIG, operatorKubeconfig: await operatorAccountKubeconfig(kubeconfig) }]);
    return [];
  }
  const reaped = await reapOrphans();
  if (reaped > 0) console.log(`\n[loopguard] stopped ${reaped} control plane(s) left behind by a killed run`);

  const t0 = Date.now();
  const binaries = await ensureControlPlaneBinaries();
  const t1 = Date.now();
  const started = await Promise.allSettled(
    Array.from({ length: count }, async () => {
      const state = await startControlPlane({ binaries });
      // Last resort if Jest dies without running the teardown; children share our process group anyway.
      process.on('exit', () => killControlPlaneSync(state));
      return state;
    }),
  );
  const states = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await teardown(states);
    throw failed.reason;
  }
  const crds = await Promise.all(states.map((s) => installCrds(s.kubeconfig)));
  // config/'s namespace, ServiceAccount and RBAC are part of every control plane, like the CRDs; so is a token of that
  // account (2 h, longer than CI's limit for a whole run) that every operator started on it runs with.
  const operators = await Promise.all(states.map((s) => operatorAccountKubeconfig(s.kubeconfig)));
  const t2 = Date.now();
  console.log(
    `\n[loopguard] ${count} control plane(s) ${states[0]?.version ?? ''} ready in ${((t2 - t1) / 1000).toFixed(1)} s ` +
      `(binaries ${((t1 - t0) / 1000).toFixed(1)} s, ${crds[0]?.length ?? 0} CRDs established on each) at ${states.map((s) => s.server).join(', ')}`,
  );
  publish(states.map((s, i) => ({ kubeconfig: s.kubeconfig, userKubeconfig: s.userKubeconfig, operatorKubeconfig: operators[i]! })));
  return states;
}

function publish(planes: WorkerControlPlane[]): void {
  process.env[CONTROL_PLANES_ENV] = JSON.stringify(planes);
}

export async function teardown(states: ControlPlaneState[]): Promise<void> {
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  bundleDir = undefined;
  if (states.length === 0) return;
  await Promise.all(states.map((s) => stopControlPlane(s)));
  delete process.env[CONTROL_PLANES_ENV];
  console.log(`[loopguard] ${states.length} control plane(s) stopped`);
}
