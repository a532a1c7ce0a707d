// `npm run demo [-- --once] [-- --profile ipvs-new|ipvs-old|iptables]`: the main job on the embedded local TKE.
// Brings up the dev stack (real kube-apiserver + etcd, CLB emulator, TKE simulator), applies a sample workload
// and an Audit policy, runs the operator, and prints `kubectl get lbp` and each target's verdict once the policy
// is Ready. With --once it then tears everything down; otherwise the operator keeps running until Ctrl-C.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../test/controlplane/crds.js';

const NS = 'loopguard-demo';
const DEV_ENV = join(REPO_ROOT, '.dev', 'env');

interface TargetRow {
  kind: string;
  name: string;
  verdict: string;
  rootCause: string;
  message?: string;
  plan?: string[];
}

function tsx(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, script), ...args], { stdio: 'inherit', env });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${script} ${args.join(' ')} exited with ${code}`))));
  });
}

/** Reads `export KEY='value'` lines written by scripts/dev.ts. */
function readDevEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(DEV_ENV, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)='(.*)'$/.exec(line);
    if (m) env[m[1]!] = m[2]!.replace(/'\\''/g, "'");
  }
  return env;
}

function kubectl(kubeconfig: string, args: string[], input?: string): string {
  return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], ...(input ? { input } : {}) });
}

async function waitReady(kubeconfig: string, operator: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (operator.exitCode !== null) throw new Error(`the operator exited (${operator.exitCode}); see ${logFile}`);
    try {
      kubectl(kubeconfig, ['wait', '--for=condition=Ready', '-n', NS, 'lbp/audit-all', '--timeout=5s']);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`the policy did not become Ready within 120 s; see ${logFile}`);
    }
  }
}

function printVerdicts(kubeconfig: string): void {
  console.log(`\n$ kubectl get lbp -n ${NS}`);
  console.log(kubectl(kubeconfig, ['get', 'lbp', '-n', NS]).trimEnd());
  const policy = JSON.parse(kubectl(kubeconfig, ['get', 'lbp/audit-all', '-n', NS, '-o', 'json'])) as {
    status: { targets: TargetRow[]; clusterProfile?: { kubeProxyMode?: string; kubeProxyVersion?: string } };
  };
  const p = policy.status.clusterProfile;
  console.log(`\ncluster profile: kube-proxy ${p?.kubeProxyMode ?? '?'} ${p?.kubeProxyVersion ?? ''}`);
  console.log('\nper-target verdicts (Audit: diagnosed, nothing changed):');
  for (const t of policy.status.targets) {
    console.log(`  ${`${t.kind}/${t.name}`.padEnd(22)} ${t.verdict.padEnd(14)} ${t.rootCause}`);
    if (t.message) console.log(`      ${t.message}`);
    for (const step of t.plan ?? []) console.log(`      Enforce would: ${step}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { once: { type: 'boolean', default: false }, profile: { type: 'string', default: 'ipvs-new' } } });
  const startedStack = !existsSync(DEV_ENV);
  console.log(startedStack ? '== starting the local TKE (npm run dev:up)' : '== reusing the running local TKE (.dev/env)');
  if (startedStack) await tsx('scripts/dev.ts', ['up', '--profile', values.profile!]);
  const env = readDevEnv();
  const kubeconfig = env.KUBECONFIG!;

  console.log('== applying the sample workload and an Audit policy');
  kubectl(kubeconfig, ['apply', '-f', join(REPO_ROOT, 'config/samples/demo-workload.yaml')]);
  kubectl(kubeconfig, ['apply', '-n', NS, '-f', join(REPO_ROOT, 'config/samples/audit-policy.yaml')]);

  console.log('== running the operator (log: .dev/operator.log)');
  const logFile = join(REPO_ROOT, '.dev', 'operator.log');
  const log = openSync(logFile, 'a');
  const operator = spawn(
    process.execPath,
    [
      '--import', 'tsx', join(REPO_ROOT, 'src/main.ts'),
      `--kubeconfig=${kubeconfig}`,
      `--clb-endpoint=${env.LOOPGUARD_CLB_ENDPOINT}`,
      '--clb-protocol=http://',
      `--region=${env.TENCENTCLOUD_REGION}`,
      '--leader-elect=false',
      '--probe-host=127.0.0.1',
      '--probe-port=0',
    ],
    { stdio: ['ignore', log, log], env: { ...process.env, TENCENTCLOUD_SECRET_ID: env.TENCENTCLOUD_SECRET_ID, TENCENTCLOUD_SECRET_KEY: env.TENCENTCLOUD_SECRET_KEY } },
  );
  const stop = async () => {
    if (operator.exitCode === null) {
      operator.kill('SIGTERM');
      await new Promise((r) => operator.once('exit', r));
    }
    if (startedStack) await tsx('scripts/dev.ts', ['down']);
  };
  try {
    await waitReady(kubeconfig, operator, logFile);
    printVerdicts(kubeconfig);
  } catch (err) {
    await stop();
    throw err;
  }
  if (values.once) {
    await stop();
    return;
  }
  console.log(`\nThe operator keeps running. Try: source .dev/env && kubectl describe lbp -n ${NS} audit-all`);
  console.log('Ctrl-C stops the operator' + (startedStack ? ' and the local TKE.' : '.'));
  // Ctrl-C, and a SIGTERM/SIGHUP from a process manager, `timeout` or a closed terminal: the local TKE goes too.
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  await stop();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
