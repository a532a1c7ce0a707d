// What the benches share: their cluster (the test ground's control plane, or an existing one) and a wait until
// the emulator has gone quiet (TKE done with its follow-up syncs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import type { ClbEmulator } from '../sim/clb-emulator/index.js';
import { ensureControlPlaneBinaries } from '../test/controlplane/binaries.js';
import { installCrds, REPO_ROOT } from '../test/controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../test/controlplane/launcher.js';
import { waitFor } from '../test/support/kube.js';
import { AT_RISK_L4, lbService } from '../test/support/workload.js';
import { buildOperatorBundle } from '../scripts/build-operator.js';
import { gitCommit } from '../scripts/lib/bundle.js';
import { auditFlags } from './apiserver-audit.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';

/**
 * A control plane of its own, or the cluster KUBECONFIG names when LOOPGUARD_USE_EXISTING_CLUSTER=true; CRDs
 * installed, KUBECONFIG set. `stop` tears down only what was started here. With `audit`, an own control plane
 * logs the operator ServiceAccount's requests to `auditLog` (see apiserver-audit.ts); an existing cluster has none.
 */
export async function benchCluster(options: { audit?: boolean; nodePorts?: number } = {}): Promise<{ stop: () => Promise<void>; auditLog?: string }> {
  let cp: ControlPlaneState | undefined;
  let auditDir: string | undefined;
  let auditLog: string | undefined;
  if (process.env.LOOPGUARD_USE_EXISTING_CLUSTER === 'true') {
    if (!process.env.KUBECONFIG) throw new Error('LOOPGUARD_USE_EXISTING_CLUSTER=true needs KUBECONFIG');
    await installCrds(process.env.KUBECONFIG);
  } else {
    let extraApiserverArgs: string[] = [];
    if (options.audit) {
      auditDir = mkdtempSync(join(tmpdir(), 'loopguard-bench-audit-'));
      const flags = auditFlags(auditDir);
      extraApiserverArgs = flags.args;
      auditLog = flags.log;
    }
    // A wider NodePort range than TKE's default, for a bench that needs more LoadBalancer Services than it holds.
    if (options.nodePorts !== undefined && options.nodePorts > NODE_PORTS) extraApiserverArgs.push(`--service-node-port-range=30000-${30000 + options.nodePorts - 1}`);
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries(), extraApiserverArgs });
    await installCrds(cp.kubeconfig);
    process.env.KUBECONFIG = cp.kubeconfig;
  }
  return {
    ...(auditLog ? { auditLog } : {}),
    stop: async () => {
      if (cp) await stopControlPlane(cp);
      if (auditDir) rmSync(auditDir, { recursive: true, force: true });
    },
  };
}

/** The apiserver's default NodePort range, 30000-32767: TKE's too, so it caps LoadBalancer Services there as well. */
export const NODE_PORTS = 2768;

/** NodePorts a Service takes: one per port, plus the health-check NodePort of externalTrafficPolicy Local. */
export function nodePortsOf(svc: V1Service): number {
  if (svc.spec?.type !== 'LoadBalancer' && svc.spec?.type !== 'NodePort') return 0;
  return (svc.spec.ports?.length ?? 0) + (svc.spec.type === 'LoadBalancer' && svc.spec.externalTrafficPolicy === 'Local' ? 1 : 0);
}

/** Fails at once, naming the bound, when `need` NodePorts cannot fit the range (the apiserver would refuse late). */
export function checkNodePorts(need: number, what: string, range = NODE_PORTS): void {
  if (need > range) {
    throw new Error(`${what} need ${need} NodePorts; the range 30000-${30000 + range - 1} holds ${range} (each port takes one, externalTrafficPolicy Local one more for its health check): use fewer LoadBalancer Services`);
  }
}

/** Creates `n` objects, `concurrency` at a time, retrying each (apiserver races, 429s) until it exists. */
export async function createAll(n: number, create: (i: number) => Promise<unknown>, concurrency = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await waitFor(`create #${i}`, async () => {
        try {
          await create(i);
        } catch (err) {
          // Already there: an earlier attempt got through before its answer was lost.
          if ((err as { code?: number }).code !== 409) throw err;
        }
        return true;
      }, { timeoutMs: 60_000, intervalMs: 100 });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Resolves once the emulator has seen no API call for `quietMs` (everyone idle); returns when that began. */
export async function quiet(emulator: ClbEmulator, quietMs = 3_000, timeoutMs = 300_000): Promise<number> {
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
    { timeoutMs, intervalMs: 500 },
  );
}

/**
 * N at-risk private LoadBalancer Services in `ns` (AT_RISK_L4, 2 listeners, unless `spec` says otherwise), created
 * as fast as the apiserver takes them; resolves with their CLB ids once TKE has built every CLB with all its
 * listeners. N is bounded by the NodePort range (checkNodePorts).
 */
export async function createAtRiskServices(
  core: CoreV1Api,
  emulator: ClbEmulator,
  ns: string,
  n: number,
  _log: (line: string) => void,
  spec: Parameters<typeof lbService>[1] = AT_RISK_L4,
  nodePorts = NODE_PORTS,
): Promise<string[]> {
  const service = (i: number) => lbService(`svc-${String(i).padStart(4, '0')}`, spec);
  checkNodePorts(n * nodePortsOf(service(0)), `${n} Services`, nodePorts);
  const listeners = service(0).spec?.ports?.length ?? 1;
  await createAll(n, (i) => core.createNamespacedService({ namespace: ns, body: service(i) }), 16);
  return waitFor(
    `every CLB assigned with ${listeners} listener(s)`,
    async () => {
      const ids = (await core.listNamespacedService({ namespace: ns })).items.map((s) => s.metadata?.annotations?.[LB_ID]).filter((x): x is string => !!x);
      if (ids.length < n) return undefined;
      const ready = new Set((await emulator.admin.state()).loadBalancers.filter((lb) => lb.Listeners.length >= listeners).map((lb) => lb.LoadBalancerId));
      return ids.every((id) => ready.has(id)) ? ids : undefined;
    },
    { timeoutMs: 900_000, intervalMs: 500 },
  );
}

/**
 * The operator as the image runs it: bundled by `npm run build:operator` into dist/operator/loopguard.cjs (a few
 * seconds) and started as the image's entrypoint starts it (startOperatorProcess). Memory figures of
 * `tsx src/main.ts` would include the TypeScript loader (about 50 MiB), and those of `node dist/main.js` Node's
 * loading of node_modules (~22 MiB more heap than the bundle under load).
 */
export async function buildOperator(): Promise<string> {
  return buildOperatorBundle(join(REPO_ROOT, 'dist', 'operator'), gitCommit());
}

/**
 * Runs a bench's main and exits with its outcome: lingering keep-alive sockets of the kube and CLB clients must
 * not hold the process open once the figures are printed.
 */
export function runBench(main: () => Promise<void>, onError: (err: unknown) => void = (err) => console.error(err)): void {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err: unknown) => {
      onError(err);
      process.exit(1);
    },
  );
}
