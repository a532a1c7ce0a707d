// Starts a real etcd + kube-apiserver on free 127.0.0.1 ports, the way controller-runtime's envtest does (pkg/internal/testing/controlplane),
// writes kubeconfigs for an admin and for an unprivileged user, and tears both down by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneBinaries } from './binaries.js';

export interface ControlPlaneOptions {
  binaries: ControlPlaneBinaries;
  /** Readiness budget for etcd and the apiserver together (60 s). */
  readyTimeoutMs?: number;
  /**
   * Detached children get their own process group and survive the launching process (cluster:up);
   * otherwise they share the caller's group, so a Ctrl-C in the terminal also reaches them.
   */
  detached?: boolean;
  /** More kube-apiserver flags (e.g. the benches' audit log, which counts the operator's requests). */
  extraApiserverArgs?: string[];
}

/** Everything needed to reach the control plane or stop it later, also from another process. */
export interface ControlPlaneState {
  dir: string;
  server: string;
  kubeconfig: string;
  userKubeconfig: string;
  userName: string;
  etcdPid: number;
  apiserverPid: number;
  ownerPid: number;
  version: string;
  /** How the apiserver was started, so a test can restart it on the same port (watch-recovery tests). */
  apiserver: { bin: string; args: string[]; log: string; detached: boolean; adminToken: string };
}

export const TEST_USER = 'loopguard-test-user';
const STATE_FILE = 'state.json';
const DIR_PREFIX = 'loopguard-cp-';

/** A free TCP port on 127.0.0.1 (for servers that must be told their port before they start). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function spawnLogged(bin: string, args: string[], logFile: string, detached: boolean): ChildProcess {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd], detached });
    if (detached) child.unref();
    return child;
  } finally {
    closeSync(fd);
  }
}

function tail(file: string, lines = 60): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

interface HttpResult {
  status: number;
  body: string;
}

function httpsGet(url: string, token: string, timeoutMs = 5_000): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    // The apiserver serves a self-signed certificate it minted at start; readiness probing only.
    const req = request(url, { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function httpGet(url: string): Promise<HttpResult> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  return { status: res.status, body: await res.text() };
}

async function pollUntil(
  what: string,
  deadline: number,
  check: () => Promise<boolean>,
  exited: () => string | undefined,
): Promise<void> {
  for (;;) {
    const gone = exited();
    if (gone) throw new Error(`${what}: ${gone}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready before the deadline`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function kubeconfigYaml(server: string, caFile: string, user: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: loopguard-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority: ${caFile}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: loopguard-test',
    '  context:',
    '    cluster: loopguard-test',
    `    user: ${user}`,
    'current-context: loopguard-test',
    '',
  ].join('\n');
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    // already gone, or not a group leader: fall back to the single process
    if (group) signal(pid, sig, false);
  }
}

async function stopPid(pid: number, graceMs: number): Promise<void> {
  if (!alive(pid)) return;
  signal(pid, 'SIGTERM', true);
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) signal(pid, 'SIGKILL', true);
  while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
}

/** Stops apiserver first (it holds etcd connections), then etcd, and removes the state directory. */
export async function stopControlPlane(state: Pick<ControlPlaneState, 'dir' | 'etcdPid' | 'apiserverPid'>): Promise<void> {
  await stopPid(state.apiserverPid, 20_000);
  await stopPid(state.etcdPid, 20_000);
  rmSync(state.dir, { recursive: true, force: true });
  const shmData = join('/dev/shm', `${DIR_PREFIX}${state.dir.split(DIR_PREFIX).pop() ?? ''}`);
  if (shmData !== '/dev/shm/' && existsSync(shmData)) rmSync(shmData, { recursive: true, force: true });
}

/** Synchronous last-resort kill, for process 'exit' handlers where no await is possible. */
export function killControlPlaneSync(state: Pick<ControlPlaneState, 'etcdPid' | 'apiserverPid'>): void {
  for (const pid of [state.apiserverPid, state.etcdPid]) if (alive(pid)) signal(pid, 'SIGKILL', true);
}

export function readState(dir: string): ControlPlaneState | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')) as ControlPlaneState;
  } catch {
    return undefined;
  }
}

/**
 * A test run killed with SIGKILL cannot clean up after itself. Before starting, stop control planes whose
 * owner process is gone (they are ours: their state file lives in a loopguard-cp-* directory).
 */
export async function reapOrphans(): Promise<number> {
  const { readdirSync } = await import('node:fs');
  let reaped = 0;
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const state = readState(join(tmpdir(), name));
    if (!state || state.ownerPid === 0 || alive(state.ownerPid)) continue;
    await stopControlPlane(state);
    reaped++;
  }
  return reaped;
}

/** Ports are probed free and handed over, so another process may take one in between: then start again. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * Runs `start` (which picks its ports with freePort) again, on new ports, when `lost` says a port was taken between
 * the probe and the bind; up to PORT_RACE_ATTEMPTS times. For servers that must be told their port before they start.
 */
export async function onFreshPorts<T>(start: () => Promise<T>, lost: (err: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (!lost(err) || attempt >= PORT_RACE_ATTEMPTS) throw err;
    }
  }
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlaneState> {
  return onFreshPorts(() => startControlPlaneOnce(options), (err) => err instanceof Error && /bind: address already in use/.test(err.message));
}

async function startControlPlaneOnce(options: ControlPlaneOptions): Promise<ControlPlaneState> {
  const { binaries } = options;
  const detached = options.detached ?? false;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  const suffix = dir.split(DIR_PREFIX).pop() ?? 'x';
  // etcd on tmpfs when there is one: no fsync cost, and nothing to clean on disk after a crash.
  const etcdData = existsSync('/dev/shm') ? join('/dev/shm', `${DIR_PREFIX}${suffix}`) : join(dir, 'etcd');
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true });

  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  writeFileSync(join(dir, 'sa.key'), privateKey, { mode: 0o600 });
  writeFileSync(join(dir, 'sa.pub'), publicKey);
  const adminToken = randomBytes(24).toString('hex');
  const userToken = randomBytes(24).toString('hex');
  // Static token file: token,user,uid,"groups". The second user has no bindings: RBAC tests grant what they need.
  writeFileSync(
    join(dir, 'tokens.csv'),
    `${adminToken},admin,admin,"system:masters"\n${userToken},${TEST_USER},${TEST_USER},"loopguard-test"\n`,
    { mode: 0o600 },
  );

  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcdLog = join(dir, 'etcd.log');
  const apiLog = join(dir, 'kube-apiserver.log');
  const etcd = spawnLogged(
    binaries.etcd,
    [
      '--name=lg',
      `--data-dir=${etcdData}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=lg=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    etcdLog,
    detached,
  );
  const pids = { etcdPid: etcd.pid ?? -1, apiserverPid: -1 };
  let etcdExit: string | undefined;
  etcd.on('exit', (code, sig) => (etcdExit = `etcd exited (${code ?? sig})`));

  const server = `https://127.0.0.1:${apiPort}`;
  const state: ControlPlaneState = {
    dir,
    server,
    kubeconfig: join(dir, 'admin.kubeconfig'),
    userKubeconfig: join(dir, 'user.kubeconfig'),
    userName: TEST_USER,
    ...pids,
    // 0 = detached (cluster:up): no owner to outlive; only cluster:down stops it.
    ownerPid: detached ? 0 : process.pid,
    version: '',
    apiserver: { bin: binaries.kubeApiserver, args: [], log: apiLog, detached, adminToken },
  };
  // 0600: the state holds the admin token.
  const persist = () => writeFileSync(join(dir, STATE_FILE), JSON.stringify(state, null, 2), { mode: 0o600 });
  persist();

  try {
    await pollUntil(
      `etcd did not become healthy (log ${etcdLog}):\n${'-'.repeat(20)}`,
      deadline,
      async () => (await httpGet(`http://127.0.0.1:${etcdPort}/health`)).body.includes('"health":"true"'),
      () => (etcdExit ? `${etcdExit}\n${tail(etcdLog)}` : undefined),
    );

    state.apiserver = {
      bin: binaries.kubeApiserver,
      args: [
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${pki}`,
        // A /16 holds a large cluster's Services (bench:scale creates 10,000); a /24 stops at 254. The NodePort
        // range stays the default 30000-32767, as on TKE: it caps LoadBalancer Services there too.
        '--service-cluster-ip-range=10.0.0.0/16',
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${join(dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
        '--authorization-mode=RBAC',
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        '--disable-admission-plugins=ServiceAccount',
        '--allow-privileged=true',
        '--v=1',
        ...(options.extraApiserverArgs ?? []),
      ],
      log: apiLog,
      detached,
      adminToken,
    };
    const api = spawnLogged(state.apiserver.bin, state.apiserver.args, apiLog, detached);
    state.apiserverPid = api.pid ?? -1;
    persist();
    let apiExit: string | undefined;
    api.on('exit', (code, sig) => (apiExit = `kube-apiserver exited (${code ?? sig})`));
    const failure = () =>
      apiExit ? `${apiExit}\n${tail(apiLog)}` : etcdExit ? `${etcdExit}\n${tail(etcdLog)}` : undefined;

    await pollUntil('kube-apiserver /readyz', deadline, async () => (await httpsGet(`${server}/readyz`, adminToken)).status === 200, failure);
    // /readyz can pass a moment before the bootstrap controller has created the default namespace.
    await pollUntil(
      'the default namespace',
      deadline,
      async () => (await httpsGet(`${server}/api/v1/namespaces/default`, adminToken)).status === 200,
      failure,
    );
    state.version = JSON.parse((await httpsGet(`${server}/version`, adminToken)).body).gitVersion as string;

    // The apiserver wrote its self-signed serving cert (with its CA) here; clients verify against it.
    const caFile = join(pki, 'apiserver.crt');
    writeFileSync(state.kubeconfig, kubeconfigYaml(server, caFile, 'admin', adminToken), { mode: 0o600 });
    writeFileSync(state.userKubeconfig, kubeconfigYaml(server, caFile, TEST_USER, userToken), { mode: 0o600 });
    persist();
    return state;
  } catch (err) {
    // Read the logs before stopping: stopping removes the directory they live in.
    const msg = err instanceof Error ? err.message : String(err);
    const report = `control plane failed to start: ${msg}\n--- kube-apiserver log (tail) ---\n${tail(apiLog)}\n--- etcd log (tail) ---\n${tail(etcdLog)}`;
    await stopControlPlane(state);
    throw new Error(report, { cause: err });
  }
}

/**
 * Stops kube-apiserver (SIGKILL: as abrupt as a crash, so every watch breaks) and starts it again on the same
 * port and etcd, then waits until it is ready. Clients keep their kubeconfig.
 */
export async function restartApiserver(state: ControlPlaneState, downtimeMs = 0): Promise<void> {
  signal(state.apiserverPid, 'SIGKILL', state.apiserver.detached);
  while (alive(state.apiserverPid)) await new Promise((r) => setTimeout(r, 50));
  if (downtimeMs > 0) await new Promise((r) => setTimeout(r, downtimeMs));
  const api = spawnLogged(state.apiserver.bin, state.apiserver.args, state.apiserver.log, state.apiserver.detached);
  state.apiserverPid = api.pid ?? -1;
  writeFileSync(join(state.dir, STATE_FILE), JSON.stringify(state, null, 2));
  let exited: string | undefined;
  api.on('exit', (code, sig) => (exited = `kube-apiserver exited (${code ?? sig})`));
  await pollUntil(
    'kube-apiserver /readyz after restart',
    Date.now() + 60_000,
    async () => (await httpsGet(`${state.server}/readyz`, state.apiserver.adminToken)).status === 200,
    () => (exited ? `${exited}\n${tail(state.apiserver.log)}` : undefined),
  );
}
