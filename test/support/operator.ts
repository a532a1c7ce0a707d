// Runs the real operator (src/main.ts, bundled as the image runs it) as a separate process, the way it runs in a
// cluster: under the `loopguard` ServiceAccount with the RBAC from config/, against the CLB emulator.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';
import { freePort, onFreshPorts } from '../controlplane/launcher.js';
import { BUNDLE_NODE_OPTIONS } from '../../scripts/lib/bundle.js';
import { WaitHopeless, kubeConfig, kubeconfigPath, kubectl, waitFor } from './kube.js';

export const OPERATOR_NAMESPACE = 'loopguard-system';

/** The operator's bundle for this run (`npm run build:operator`'s file), built by the integration runner (harness.ts). */
export const OPERATOR_BUNDLE_ENV = 'LOOPGUARD_TEST_OPERATOR_BUNDLE';

/**
 * The arguments after `node` that run the image's entrypoint with `args` (`doctor …`, `plan …`, `probe …` or the
 * operator's flags): this run's bundle with the image's Node options, as `IMAGE doctor …` runs it, or `src/main.ts`
 * through tsx when there is no bundle (a suite run alone, outside the integration runner). From the bundle a run
 * costs about 0.5 s of CPU, through tsx 2.8 s (`--version`, 2026-11-30). The checkout's own `bin/loopguard.js` is
 * run by the CLI's unit tests, admission-warnings and `plugin` (`npm run loopguard -- doctor`, as the README says).
 */
export function entrypointArgs(args: readonly string[], entry = process.env[OPERATOR_BUNDLE_ENV]): string[] {
  return [...(entry ? [...BUNDLE_NODE_OPTIONS, entry] : ['--import', 'tsx', join(REPO_ROOT, 'src/main.ts')]), ...args];
}

/** The operator's ServiceAccount kubeconfig on the worker's control plane, made with its RBAC by the harness. */
export const OPERATOR_KUBECONFIG_ENV = 'LOOPGUARD_TEST_OPERATOR_KUBECONFIG';

/**
 * A kubeconfig of the operator's ServiceAccount under config/'s RBAC. The worker's control plane got both with its CRDs
 * (test/support/harness.ts), once, instead of two `kubectl apply` and a token for each local TKE (121 `kubectl` runs
 * counted over most of one `npm test`); a suite's own control plane (`adminKubeconfig`) gets them here.
 */
export async function operatorAccountKubeconfig(adminKubeconfig?: string): Promise<string> {
  const prepared = adminKubeconfig === undefined ? process.env[OPERATOR_KUBECONFIG_ENV] : undefined;
  if (prepared) return prepared;
  await installOperatorRbac(adminKubeconfig);
  return serviceAccountKubeconfig(adminKubeconfig);
}

/** Applies the namespace, ServiceAccount and RBAC of config/ (not the Deployment). Idempotent. */
export async function installOperatorRbac(kubeconfig?: string): Promise<void> {
  for (const args of [
    ['apply', '-f', join(REPO_ROOT, 'config/manager/namespace.yaml')],
    ['apply', '-k', join(REPO_ROOT, 'config/rbac')],
  ]) {
    const res = await kubectl(args, kubeconfig ? { kubeconfig } : {});
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  }
}

/**
 * A kubeconfig that authenticates as a ServiceAccount (TokenRequest API, like a projected token): the operator's
 * `loopguard` by default, or another one a suite created (e.g. a read-only account for `loopguard doctor`).
 */
export async function serviceAccountKubeconfig(adminKubeconfig?: string, account: { name: string; namespace: string } = { name: 'loopguard', namespace: OPERATOR_NAMESPACE }): Promise<string> {
  const opts = adminKubeconfig ? { kubeconfig: adminKubeconfig } : {};
  const res = await kubectl(['create', 'token', account.name, '-n', account.namespace, '--duration=2h'], opts);
  if (res.code !== 0) throw new Error(`kubectl create token: ${res.stderr}`);
  const admin = kubeConfig(adminKubeconfig);
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('admin kubeconfig has no cluster');
  const caLine = cluster.caFile ? `    certificate-authority: ${cluster.caFile}` : '    insecure-skip-tls-verify: true';
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-sa-'));
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: ${cluster.server}`,
      caLine,
      'users:',
      `- name: ${account.name}`,
      `  user: {token: ${res.stdout.trim()}}`,
      'contexts:',
      '- name: c',
      `  context: {cluster: c, user: ${account.name}}`,
      'current-context: c',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return path;
}

export interface OperatorProcess {
  child: ChildProcess;
  port: number;
  /** The HTTPS metrics server's port when it runs (--metrics-secure; pass --metrics-port=0), as the operator logged it. */
  metricsPort?: number;
  identity: string;
  logs: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface OperatorProcessOptions {
  kubeconfig?: string;
  emulator: { endpoint: string; region: string; credentials: { secretId: string; secretKey: string } };
  identity?: string;
  leaderElect?: boolean;
  extraArgs?: string[];
  /** loopguard's own namespace (--namespace); default OPERATOR_NAMESPACE, where config/rbac grants its Roles. */
  namespace?: string;
  /**
   * The operator's bundle (`npm run build:operator`: what the image runs), run with the image's Node options; default:
   * the one the integration runner built for this run (harness.ts), else src/main.ts through tsx.
   */
  entry?: string;
}

/** The port of the server a "… listening" line of the operator's JSON log names (`Probe server`, `Metrics server`). */
export function listeningPort(logs: string, server: 'Probe server' | 'Metrics server'): number | undefined {
  for (const line of logs.split('\n')) {
    if (!line.includes(`"${server} listening`)) continue;
    const port = (JSON.parse(line) as { port?: unknown }).port;
    if (typeof port === 'number') return port;
  }
  return undefined;
}

let started = 0;

/**
 * Starts the operator (its bundle, or `src/main.ts` through tsx) and waits until /readyz answers 200 (caches synced).
 * The probe port is one found free just before: it can be taken in between by another suite's server or an outgoing
 * connection (CI, stop 63: EADDRINUSE), and the operator then exits at once saying so; it is started again on
 * another, as the control plane is (onFreshPorts). Port 0 would need the port from the log, and the benches run at
 * --log-level=warn.
 */
export async function startOperatorProcess(options: OperatorProcessOptions): Promise<OperatorProcess> {
  const identity = options.identity ?? `op-${process.pid}-${++started}`;
  return onFreshPorts(async () => launchOperator(options, identity, await freePort()), (err) => err instanceof PortTaken);
}

/** The operator exited because its probe port was in use. */
class PortTaken extends WaitHopeless {}

async function launchOperator(options: OperatorProcessOptions, identity: string, port: number): Promise<OperatorProcess> {
  const args = [
    // For measuring a bench's operator under other V8 flags, e.g. LOOPGUARD_OPERATOR_V8_FLAGS=--single-threaded-gc
    // (NODE_OPTIONS takes only a few V8 flags).
    ...(process.env['LOOPGUARD_OPERATOR_V8_FLAGS']?.split(' ').filter(Boolean) ?? []),
    ...entrypointArgs([
    `--kubeconfig=${options.kubeconfig ?? kubeconfigPath()}`,
    `--probe-host=127.0.0.1`,
    `--probe-port=${port}`,
    `--clb-endpoint=${options.emulator.endpoint}`,
    '--clb-protocol=http://',
    `--region=${options.emulator.region}`,
    `--identity=${identity}`,
    `--leader-elect=${options.leaderElect ?? true}`,
    `--namespace=${options.namespace ?? OPERATOR_NAMESPACE}`,
    ...(options.extraArgs ?? []),
    ], options.entry),
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TENCENTCLOUD_SECRET_ID: options.emulator.credentials.secretId,
      TENCENTCLOUD_SECRET_KEY: options.emulator.credentials.secretKey,
      // For measuring a bench's operator under another glibc arena count.
      ...(process.env['MALLOC_ARENA_MAX'] ? { MALLOC_ARENA_MAX: process.env['MALLOC_ARENA_MAX'] } : {}),
      // For profiling a bench's operator, e.g. LOOPGUARD_OPERATOR_NODE_OPTIONS=--heapsnapshot-signal=SIGUSR2.
      ...(process.env['LOOPGUARD_OPERATOR_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['LOOPGUARD_OPERATOR_NODE_OPTIONS'] } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  // 'close', not 'exit': the process may have exited with its last lines still in the pipes, and a test that reads
  // the log right after stop() looks for them.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  await waitFor(
    `operator ${identity} ready`,
    async () => {
      if (done) throw logs.includes(`probe port 127.0.0.1:${port} is in use`) ? new PortTaken(`operator exited early:\n${logs}`) : new WaitHopeless(`operator exited early:\n${logs}`);
      // Bounded: whatever took the port may accept and never answer, and the exit above is seen only between polls.
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    if (err instanceof PortTaken) throw err;
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- operator logs ---\n${logs}`);
  });
  const metricsPort = listeningPort(logs, 'Metrics server');
  return {
    child,
    port,
    ...(metricsPort === undefined ? {} : { metricsPort }),
    identity,
    logs: () => logs,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (!done) child.kill(signal);
      return exited;
    },
  };
}
