// `loopguard doctor --all-contexts` / `--context a --context b`: one kubeconfig with two test control planes (the
// shared one and one of this suite's own), each with its TKE simulator on one emulator account, plus a context
// whose server is down and one with no credentials. The doctor, as its own process, must print both clusters and
// the roll-up, report each failed context in its row without hiding the others, and exit 1 (a target at risk).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { FleetReport } from '../../src/cli/fleet-report.js';
import { startClbEmulator, type ClbEmulator } from '../../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator, type TkeSimulator } from '../../sim/tke-simulator/index.js';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds, REPO_ROOT } from '../controlplane/crds.js';
import { freePort, startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { kubeConfig, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { localTkeCallers } from '../support/local-tke.js';
import { entrypointArgs } from '../support/operator.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const NS = `fleet-${randomBytes(3).toString('hex')}`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('loopguard doctor over several clusters', () => {
  let cp: ControlPlaneState;
  let emulator: ClbEmulator;
  const simulators: TkeSimulator[] = [];
  let fleetKubeconfig: string;

  function doctor(args: string[]): Promise<Run> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: mkdtempSync(join(tmpdir(), 'loopguard-home-')),
      KUBECONFIG: fleetKubeconfig,
      TENCENTCLOUD_REGION: emulator.region,
      TENCENTCLOUD_SECRET_ID: emulator.callers['doctor']?.secretId ?? '',
      TENCENTCLOUD_SECRET_KEY: emulator.callers['doctor']?.secretKey ?? '',
      LOOPGUARD_CLB_ENDPOINT: emulator.endpoint,
      LOOPGUARD_CLB_PROTOCOL: 'http',
    };
    return new Promise((resolve) => {
      execFile(process.execPath, entrypointArgs(['doctor', ...args]), { cwd: REPO_ROOT, env, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  }

  /** One at-risk Service in NS (and a calm one in `calm`), built by that cluster's TKE simulator. */
  async function workload(kc: KubeConfig, kubeconfig: string, calm: boolean): Promise<void> {
    await applyClusterProfile(kc, 'ipvs-new');
    simulators.push(
      await startTkeSimulator({
        kubeConfig: kc,
        clusterId: `cls-${randomBytes(4).toString('hex')}`,
        clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: emulator.callers['tke'] ?? emulator.credentials, protocol: 'http://' },
        namespaceFilter: (n) => n === NS,
        resyncIntervalMs: 0,
      }),
    );
    expect((await kubectl(['create', 'namespace', NS], { kubeconfig })).code).toBe(0);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({ namespace: NS, body: lbService('web', AT_RISK_L4) });
    if (calm) await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'internal' }, spec: { ports: [{ port: 80 }] } } });
    await waitFor(
      'the CLB of web with both listeners',
      async () => {
        const id = (await core.readNamespacedService({ namespace: NS, name: 'web' })).metadata?.annotations?.[LB_ID];
        return id && (await emulator.admin.getLoadBalancer(id)).Listeners.length >= 2 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
  }

  beforeAll(async () => {
    emulator = await startClbEmulator({ taskDurationMs: 50, callers: localTkeCallers(['doctor']) });
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    await workload(kubeConfig(), kubeconfigPath(), false);
    await workload(kubeConfig(cp.kubeconfig), cp.kubeconfig, true);

    // One kubeconfig: the shared test cluster (east), this suite's (west), one whose server is down, one without credentials.
    const ref = (kc: KubeConfig) => {
      const cluster = kc.getCurrentCluster();
      const user = kc.getCurrentUser();
      if (!cluster?.caFile || !user?.token) throw new Error('expected the test ground kubeconfig: CA file and token');
      return { server: cluster.server, ca: cluster.caFile, token: user.token };
    };
    const east = ref(kubeConfig());
    const west = ref(kubeConfig(cp.kubeconfig));
    const down = `https://127.0.0.1:${await freePort()}`;
    const lines = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      ...[['east', east.server, east.ca], ['west', west.server, west.ca], ['down', down, west.ca]].flatMap(([name, server, ca]) => [`- name: ${name}`, '  cluster:', `    server: ${server}`, `    certificate-authority: ${ca}`]),
      'users:',
      `- name: east-admin`,
      `  user: {token: ${east.token}}`,
      `- name: west-admin`,
      `  user: {token: ${west.token}}`,
      '- name: nobody',
      '  user: {}',
      'contexts:',
      '- name: east',
      `  context: {cluster: east, user: east-admin, namespace: ${NS}}`,
      '- name: west',
      `  context: {cluster: west, user: west-admin, namespace: ${NS}}`,
      '- name: down',
      `  context: {cluster: down, user: west-admin, namespace: ${NS}}`,
      '- name: nocreds',
      `  context: {cluster: west, user: nobody, namespace: ${NS}}`,
      'current-context: east',
      '',
    ];
    fleetKubeconfig = join(mkdtempSync(join(tmpdir(), 'loopguard-fleet-')), 'kubeconfig');
    writeFileSync(fleetKubeconfig, lines.join('\n'), { mode: 0o600 });
  }, 180_000);

  afterAll(async () => {
    for (const s of simulators) await s.stop();
    await emulator?.close();
    if (cp) await stopControlPlane(cp);
  });

  it('--all-contexts prints both clusters and the roll-up; a failed context is its row and hides nothing', async () => {
    const run = await doctor(['--all-contexts']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const out = run.stdout;
    expect(out).toMatch(/^CLUSTER\s+STATUS\s+TARGETS\s+AT RISK\s+MITIGATED\s+UNCOVERED\s+PROFILE \/ ERROR\n/);
    expect(out).toMatch(/\neast\s+Scanned\s+1\s+1\s+0\s+1\s+kube-proxy ipvs/);
    expect(out).toMatch(/\nwest\s+Scanned\s+2\s+1\s+0\s+1\s+kube-proxy ipvs/);
    expect(out).toMatch(/\ndown\s+Failed\s+-\s+-\s+-\s+-\s+\S.*127\.0\.0\.1/);
    expect(out).toMatch(/\nnocreds\s+Failed\s+-\s+-\s+-\s+-\s+\S/);
    expect(out).toMatch(/\n\(fleet\)\s+3\s+2\s+0\s+2/);
    expect(out).toMatch(new RegExp(`\\neast\\s+${NS}\\s+Service\\s+web\\s+lb-\\w+\\s+AtRisk\\s+PodSourceNotMasqueraded`));
    expect(out).toMatch(new RegExp(`\\nwest\\s+${NS}\\s+Service\\s+web\\s+lb-\\w+\\s+AtRisk\\s+PodSourceNotMasqueraded`));
    expect(out.trimEnd().split('\n').pop()).toBe('fleet: 4 clusters, 2 could not be scanned; 3 targets: 2 at risk, 1 not applicable; at risk in 2 of 2');
  }, 120_000);

  it('--context picks clusters; -o json names the cluster of every target; no risk and a failed context exit 2', async () => {
    const run = await doctor(['--context', 'west', '--context', 'east', '-o', 'json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as FleetReport;
    expect(report.clusters.map((c) => [c.cluster, c.status])).toEqual([['west', 'Scanned'], ['east', 'Scanned']]);
    for (const c of report.clusters) {
      expect(c.report?.targets.length).toBeGreaterThan(0);
      for (const t of c.report?.targets ?? []) expect(t.cluster).toBe(c.cluster);
    }
    // Only the calm Service of west (a label selector) and a context that cannot be reached: nothing at risk seen, one not scanned.
    const partial = await doctor(['--context', 'west', '--context', 'down', '-l', 'app!=web']);
    expect(partial.code).toBe(2);
    expect(partial.stdout).toMatch(/\nwest\s+Scanned\s+1\s+0\s+0\s+0/);
    expect(partial.stdout).toMatch(/\ndown\s+Failed/);
  }, 120_000);
});
