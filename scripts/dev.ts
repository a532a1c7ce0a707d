// `npm run dev:up [-- --profile NAME]` / `npm run dev:down`: a local "TKE" for manual work and the demo —
// the real kube-apiserver + etcd (the lead's control-plane launcher), the CLB API emulator and the TKE
// controller simulator, all in the background. State lives in .dev/ (gitignored):
//   .dev/cluster             control plane pointer (written by test/controlplane/cli.ts)
//   .dev/clb-emulator.pid    .dev/clb-emulator.log
//   .dev/tke-simulator.pid   .dev/tke-simulator.log
//   .dev/env                 `source` it: KUBECONFIG, LOOPGUARD_CLB_ENDPOINT/_PROTOCOL, TENCENTCLOUD_*, LOOPGUARD_NAMESPACE (mode 0600) —
//                            everything `npm start` needs, and nothing else
// Credentials are generated per `dev:up`, handed to children through the environment (not argv, which `ps`
// shows), written only to .dev/env, and never printed.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { clusterDown, clusterUp } from '../test/controlplane/cli.js';
import { REPO_ROOT } from '../test/controlplane/crds.js';
import { alive } from '../test/controlplane/launcher.js';
import type { ClusterProfileName } from '../sim/tke-simulator/profiles.js';
import { applyClusterProfile, CLUSTER_PROFILES, isClusterProfileName } from '../sim/tke-simulator/profiles.js';
import { PooledKubeConfig } from '../src/kube/pooled-kubeconfig.js';

const DEV = join(REPO_ROOT, '.dev');
const ENV_FILE = join(DEV, 'env');
const REGION = 'ap-guangzhou';

interface Background {
  name: 'clb-emulator' | 'tke-simulator';
  pidFile: string;
  logFile: string;
}
const EMULATOR: Background = { name: 'clb-emulator', pidFile: join(DEV, 'clb-emulator.pid'), logFile: join(DEV, 'clb-emulator.log') };
const SIMULATOR: Background = { name: 'tke-simulator', pidFile: join(DEV, 'tke-simulator.pid'), logFile: join(DEV, 'tke-simulator.log') };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function readPid(bg: Background): number | undefined {
  if (!existsSync(bg.pidFile)) return undefined;
  const pid = Number(readFileSync(bg.pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Starts a TypeScript entry point as a detached process-group leader (`node --import tsx`, one process, no
 * tsx wrapper), logging to its file. The group lets dev:down stop it and anything it spawned in one signal.
 */
function startBackground(bg: Background, entry: string, args: string[], env: NodeJS.ProcessEnv): number {
  const fd = openSync(bg.logFile, 'w');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, entry), ...args], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', fd, fd],
      env,
    });
    child.unref();
    if (!child.pid) throw new Error(`could not start ${bg.name}`);
    writeFileSync(bg.pidFile, `${child.pid}\n`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** Polls the log until `match` finds what it wants; fails early if the process died. */
async function waitForLog<T>(bg: Background, pid: number, match: (log: string) => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = existsSync(bg.logFile) ? readFileSync(bg.logFile, 'utf8') : '';
    const found = match(log);
    if (found !== undefined) return found;
    if (!alive(pid)) throw new Error(`${bg.name} exited during start-up; see ${bg.logFile}:\n${log.split('\n').slice(-20).join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${bg.name} not ready after ${timeoutMs} ms; see ${bg.logFile}`);
    await sleep(200);
  }
}

/** SIGTERM to the process group, SIGKILL after a grace period; returns whether anything was running. */
async function stopBackground(bg: Background, graceMs = 10_000): Promise<boolean> {
  const pid = readPid(bg);
  rmSync(bg.pidFile, { force: true });
  if (pid === undefined || !alive(pid)) return false;
  const signalGroup = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  if (alive(pid)) signalGroup('SIGKILL');
  while (alive(pid)) await sleep(50);
  return true;
}

/** loopguard's namespace in the dev cluster, as config/ installs it (config/manager/namespace.yaml). */
const OPERATOR_NAMESPACE = 'loopguard-system';

/** Creates the namespace unless it exists: `npm start` puts loopguard's Lease, checkpoint and admission params there. */
async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

async function up(profile: ClusterProfileName, kubeVersion: string | undefined): Promise<void> {
  mkdirSync(DEV, { recursive: true });
  const running = [EMULATOR, SIMULATOR].filter((bg) => {
    const pid = readPid(bg);
    return pid !== undefined && alive(pid);
  });
  if (running.length === 2 && existsSync(ENV_FILE)) {
    const kc = new PooledKubeConfig();
    kc.loadFromFile(/KUBECONFIG='([^']+)'/.exec(readFileSync(ENV_FILE, 'utf8'))?.[1] ?? '');
    await applyClusterProfile(kc, profile);
    await ensureNamespace(kc, OPERATOR_NAMESPACE);
    console.error(`already running (cluster profile now ${profile}); run: source .dev/env`);
    return;
  }
  // Half-up from a crash: start clean.
  for (const bg of running) await stopBackground(bg);

  const cluster = await clusterUp(kubeVersion ? { kubeVersion } : {});
  const kc = new PooledKubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await applyClusterProfile(kc, profile);
  console.error(`cluster profile ${profile} applied (kube-system/kube-proxy)`);
  await ensureNamespace(kc, OPERATOR_NAMESPACE);

  const credentials = { secretId: `AKIDdev${randomBytes(12).toString('hex')}`, secretKey: randomBytes(24).toString('hex') };
  try {
    const emulatorPid = startBackground(EMULATOR, 'sim/clb-emulator/main.ts', ['--region', REGION], {
      ...process.env,
      CLB_EMULATOR_SECRET_ID: credentials.secretId,
      CLB_EMULATOR_SECRET_KEY: credentials.secretKey,
    });
    // The emulator prints one JSON line (endpoint, region, SecretId — never the key) once it listens.
    const endpoint = await waitForLog(
      EMULATOR,
      emulatorPid,
      (log) => {
        for (const line of log.split('\n')) {
          if (!line.startsWith('{')) continue;
          const parsed = JSON.parse(line) as { endpoint?: string };
          if (parsed.endpoint) return parsed.endpoint;
        }
        return undefined;
      },
      30_000,
    );
    console.error(`clb-emulator (pid ${emulatorPid}) listening on ${endpoint}`);

    const simulatorPid = startBackground(SIMULATOR, 'sim/tke-simulator/main.ts', ['--clb-endpoint', endpoint, '--region', REGION], {
      ...process.env,
      KUBECONFIG: cluster.kubeconfig,
      TENCENTCLOUD_SECRET_ID: credentials.secretId,
      TENCENTCLOUD_SECRET_KEY: credentials.secretKey,
      TENCENTCLOUD_REGION: REGION,
    });
    await waitForLog(SIMULATOR, simulatorPid, (log) => (log.includes('tke-simulator started') ? true : undefined), 60_000);
    console.error(`tke-simulator (pid ${simulatorPid}) running; log ${SIMULATOR.logFile}`);

    // The endpoint stays host:port (the TKE simulator's --clb-endpoint form); the emulator speaks plain HTTP,
    // which the protocol says: without it the operator would send TLS to it and fail with EPROTO.
    const env = [
      '# loopguard dev environment (npm run dev:up); secrets for the local CLB emulator only',
      `export KUBECONFIG=${shellQuote(cluster.kubeconfig)}`,
      `export LOOPGUARD_CLB_ENDPOINT=${shellQuote(endpoint)}`,
      `export LOOPGUARD_CLB_PROTOCOL=${shellQuote('http://')}`,
      `export TENCENTCLOUD_SECRET_ID=${shellQuote(credentials.secretId)}`,
      `export TENCENTCLOUD_SECRET_KEY=${shellQuote(credentials.secretKey)}`,
      `export TENCENTCLOUD_REGION=${shellQuote(REGION)}`,
      // loopguard's own namespace (its Lease, checkpoint and admission params): out of cluster it must be named.
      `export LOOPGUARD_NAMESPACE=${shellQuote(OPERATOR_NAMESPACE)}`,
      '',
    ].join('\n');
    writeFileSync(ENV_FILE, env, { mode: 0o600 });
  } catch (err) {
    await down();
    throw err;
  }
  console.log('source .dev/env');
  console.error('then: npm start (the operator against this cluster and the CLB emulator)');
}

async function down(): Promise<void> {
  const sim = await stopBackground(SIMULATOR);
  const emu = await stopBackground(EMULATOR);
  const cluster = await clusterDown();
  rmSync(ENV_FILE, { force: true });
  const stopped = [sim && 'tke-simulator', emu && 'clb-emulator', cluster && 'control plane'].filter(Boolean);
  console.error(stopped.length > 0 ? `stopped: ${stopped.join(', ')}` : 'nothing was running');
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({ args: rest, options: { profile: { type: 'string', default: 'ipvs-new' }, 'kube-version': { type: 'string' } } });
  if (command === 'up') {
    const profile = values.profile ?? 'ipvs-new';
    if (!isClusterProfileName(profile)) throw new Error(`unknown profile ${profile}; one of ${CLUSTER_PROFILES.join(', ')}`);
    await up(profile, values['kube-version']);
  } else if (command === 'down') {
    await down();
  } else {
    console.error(`usage: dev.ts up [--profile ${CLUSTER_PROFILES.join('|')}] [--kube-version 1.28] | down`);
    process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
