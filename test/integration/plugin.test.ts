// `kubectl loopguard`, the single binary (npm run build:plugin) and the krew plugin (npm run build:krew), as a user
// without Node or a checkout runs them. One `npm run build:krew` builds both. On the local TKE:
//   - with only that binary and kubectl on PATH (no node, npm or tsx), in an empty directory: `--help`,
//     `--version`, `plan` and `doctor -n NS -o json` work, and the doctor's verdicts, plans and cluster profile are
//     those of `npm run loopguard -- doctor` from the checkout;
//   - krew's own validator accepts the built manifest, structurally and by installing it from its uri (the archive
//     served on 127.0.0.1, as a release would serve it); the real krew CLI installs it from the local manifest and
//     archive into a temporary KREW_ROOT, and `kubectl loopguard doctor` from there gives the same verdicts.
// Gate for krew: test/support/krew.ts (skipped without Go unless LOOPGUARD_REQUIRE_KREW_TEST=true).
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import type { Report } from '../../src/cli/report.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { krewTools, kubectlOnlyPath, run } from '../support/krew.js';
import { createNamespace, deleteNamespace, kubeConfig, kubeconfigPath, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { AT_RISK_L4, lbIngress, lbService, PRIVATE_INGRESS, PRIVATE_SUBNET } from '../support/workload.js';
import { holdForSuite } from '../support/exclusive.js';

// `npm run image`/`build:krew`/`release` write the checkout's dist/ and image tag: one such suite at a time.
holdForSuite('builds');

const BINARY = join(REPO_ROOT, 'dist', 'kubectl-loopguard');
const KREW_DIR = join(REPO_ROOT, 'dist', 'krew');
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const gate = krewTools('test/integration/plugin.test.ts (krew)');
const krewSuite = gate.skip ? describe.skip : describe;



/** What must agree between two doctor runs: the profile, the counts, and per target its CLB, verdict, cause and plan. */
function verdicts(stdout: string): unknown {
  const report = JSON.parse(stdout) as Report;
  return {
    clusterProfile: report.clusterProfile,
    counts: report.counts,
    atRisk: report.atRisk,
    targets: report.targets
      .map((t) => ({ target: `${t.namespace}/${t.kind}/${t.name}`, clb: t.loadBalancerId, verdict: t.verdict, rootCause: t.rootCause, message: t.message, plan: t.plan }))
      .sort((a, b) => a.target.localeCompare(b.target)),
  };
}


describe('kubectl loopguard: the single binary and the krew plugin on the local TKE', () => {
  let tke: LocalTke;
  let ns = '';
  let cloudEnv: Record<string, string>;
  /** `npm run loopguard -- doctor -n NS -o json` from the checkout: what every other run must match. */
  let reference: unknown;

  /** An environment as `env -i` gives it: nothing but PATH, HOME, the kubeconfig and the CLB settings. */
  const userEnv = (path: string): Record<string, string> => ({ PATH: path, HOME: mkdtempSync(join(tmpdir(), 'lg-plugin-home-')), KUBECONFIG: kubeconfigPath(), ...cloudEnv });

  beforeAll(async () => {
    // One command builds the binary, the archive and the manifest (scripts/krew/package.ts runs build:plugin).
    const built = await run('npm', ['run', 'build:krew'], { cwd: REPO_ROOT, env: { ...process.env } as Record<string, string>, timeoutMs: 600_000 });
    expect(built.stderr + built.stdout).toMatch(/start-up to --help: \d+ ms/);
    expect(built.code).toBe(0);

    tke = await startLocalTke({ operator: false, moreCallers: ['doctor'] });
    ns = await createNamespace('plugin');
    tke.namespaces.add(ns);
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const net = kc.makeApiClient(NetworkingV1Api);
    await core.createNamespacedService({ namespace: ns, body: lbService('private-local', AT_RISK_L4) });
    await core.createNamespacedService({ namespace: ns, body: lbService('private-cluster', { annotations: PRIVATE_SUBNET }) });
    await core.createNamespacedService({ namespace: ns, body: lbService('public', {}) });
    await net.createNamespacedIngress({
      namespace: ns,
      body: lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: 'web.example.com', paths: ['/'] }], backend: { name: 'private-cluster', port: 80 } }),
    });
    // Every CLB with all its listeners before anyone reads it (a target whose listeners are missing is Pending).
    await waitFor(
      'the CLBs and their listeners',
      async () => {
        const svcs = await core.listNamespacedService({ namespace: ns });
        const ing = await net.readNamespacedIngress({ namespace: ns, name: 'web' });
        const wanted: Array<[string | undefined, number]> = svcs.items.map((s) => [s.metadata?.annotations?.['service.kubernetes.io/loadbalance-id'], s.spec?.ports?.length ?? 0]);
        wanted.push([ing.metadata?.annotations?.['kubernetes.io/ingress.qcloud-loadbalance-id'], 1]);
        for (const [id, ports] of wanted) if (!id || (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length < ports) return undefined;
        return true;
      },
      { timeoutMs: 60_000 },
    );
    const doctor = tke.emulator.callers['doctor']!;
    cloudEnv = {
      TENCENTCLOUD_REGION: tke.emulator.region,
      TENCENTCLOUD_SECRET_ID: doctor.secretId,
      TENCENTCLOUD_SECRET_KEY: doctor.secretKey,
      LOOPGUARD_CLB_ENDPOINT: tke.emulator.endpoint,
      LOOPGUARD_CLB_PROTOCOL: 'http',
    };
    const fromCheckout = await run('npm', ['run', '--silent', 'loopguard', '--', 'doctor', '-n', ns, '-o', 'json'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: mkdtempSync(join(tmpdir(), 'lg-plugin-home-')), KUBECONFIG: kubeconfigPath(), ...cloudEnv },
    });
    expect(fromCheckout.stderr).toBe('');
    expect(fromCheckout.code).toBe(1); // a target at risk
    reference = verdicts(fromCheckout.stdout);
    expect(JSON.stringify(reference)).toContain('"verdict":"AtRisk"');
  }, 900_000);

  afterAll(async () => {
    if (ns) await deleteNamespace(ns);
    await tke?.stop();
  });

  describe('the binary alone, with only kubectl beside it', () => {
    let bin = '';
    let cwd = '';
    beforeAll(() => {
      bin = kubectlOnlyPath({ 'kubectl-loopguard': BINARY });
      cwd = mkdtempSync(join(tmpdir(), 'lg-plugin-cwd-'));
    });

    it('has nothing but kubectl and the plugin on PATH', async () => {
      expect(readdirSync(bin).sort()).toEqual(['kubectl', 'kubectl-loopguard']);
      // kubectl finds the plugin there; node, npm and tsx are nowhere on PATH.
      const list = await run('kubectl', ['plugin', 'list'], { cwd, env: userEnv(bin) });
      expect(list.stdout).toContain(join(bin, 'kubectl-loopguard'));
      expect(userEnv(bin).PATH).toBe(bin);
    });

    it('kubectl loopguard --help and --version work in a directory with no checkout', async () => {
      const help = await run('kubectl', ['loopguard', '--help'], { cwd, env: userEnv(bin) });
      expect(help.stderr).toBe('');
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/\bdoctor\b[\s\S]*\bplan\b/);
      const version = await run('kubectl', ['loopguard', '--version'], { cwd, env: userEnv(bin) });
      expect(version.stdout.trim()).toMatch(new RegExp(`^loopguard ${VERSION.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}(-dirty)?\\)$`));
    });

    it('kubectl loopguard plan diagnoses a manifest offline, as the checkout does', async () => {
      const manifest = join(cwd, 'svc.yaml');
      writeFileSync(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'Service', ...lbService('web', AT_RISK_L4) }));
      const flags = ['-f', manifest, '--kube-proxy-mode=ipvs', '--kube-proxy-version=v1.20.6-tke.12', '-o', 'json'];
      const plugin = await run('kubectl', ['loopguard', 'plan', ...flags], { cwd, env: userEnv(bin) });
      const checkout = await run('npm', ['run', '--silent', 'loopguard', '--', 'plan', ...flags], { cwd: REPO_ROOT, env: { ...process.env } as Record<string, string> });
      expect(plugin.stderr).toBe('');
      expect(plugin.code).toBe(1);
      expect(checkout.code).toBe(1);
      expect(verdicts(plugin.stdout)).toEqual(verdicts(checkout.stdout));
    });

    it('kubectl loopguard doctor -n NS -o json gives the verdicts of npm run loopguard -- doctor', async () => {
      const r = await run('kubectl', ['loopguard', 'doctor', '-n', ns, '-o', 'json'], { cwd, env: userEnv(bin) });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(1);
      expect(verdicts(r.stdout)).toEqual(reference);
    });
  });

  krewSuite(`installed with krew${gate.skip ? ` (skipped: ${gate.skip})` : ''}`, () => {
    const manifest = join(KREW_DIR, 'loopguard.yaml');
    const archive = () => join(KREW_DIR, readdirSync(KREW_DIR).find((f) => f.endsWith('.tar.gz'))!);

    it("passes krew's manifest validator (structure)", async () => {
      const r = await run(gate.validator!, ['-manifest', manifest, '-skip-install'], { cwd: KREW_DIR, env: { PATH: process.env['PATH'] ?? '' } });
      expect(r.stderr).toContain('structural validation OK');
      expect(r.code).toBe(0);
    });

    it("passes krew's manifest validator with its install exercise, from the uri a release would serve", async () => {
      // The same manifest with the uri on a 127.0.0.1 server holding the archive: the validator downloads it, checks
      // the sha256, installs it with `kubectl krew install` and looks for the LICENSE among the installed files.
      const server: Server = createServer((req, res) => {
        if (req.url !== '/kubectl-loopguard.tar.gz') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': statSync(archive()).size });
        createReadStream(archive()).pipe(res);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const dir = mkdtempSync(join(tmpdir(), 'lg-plugin-manifest-'));
        const doc = parseDocument(readFileSync(manifest, 'utf8'));
        doc.setIn(['spec', 'platforms', 0, 'uri'], `http://127.0.0.1:${(server.address() as AddressInfo).port}/kubectl-loopguard.tar.gz`);
        writeFileSync(join(dir, 'loopguard.yaml'), doc.toString());
        const bin = kubectlOnlyPath({ 'kubectl-krew': gate.krew! });
        const r = await run(gate.validator!, ['-manifest', join(dir, 'loopguard.yaml')], { cwd: dir, env: { PATH: bin } });
        expect(r.stderr).toContain('all 1 spec.platforms installed fine');
        expect(r.code).toBe(0);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('kubectl krew install --manifest --archive into a fresh KREW_ROOT; kubectl loopguard doctor runs from there', async () => {
      const root = mkdtempSync(join(tmpdir(), 'lg-krew-root-'));
      const bin = kubectlOnlyPath({ 'kubectl-krew': gate.krew! });
      const cwd = mkdtempSync(join(tmpdir(), 'lg-plugin-cwd-'));
      const installed = await run('kubectl', ['krew', 'install', `--manifest=${manifest}`, `--archive=${archive()}`], { cwd, env: { ...userEnv(bin), KREW_ROOT: root } });
      expect(installed.stderr).toContain('Installed plugin: loopguard');
      expect(installed.code).toBe(0);
      const store = join(root, 'store', 'loopguard', `v${VERSION}`);
      expect(readdirSync(store).sort()).toEqual(['LICENSE', 'THIRD_PARTY_LICENSES', 'kubectl-loopguard']);

      // As krew tells its users: its bin directory on PATH, in front of kubectl's.
      const env = { ...userEnv(`${join(root, 'bin')}:${bin}`), KREW_ROOT: root };
      const r = await run('kubectl', ['loopguard', 'doctor', '-n', ns, '-o', 'json'], { cwd, env });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(1);
      expect(verdicts(r.stdout)).toEqual(reference);
      // And the archive's binary is the one npm run build:plugin made.
      expect(readFileSync(join(store, 'kubectl-loopguard')).equals(readFileSync(BINARY))).toBe(true);
    });
  });
});
