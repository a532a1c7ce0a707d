// bench/doctor-scan: a `loopguard doctor` scan of N private LoadBalancer Services (2 listeners each) on the local TKE,
// with the emulator enforcing the account quota q per action and the doctor at --cloud-rate-limit r (default 10, the
// operator's). Prints the scan's wall time, its CLB calls per action and their rate, the bound the budget allows
// (T_min = busiest action's calls / r), RequestLimitExceeded answers (0: it stayed within the quota), and the verdicts.
// Figures only; no timed assertion. The doctor runs as its own process, as a user runs it, with its own credentials.
//
//   npm run bench:doctor -- --n 500            (defaults: --n 20 --q 20 --rate-limit 10)
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Report } from '../src/cli/report.js';
import { startClbEmulator } from '../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator } from '../sim/tke-simulator/index.js';
import { REPO_ROOT } from '../test/controlplane/crds.js';
import { benchCluster, createAtRiskServices, quiet } from './support.js';
import { createNamespace, kubeConfig } from '../test/support/kube.js';
import { localTkeCallers } from '../test/support/local-tke.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '20' }, q: { type: 'string', default: '20' }, 'rate-limit': { type: 'string', default: '10' } } });
const N = Number(values.n);
const Q = Number(values.q);
const RATE = Number(values['rate-limit']);
const log = (s: string) => console.log(`[bench:doctor] ${s}`);

async function main(): Promise<void> {
  const cluster = await benchCluster();
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const doctor = { caller: 'doctor', secretId: `AKIDdoctor${randomBytes(8).toString('hex')}`, secretKey: randomBytes(24).toString('hex') };
  // Setup runs unthrottled; the quota q applies to the scan.
  const emulator = await startClbEmulator({ taskDurationMs: 50, rps: 0, callers: [...localTkeCallers(), doctor] });
  const namespaces = new Set<string>();
  await applyClusterProfile(kc, 'ipvs-new');
  const simulator = await startTkeSimulator({
    kubeConfig: kc,
    clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: emulator.callers['tke'] ?? emulator.credentials, protocol: 'http://' },
    namespaceFilter: (n) => namespaces.has(n),
    resyncIntervalMs: 0,
    concurrency: 32,
  });
  try {
    const ns = await createNamespace('bench-doctor');
    namespaces.add(ns);
    log(`N=${N} services × 2 listeners, emulator quota q=${Q}/s per action, doctor --cloud-rate-limit=${RATE}`);
    const t0 = Date.now();
    await createAtRiskServices(core, emulator, ns, N, log);
    await quiet(emulator);
    log(`TKE built ${N} CLBs in ${((Date.now() - t0) / 1000).toFixed(1)} s (setup, not measured)`);
    await emulator.admin.setConfig({ rps: Q });
    await emulator.admin.markStats('scan');

    const tScan = Date.now();
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(REPO_ROOT, 'bin/loopguard.js'), 'doctor', '-n', ns, '-o', 'json', `--cloud-rate-limit=${RATE}`],
        {
          cwd: REPO_ROOT,
          maxBuffer: 256 << 20,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: process.env.HOME ?? '',
            KUBECONFIG: process.env.KUBECONFIG,
            TENCENTCLOUD_REGION: emulator.region,
            TENCENTCLOUD_SECRET_ID: doctor.secretId,
            TENCENTCLOUD_SECRET_KEY: doctor.secretKey,
            LOOPGUARD_CLB_ENDPOINT: emulator.endpoint,
            LOOPGUARD_CLB_PROTOCOL: 'http',
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
    const wall = (Date.now() - tScan) / 1000;
    if (run.code !== 0 && run.code !== 1) throw new Error(`doctor exited ${run.code}: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as Report;
    const stats = await emulator.admin.statsSince('scan');
    const mine = stats.byCaller['doctor'] ?? {};
    const calls = Object.fromEntries(Object.entries(mine).map(([action, outcomes]) => [action, Object.values(outcomes).reduce((a, b) => a + b, 0)]));
    const limited = Object.values(mine).reduce((a, o) => a + Object.entries(o).filter(([c]) => c.startsWith('RequestLimitExceeded')).reduce((x, [, v]) => x + v, 0), 0);
    const writes = Object.keys(mine).filter((a) => !a.startsWith('Describe'));
    const scanSeconds = (report.scan?.durationMs ?? wall * 1000) / 1000;
    const [busiest, busiestCalls] = Object.entries(calls).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
    const tMin = busiestCalls / RATE;
    log(`exit ${run.code}; verdicts: ${JSON.stringify(report.counts)}`);
    log(`scan ${scanSeconds.toFixed(1)} s inside the doctor (${wall.toFixed(1)} s wall with start-up), ${report.scan?.clbsRead ?? 0} CLBs read`);
    for (const [action, n] of Object.entries(calls).sort()) log(`  ${action.padEnd(22)} ${String(n).padStart(5)} calls   ${(n / scanSeconds).toFixed(1).padStart(5)}/s (budget ${RATE}/s, quota ${Q}/s)`);
    log(`T_min = ${busiest} calls / r = ${busiestCalls}/${RATE} = ${tMin.toFixed(1)} s; T_min/T_scan = ${(tMin / scanSeconds).toFixed(2)}`);
    log(`RequestLimitExceeded answers to the doctor: ${limited}; client-side throttled attempts: ${report.scan?.throttled ?? 0}; calls per CLB: ${(Object.values(calls).reduce((a, b) => a + b, 0) / N).toFixed(2)}`);
    log(`writes by the doctor: ${writes.length === 0 ? 'none' : writes.join(', ')}; CLB tasks started during the scan: ${stats.tasks.started}`);
  } finally {
    await simulator.stop();
    await emulator.close();
    await cluster.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
