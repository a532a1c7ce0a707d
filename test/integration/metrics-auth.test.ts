// /metrics behind authentication and authorization (issue 22 #6), checked against the test apiserver's own
// TokenReview and SubjectAccessReview (ServiceAccount tokens from `kubectl create token`, RBAC on): the real operator
// process runs with the flags and under the RBAC of config/default and, when helm is there, of the chart's default
// install. Without a token: 401; a ServiceAccount that is not bound to the metrics-reader ClusterRole: 403; the
// scraper's ServiceAccount bound to it: 200 with the metrics. The probe port no longer serves them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { startClbEmulator, type ClbEmulator } from '../../sim/clb-emulator/index.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { CHART_DIR, helmBinary, runHelm } from '../support/helm.js';
import { createNamespace, deleteNamespace, kubeconfigPath, kubectl } from '../support/kube.js';
import { operatorAccountKubeconfig, serviceAccountKubeconfig, startOperatorProcess, type OperatorProcess } from '../support/operator.js';

interface Answer {
  status: number;
  body: string;
}

/** GET over TLS without verifying the self-signed certificate, as the ServiceMonitor's insecureSkipVerify does. */
function scrape(port: number, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 20_000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await kubectl(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A ServiceAccount in `ns` and a token for it; bound to `readerRole` when given. */
async function account(ns: string, name: string, readerRole?: string): Promise<string> {
  await ok(['create', 'serviceaccount', name, '-n', ns]);
  if (readerRole) await ok(['create', 'clusterrolebinding', `${ns}-${name}`, `--clusterrole=${readerRole}`, `--serviceaccount=${ns}:${name}`]);
  return ok(['create', 'token', name, '-n', ns, '--duration=1h']);
}

/** The manager container's args, minus the ports (the test gives free ones on 127.0.0.1). */
function withoutPorts(args: readonly string[]): string[] {
  return args.filter((a) => !/^--(probe-port|metrics-port)=/.test(a));
}

async function expectGuarded(op: OperatorProcess, tokens: { scraper: string; tenant: string }): Promise<void> {
  const metricsPort = op.metricsPort;
  if (metricsPort === undefined) throw new Error(`the operator logged no "Metrics server listening" line:\n${op.logs()}`);
  expect(await scrape(metricsPort)).toEqual({ status: 401, body: expect.stringMatching(/^Unauthorized/) });
  expect(await scrape(metricsPort, 'not-a-token')).toMatchObject({ status: 401 });
  const denied = await scrape(metricsPort, tokens.tenant);
  expect(denied).toMatchObject({ status: 403, body: expect.stringMatching(/^Forbidden: user system:serviceaccount:\S+:tenant(-2)? may not get \/metrics/) });
  const allowed = await scrape(metricsPort, tokens.scraper);
  expect(allowed.status).toBe(200);
  expect(allowed.body).toContain('# TYPE loopguard_cloud_requests_total counter');
  // The same scraper again: answered from the cache (the log shows no second review; here: still 200).
  expect((await scrape(metricsPort, tokens.scraper)).status).toBe(200);
  // Plain HTTP on the metrics port is refused; the probe port serves the probes, not the metrics.
  await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  const probe = await fetch(`http://127.0.0.1:${op.port}/metrics`);
  expect(probe.status).toBe(404);
  expect(await probe.text()).toMatch(/served over HTTPS on --metrics-port/);
  expect((await fetch(`http://127.0.0.1:${op.port}/readyz`)).status).toBe(200);
  expect(op.logs()).not.toContain(tokens.scraper);
  expect(op.logs()).not.toContain(tokens.tenant);
}

describe('authenticated /metrics', () => {
  let emulator: ClbEmulator;
  let ns = '';
  const running: OperatorProcess[] = [];
  const bindings: string[] = [];

  beforeAll(async () => {
    emulator = await startClbEmulator({ taskDurationMs: 50 });
    ns = await createNamespace('metrics-auth');
  });

  afterAll(async () => {
    for (const op of running) await op.stop();
    for (const b of bindings) await kubectl(['delete', 'clusterrolebinding', b, '--ignore-not-found']);
    if (ns) await deleteNamespace(ns);
    await emulator?.close();
  });

  it('config/default: 401 without a token, 403 for a ServiceAccount without loopguard-metrics-reader, 200 for the scraper', async () => {
    const manifests = parseAllDocuments(readFileSync(join(REPO_ROOT, 'config/manager/deployment.yaml'), 'utf8')).map(
      (d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Array<{ name: string; args: string[] }> } } } },
    );
    const args = manifests.find((m) => m.kind === 'Deployment')?.spec?.template.spec.containers.find((c) => c.name === 'manager')?.args ?? [];
    expect(args).toContain('--metrics-secure=true');
    const tokens = { scraper: await account(ns, 'scraper', 'loopguard-metrics-reader'), tenant: await account(ns, 'tenant') };
    bindings.push(`${ns}-scraper`);
    const op = await startOperatorProcess({ kubeconfig: await operatorAccountKubeconfig(), emulator, extraArgs: [...withoutPorts(args), '--metrics-port=0'] });
    running.push(op);
    await expectGuarded(op, tokens);
    await op.stop();
  }, 180_000);

  const gate = helmBinary('test/integration/metrics-auth.test.ts');
  (gate.skip ? it.skip : it)(`the chart's default install: the same, under the chart's ServiceAccount and RBAC${gate.skip ? ` (skipped: ${gate.skip})` : ''}`, async () => {
    const release = 'lgm';
    const helm = (a: string[]) => runHelm(gate.helm ?? 'helm', [...a, '--kubeconfig', kubeconfigPath()]);
    const installed = helm(['install', release, CHART_DIR, '-n', ns, '--set', 'region=ap-guangzhou']);
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' });
    try {
      const args = JSON.parse(await ok(['-n', ns, 'get', 'deploy', `${release}-loopguard`, '-o', 'jsonpath={.spec.template.spec.containers[0].args}'])) as string[];
      expect(args).toEqual(expect.arrayContaining(['--metrics-secure=true', '--metrics-port=8443']));
      const tokens = { scraper: await account(ns, 'chart-scraper', `${release}-loopguard-metrics-reader`), tenant: await account(ns, 'tenant-2') };
      bindings.push(`${ns}-chart-scraper`);
      const operatorKubeconfig = await serviceAccountKubeconfig(undefined, { name: `${release}-loopguard`, namespace: ns });
      const op = await startOperatorProcess({
        kubeconfig: operatorKubeconfig,
        emulator,
        // The chart's Lease lives in the release namespace, where its leader-election Role is.
        namespace: ns,
        extraArgs: [...withoutPorts(args), '--metrics-port=0'],
      });
      running.push(op);
      await expectGuarded(op, tokens);
      await op.stop();
    } finally {
      helm(['uninstall', release, '-n', ns]);
    }
  }, 240_000);
});
