// The image, built and run for real (issue 11 #1). `npm run image` (scripts/image/build.sh: podman, local bases
// when no registry can be reached) builds it; this suite then
//   - lists its files: Node, the operator's bundle and the licenses of what it bundles; no node_modules, no shell,
//     no test, no source map; and prints its size;
//   - runs it as a user would in a pod: --network host, --read-only root filesystem, --user 65532, no shell,
//     against the local TKE, under config/rbac's ServiceAccount (a TokenRequest token in a kubeconfig), and sees an
//     Enforce policy mitigate an at-risk LoadBalancer Service, then stop cleanly on SIGTERM;
//   - runs its read-only CLI (`IMAGE doctor …`, docs/install.md "The image") with a flattened kubeconfig.
// Gate: podman must be installable (apt-get as root) and usable. If it is not, the suite is skipped with the
// reason printed, unless LOOPGUARD_REQUIRE_IMAGE_TEST=true (set by .ci/run), which makes that a failure.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { REPO_ROOT } from '../controlplane/crds.js';
import { createNamespace, kubeConfig, kubeconfigPath, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE, listeningPort } from '../support/operator.js';
import { OPERATOR_BUNDLE } from '../../scripts/build-operator.js';
import { BUNDLE_NODE_OPTIONS } from '../../scripts/lib/bundle.js';
import { applyPolicy, getPolicy, policyManifest, reportedStatus } from '../support/policy.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';
import { holdForSuite } from '../support/exclusive.js';

// `npm run image`/`build:krew`/`release` write the checkout's dist/ and image tag: one such suite at a time.
holdForSuite('builds');

const BUILD = join(REPO_ROOT, 'scripts/image/build.sh');
const PODMAN = join(REPO_ROOT, 'scripts/image/podman.sh');
const REQUIRED = process.env['LOOPGUARD_REQUIRE_IMAGE_TEST'] === 'true';
/** Above what the image holds (Node ≈ 110 MB, the operator's bundle ≈ 6 MB); node_modules would add 50 MB, dev dependencies 300 MB. */
const SIZE_BUDGET_MB = 150;
const LB_ID = 'service.kubernetes.io/loadbalance-id';
// Every container this run makes carries the run's label, so .ci/run counts only its own leftovers: podman's store
// is shared by every run on the machine, and a run killed before afterAll leaves its containers there.
const RUN_LABEL = ['--label', `io.loopguard.test-run=${process.env['LOOPGUARD_TEST_RUN'] ?? `local-${process.pid}`}`];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

const podman = (args: string[], options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }) => run(PODMAN, args, options);

/** The gate, decided before any test is declared: podman installed (build.sh --check installs it as root) and usable. */
function podmanUnavailable(): string | undefined {
  const check = spawnSync('bash', [BUILD, '--check'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 15 * 60_000 });
  if (check.status === 0) return undefined;
  const reason = `${check.stderr ?? ''}`.trim().split('\n').pop() || `build.sh --check exited ${check.status ?? check.signal}`;
  if (check.status !== 3) throw new Error(`image test: scripts/image/build.sh --check failed (exit ${check.status ?? check.signal}): ${reason}`);
  if (REQUIRED) throw new Error(`image test: LOOPGUARD_REQUIRE_IMAGE_TEST=true, but ${reason}`);
  return reason;
}

const unavailable = podmanUnavailable();
if (unavailable) console.warn(`[loopguard] SKIPPING test/integration/image.test.ts: ${unavailable}`);
const suite = unavailable ? describe.skip : describe;

suite(`the loopguard image${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let image = '';
  let commit = '';
  let version = '';
  let tke: LocalTke | undefined;
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
  const containers: string[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    const t0 = Date.now();
    const built = await run('bash', [BUILD], { timeoutMs: 30 * 60_000 });
    if (built.code !== 0) throw new Error(`npm run image failed (exit ${built.code}):\n${built.stderr.slice(-6000)}`);
    const out = Object.fromEntries([...built.stdout.matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
    image = out['IMAGE'] ?? '';
    commit = out['COMMIT'] ?? '';
    version = out['VERSION'] ?? '';
    const sizeMb = Number(out['SIZE_BYTES']) / 1e6;
    console.log(`[loopguard] image ${image} (commit ${commit}): ${sizeMb.toFixed(1)} MB; npm run image took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    tke = await startLocalTke({ operator: false });
  }, 35 * 60_000);

  afterAll(async () => {
    for (const name of containers) await podman(['rm', '--force', '--time', '0', name]);
    await tke?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('is tagged with the package version and the checkout commit, and prints them with --version', async () => {
    expect(version).toBe(pkg.version);
    const head = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout.trim();
    expect(commit).toMatch(new RegExp(`^${head}(-dirty)?$`));
    const res = await podman(['run', '--rm', ...RUN_LABEL, '--network', 'none', '--read-only', '--user', '65532:65532', image, '--version']);
    expect(res).toMatchObject({ code: 0, stdout: `loopguard ${pkg.version} (commit ${commit})\n` });
    const labels = await podman(['image', 'inspect', '--format', '{{json .Config}}', image]);
    const config = JSON.parse(labels.stdout) as { User: string; Entrypoint: string[]; Labels: Record<string, string> };
    expect(config.User).toBe('65532:65532');
    expect(config.Entrypoint).toEqual(['/nodejs/bin/node', ...BUNDLE_NODE_OPTIONS, OPERATOR_BUNDLE]);
    expect(config.Labels).toMatchObject({ 'org.opencontainers.image.version': pkg.version, 'org.opencontainers.image.revision': commit });
  });

  it('holds Node and the operator\'s bundle only: no node_modules, no shell, no test, no source map', async () => {
    const name = `lg-image-files-${randomBytes(4).toString('hex')}`;
    containers.push(name);
    expect((await podman(['create', '--name', name, ...RUN_LABEL, image])).code).toBe(0);
    const listing = await run('bash', ['-c', `set -o pipefail; "${PODMAN}" export "${name}" | tar -t`], { timeoutMs: 300_000 });
    expect(listing.code).toBe(0);
    const files = listing.stdout.split('\n').filter(Boolean).map((f) => f.replace(/^\.?\//, ''));
    const size = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', image])).stdout.trim()) / 1e6;
    console.log(`[loopguard] image ${image}: ${size.toFixed(1)} MB, ${files.length} files`);
    expect(size).toBeLessThan(SIZE_BUDGET_MB);

    expect(files).toEqual(expect.arrayContaining(['nodejs/bin/node', `app/${OPERATOR_BUNDLE}`, 'app/LICENSE', 'app/THIRD_PARTY_LICENSES', 'etc/ssl/certs/ca-certificates.crt']));
    // No shell (nor a package manager) anywhere: nothing to exec into.
    expect(files.filter((f) => /(^|\/)(sh|bash|dash|ash|busybox|apt|apt-get|dpkg)$/.test(f))).toEqual([]);
    const shell = await podman(['run', '--rm', ...RUN_LABEL, '--network', 'none', '--entrypoint', '/bin/sh', image, '-c', 'true']);
    expect(shell.code).not.toBe(0);

    // The bundle and its licenses, nothing else of ours: no node_modules, sources, tests or source maps.
    expect(files.filter((f) => f.startsWith('app/') && !f.endsWith('/')).sort()).toEqual([`app/${OPERATOR_BUNDLE}`, 'app/LICENSE', 'app/THIRD_PARTY_LICENSES'].sort());
    expect(files.filter((f) => /\.map$/.test(f))).toEqual([]);
    // Every production dependency the operator reaches is in the bundle, so its license is beside it.
    const licenses = (await run('bash', ['-c', `set -o pipefail; "${PODMAN}" export "${name}" | tar -xO app/THIRD_PARTY_LICENSES`])).stdout;
    for (const dep of Object.keys(pkg.dependencies)) expect({ dep, listed: licenses.includes(`\n== ${dep}@`) }).toEqual({ dep, listed: true });
  }, 600_000);

  it('runs read-only as 65532 under config/rbac\'s ServiceAccount and mitigates an at-risk Service in Enforce', async () => {
    if (!tke) throw new Error('local TKE not started');
    const { emulator, namespaces } = tke;
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const ns = await createNamespace('image');
    namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('orders', AT_RISK_L4) });
    const lbId = await waitFor('CLB assigned', async () => {
      const id = (await core.readNamespacedService({ namespace: ns, name: 'orders' })).metadata?.annotations?.[LB_ID];
      return id && (await emulator.admin.getLoadBalancer(id)).Listeners.length === 2 ? id : undefined;
    });

    // The ServiceAccount's token (TokenRequest API, made by startLocalTke after applying config/rbac) in a
    // self-contained kubeconfig that only the container's user can read.
    const sa = kubeConfig(tke.operatorKubeconfig);
    const cluster = sa.getCurrentCluster();
    const token = sa.getCurrentUser()?.token;
    if (!cluster?.caFile || !token) throw new Error('ServiceAccount kubeconfig without CA file or token');
    const dir = mkdtempSync(join(tmpdir(), 'loopguard-image-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: cluster.server, 'certificate-authority-data': readFileSync(cluster.caFile).toString('base64') } }],
        users: [{ name: 'loopguard', user: { token } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'loopguard' } }],
        'current-context': 'c',
      }),
      { mode: 0o600 },
    );
    if (process.getuid?.() === 0) {
      chownSync(dir, 65532, 65532);
      chownSync(kubeconfig, 65532, 65532);
    } else {
      expect((await podman(['unshare', 'chown', '-R', '65532:65532', dir])).code).toBe(0);
    }
    chmodSync(dir, 0o700);

    const name = `lg-image-run-${randomBytes(4).toString('hex')}`;
    containers.push(name);
    const { secretId, secretKey } = emulator.credentials;
    const args = [
      'run', '--rm', '--name', name, ...RUN_LABEL,
      '--network', 'host', '--read-only', '--user', '65532:65532',
      '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
      '--volume', `${dir}:/var/run/loopguard:ro`,
      // Passed by name: the values come from podman's environment and never appear on a command line.
      '--env', 'TENCENTCLOUD_SECRET_ID', '--env', 'TENCENTCLOUD_SECRET_KEY',
      image,
      '--kubeconfig=/var/run/loopguard/kubeconfig',
      // Port 0 and the port read from the log: a port found free beforehand can be taken before the container binds it.
      '--probe-host=127.0.0.1', '--probe-port=0',
      `--clb-endpoint=${emulator.endpoint}`, '--clb-protocol=http://', `--region=${emulator.region}`,
      `--identity=${name}`, '--leader-elect=true', `--leader-election-namespace=${OPERATOR_NAMESPACE}`,
    ];
    const child = spawn(PODMAN, args, {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', TENCENTCLOUD_SECRET_ID: secretId, TENCENTCLOUD_SECRET_KEY: secretKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
    child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    const context = () => `--- container logs (tail) ---\n${logs.slice(-4000)}`;
    let port: number | undefined;
    try {
      await waitFor(
        'the container ready (/readyz 200)',
        async () => {
          if (done) throw new Error('container exited');
          port ??= listeningPort(logs, 'Probe server');
          if (port === undefined) return undefined;
          const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
          return res?.status === 200 ? true : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 250, context },
      );
      const starting = logs
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l['message'] === 'Starting loopguard');
      expect(starting).toMatchObject({ version: pkg.version, commit });

      const policy = { namespace: ns, name: 'enforce' };
      expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce', revertOnDelete: true }))).stderr).toBe('');
      await waitFor(
        'orders Mitigated, its listeners probed from 100.64.0.0/10',
        async () => {
          const row = reportedStatus(await getPolicy(policy)).targets.find((t) => t.name === 'orders');
          const listeners = (await emulator.admin.getLoadBalancer(lbId)).Listeners;
          return row?.verdict === 'Mitigated' && listeners.every((l) => l.HealthCheck?.SourceIpType === 1) ? row : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, context },
      );

      // SIGTERM to `podman run` reaches the operator (PID 1 in the container), which drains and exits 0.
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(logs).toContain('"message":"Stopped"');
      for (const secret of [secretKey, token]) expect(logs.includes(secret)).toBe(false);
    } finally {
      if (!done) child.kill('SIGKILL');
    }
  }, 300_000);

  it('runs the read-only CLI too: `IMAGE doctor -n NS -o json` as docs/install.md shows it, read-only as 65532', async () => {
    if (!tke) throw new Error('local TKE not started');
    const { emulator, namespaces } = tke;
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const ns = await createNamespace('image-doctor');
    namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('orders', AT_RISK_L4) });
    await waitFor('CLB assigned', async () => {
      const id = (await core.readNamespacedService({ namespace: ns, name: 'orders' })).metadata?.annotations?.[LB_ID];
      return id && (await emulator.admin.getLoadBalancer(id)).Listeners.length === 2 ? id : undefined;
    });
    // docs/install.md "The image": the kubeconfig flattened by kubectl (certificates inline), readable by the container's user.
    const dir = mkdtempSync(join(tmpdir(), 'loopguard-image-'));
    dirs.push(dir);
    const flat = await run('kubectl', ['config', 'view', '--flatten', '--minify', '--kubeconfig', kubeconfigPath()]);
    expect(flat.code).toBe(0);
    writeFileSync(join(dir, 'kubeconfig'), flat.stdout, { mode: 0o600 });
    if (process.getuid?.() === 0) {
      chownSync(dir, 65532, 65532);
      chownSync(join(dir, 'kubeconfig'), 65532, 65532);
    } else {
      expect((await podman(['unshare', 'chown', '-R', '65532:65532', dir])).code).toBe(0);
    }
    const { secretId, secretKey } = emulator.credentials;
    const res = await podman(
      [
        'run', '--rm', ...RUN_LABEL, '--network', 'host', '--read-only', '--user', '65532:65532', '--cap-drop', 'ALL',
        '--volume', `${dir}:/var/run/loopguard:ro`, '--env', 'KUBECONFIG=/var/run/loopguard/kubeconfig',
        '--env', 'TENCENTCLOUD_REGION', '--env', 'TENCENTCLOUD_SECRET_ID', '--env', 'TENCENTCLOUD_SECRET_KEY',
        '--env', 'LOOPGUARD_CLB_ENDPOINT', '--env', 'LOOPGUARD_CLB_PROTOCOL',
        image, 'doctor', '-n', ns, '-o', 'json',
      ],
      {
        env: {
          PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '',
          TENCENTCLOUD_REGION: emulator.region, TENCENTCLOUD_SECRET_ID: secretId, TENCENTCLOUD_SECRET_KEY: secretKey,
          LOOPGUARD_CLB_ENDPOINT: emulator.endpoint, LOOPGUARD_CLB_PROTOCOL: 'http',
        },
      },
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(1); // a target at risk
    const report = JSON.parse(res.stdout) as { kind: string; targets: { name: string; verdict: string; rootCause: string; plan: string[] }[] };
    expect(report.targets).toEqual([expect.objectContaining({ name: 'orders', verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded', plan: expect.arrayContaining([expect.stringContaining('prevent-loopback')]) })]);
  }, 300_000);
});
