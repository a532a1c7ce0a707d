// `npm run demo [-- --once] [-- --audit-only] [-- --profile ipvs-new|ipvs-old|iptables]`: the main job on the
// embedded local TKE. Brings up the dev stack (real kube-apiserver + etcd, CLB emulator, TKE simulator), applies a
// sample workload and an Audit policy, runs the operator, and prints `kubectl get lbp` and each target's verdict
// once the policy is Ready. Then (not with --audit-only) it switches the policy to Enforce and prints, per target
// Audit found at risk, the verdict after Enforce and what changed on its CLB and Service, backends' health
// included (scripts/demo-clb.ts); then it deletes the policy and shows everything restored. With --once it then
// tears everything down; otherwise the operator keeps running until Ctrl-C.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { REPO_ROOT } from '../test/controlplane/crds.js';
import { ClbReader, built, describeChanges, differences, type DemoTarget, type Facts } from './demo-clb.js';

const NS = 'loopguard-demo';
const DEV_ENV = join(REPO_ROOT, '.dev', 'env');
const POLICY = 'audit-all';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface TargetRow {
  kind: string;
  name: string;
  verdict: string;
  rootCause: string;
  message?: string;
  plan?: string[];
  loadBalancerId?: string;
}

interface PolicyJson {
  metadata: { generation: number };
  status: {
    targets: TargetRow[];
    clusterProfile?: { kubeProxyMode?: string; kubeProxyVersion?: string };
    conditions?: { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[];
  };
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

/**
 * kubectl without blocking the event loop, for the calls that take a while (a deletion waits for the revert): while a
 * synchronous child runs, the CLB client's idle keep-alive sockets time out on the server unseen, and the next call
 * would go out on a closed one ("socket hang up").
 */
async function kubectlAsync(kubeconfig: string, args: string[]): Promise<string> {
  return (await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' })).stdout;
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

function readPolicy(kubeconfig: string): PolicyJson {
  return JSON.parse(kubectl(kubeconfig, ['get', `lbp/${POLICY}`, '-n', NS, '-o', 'json'])) as PolicyJson;
}

function printVerdicts(kubeconfig: string): TargetRow[] {
  console.log(`\n$ kubectl get lbp -n ${NS}`);
  console.log(kubectl(kubeconfig, ['get', 'lbp', '-n', NS]).trimEnd());
  const policy = readPolicy(kubeconfig);
  const p = policy.status.clusterProfile;
  console.log(`\ncluster profile: kube-proxy ${p?.kubeProxyMode ?? '?'} ${p?.kubeProxyVersion ?? ''}`);
  console.log('\nper-target verdicts (Audit: diagnosed, nothing changed):');
  for (const t of policy.status.targets) {
    console.log(`  ${`${t.kind}/${t.name}`.padEnd(22)} ${t.verdict.padEnd(14)} ${t.rootCause}`);
    if (t.message) console.log(`      ${t.message}`);
    for (const step of t.plan ?? []) console.log(`      Enforce would: ${step}`);
  }
  return policy.status.targets;
}

/** The targets `keys` names (kind/name), with their CLB and current annotations (read again: Enforce changes them). */
function demoTargets(kubeconfig: string, rows: TargetRow[], keys: string[]): DemoTarget[] {
  return rows
    .filter((t) => keys.includes(`${t.kind}/${t.name}`) && t.loadBalancerId && (t.kind === 'Service' || t.kind === 'Ingress'))
    .map((t) => {
      const obj = JSON.parse(kubectl(kubeconfig, ['get', t.kind.toLowerCase(), t.name, '-n', NS, '-o', 'json'])) as {
        metadata: { annotations?: Record<string, string> };
        spec: { rules?: { http?: { paths?: unknown[] } }[] };
      };
      const paths = t.kind === 'Ingress' ? (obj.spec.rules ?? []).reduce((n, r) => n + (r.http?.paths?.length ?? 0), 0) : undefined;
      return { kind: t.kind as DemoTarget['kind'], name: t.name, loadBalancerId: t.loadBalancerId!, annotations: obj.metadata.annotations ?? {}, ...(paths === undefined ? {} : { paths }) };
    });
}

async function snapshot(kubeconfig: string, clb: ClbReader, rows: TargetRow[], keys: string[]): Promise<Map<string, Facts>> {
  return new Map((await builtSnapshot(kubeconfig, clb, rows, keys)).map(([key, , facts]) => [key, facts]));
}

/** Each target's facts with whether TKE has finished building its CLB (`built`). */
async function builtSnapshot(kubeconfig: string, clb: ClbReader, rows: TargetRow[], keys: string[]): Promise<Array<[string, boolean, Facts]>> {
  const out: Array<[string, boolean, Facts]> = [];
  for (const t of demoTargets(kubeconfig, rows, keys)) {
    const facts = await clb.facts(t);
    out.push([`${t.kind}/${t.name}`, built(t, facts), facts]);
  }
  return out;
}

/** Polls until `done` holds (or the deadline passes: the caller prints what it has and says so). */
async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<{ value: T; settled: boolean }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return { value, settled: true };
    if (Date.now() > deadline) return { value, settled: false };
    await sleep(500);
  }
}

/** kube-proxy (the simulator) binds the VIP once prevent-loopback is on the Service, and unbinds it once it is off. */
const vipFollowsAnnotation = (facts: Facts): boolean => {
  const f = new Map(facts);
  return !f.has('prevent-loopback annotation') || (f.get('prevent-loopback annotation') === 'absent') === (f.get('VIP bound by kube-proxy (simulated)') === 'no');
};

/** Audit → Enforce → delete on the at-risk targets, printing each step's effect. Throws when a step does not finish. */
async function enforceAndRevert(kubeconfig: string, env: Record<string, string>, audited: TargetRow[]): Promise<void> {
  const clb = new ClbReader({ endpoint: env.LOOPGUARD_CLB_ENDPOINT!, region: env.TENCENTCLOUD_REGION!, secretId: env.TENCENTCLOUD_SECRET_ID!, secretKey: env.TENCENTCLOUD_SECRET_KEY! });
  const keys = audited.filter((t) => t.verdict === 'AtRisk' && t.loadBalancerId).map((t) => `${t.kind}/${t.name}`);
  // "Before" is the CLB as TKE finished it: Audit may report an Ingress at risk between TKE's listener and its rules.
  const first = await settle(() => builtSnapshot(kubeconfig, clb, audited, keys), (rows) => rows.every(([, done]) => done), 30_000);
  if (!first.settled) throw new Error(`TKE did not finish the CLBs of ${first.value.filter(([, done]) => !done).map(([k]) => k).join(', ')} within 30 s; see .dev/tke-simulator.log`);
  const before = new Map(first.value.map(([key, , facts]) => [key, facts]));

  const patch = `{"spec":{"mode":"Enforce"}}`;
  console.log(`\n== switching the policy to Enforce\n$ kubectl patch lbp ${POLICY} -n ${NS} --type merge -p '${patch}'`);
  kubectl(kubeconfig, ['patch', `lbp/${POLICY}`, '-n', NS, '--type', 'merge', '-p', patch]);
  // Enforce is done when the policy reports on its new generation and each target is Mitigated, or named by Stalled
  // (what only a person can fix, e.g. a capability the account lacks).
  // And the status is the same on two reads in a row: a round that learns a refusal (a capability the account lacks)
  // is followed at once by one that plans the rest without it, and the transcript shows where that ends.
  let lastRead = '';
  const converged = await settle(
    async () => readPolicy(kubeconfig),
    (p) => {
      const seen = JSON.stringify(p.status.targets);
      const stable = seen === lastRead;
      lastRead = seen;
      if (!stable) return false;
      // A capability refused in this round is still the target's error; the round it triggers at once (a learned
      // refusal plans every target again) makes it the target's blocker, which is where Enforce ends.
      if ((p.status.targets ?? []).some((t) => /Last error \(\w+CapabilityMissing\)/.test(t.message ?? ''))) return false;
      const current = (p.status.conditions ?? []).filter((c) => c.status === 'True' && c.observedGeneration === p.metadata.generation);
      const stalled = current.find((c) => c.type === 'Stalled')?.message ?? '';
      if (!current.some((c) => c.type === 'Ready') && !stalled) return false;
      return keys.every((k) => p.status.targets.some((t) => `${t.kind}/${t.name}` === k && t.verdict === 'Mitigated') || stalled.includes(`${k}:`));
    },
    60_000,
  );
  if (!converged.settled) throw new Error('the Enforce policy neither became Ready nor Stalled within 60 s; see .dev/operator.log');
  const after = await settle(() => snapshot(kubeconfig, clb, converged.value.status.targets, keys), (m) => [...m.values()].every(vipFollowsAnnotation), 30_000);
  console.log(`\n$ kubectl get lbp -n ${NS}`);
  console.log(kubectl(kubeconfig, ['get', 'lbp', '-n', NS]).trimEnd());
  console.log('\nper target: the verdict after Enforce, and what changed (CLB read through the cloud SDK: DescribeListeners, DescribeTargetHealth):');
  for (const key of keys) {
    const t = converged.value.status.targets.find((r) => `${r.kind}/${r.name}` === key);
    const was = audited.find((r) => `${r.kind}/${r.name}` === key);
    console.log(`  ${key.padEnd(22)} ${was?.verdict ?? '?'} → ${t?.verdict ?? '?'} (${t?.rootCause ?? '?'})`);
    for (const line of describeChanges(before.get(key) ?? [], after.value.get(key) ?? [])) console.log(`      ${line}`);
    // What is still missing, and who can fix it: the status message's last error, else all of it.
    if (t && t.verdict !== 'Mitigated' && t.message) console.log(`      ${t.message.slice(Math.max(0, t.message.indexOf('Last error')))}`);
  }
  console.log('  (kube-proxy answers a bound VIP itself, so health checks from the VIP would be dropped and the backends Dead:');
  console.log('   loopguard moves the source to 100.64.0.0/10 before it sets prevent-loopback, and they stay Alive.)');

  console.log(`\n== deleting the policy: loopguard restores what it changed (revertOnDelete)\n$ kubectl delete lbp ${POLICY} -n ${NS}`);
  await kubectlAsync(kubeconfig, ['delete', `lbp/${POLICY}`, '-n', NS, '--timeout=60s']);
  const restored = await settle(() => snapshot(kubeconfig, clb, audited, keys), (m) => keys.every((k) => differences(before.get(k) ?? [], m.get(k) ?? []).length === 0), 30_000);
  for (const key of keys) {
    const diff = differences(before.get(key) ?? [], restored.value.get(key) ?? []);
    console.log(`  ${key.padEnd(22)} ${diff.length === 0 ? 'restored: as before Enforce' : 'NOT restored (before vs now):'}`);
    for (const line of diff.length === 0 ? (restored.value.get(key) ?? []).map(([l, v]) => `${l}: ${v}`) : diff) console.log(`      ${line}`);
  }
  if (!restored.settled) throw new Error('the revert did not restore every target within 30 s; see .dev/operator.log');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { once: { type: 'boolean', default: false }, 'audit-only': { type: 'boolean', default: false }, profile: { type: 'string', default: 'ipvs-new' } },
  });
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
      // loopguard's namespace, as .dev/env exports it (an .dev/env of an older dev:up has none: the same default).
      `--namespace=${env.LOOPGUARD_NAMESPACE ?? 'loopguard-system'}`,
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
    const audited = printVerdicts(kubeconfig);
    if (!values['audit-only']) await enforceAndRevert(kubeconfig, env, audited);
  } catch (err) {
    await stop();
    throw err;
  }
  if (values.once) {
    await stop();
    return;
  }
  console.log(
    values['audit-only']
      ? `\nThe operator keeps running. Try: source .dev/env && kubectl describe lbp -n ${NS} ${POLICY}`
      : `\nThe operator keeps running. Try: source .dev/env && kubectl apply -n ${NS} -f config/samples/audit-policy.yaml && kubectl describe lbp -n ${NS} ${POLICY}`,
  );
  console.log('Ctrl-C stops the operator' + (startedStack ? ' and the local TKE.' : '.'));
  // Ctrl-C, and a SIGTERM/SIGHUP from a process manager, `timeout` or a closed terminal: the local TKE goes too. A
  // terminal's Ctrl-C reaches every process of the group, and npm and tsx relay it once more: the handlers stay for
  // the whole teardown, so the second SIGINT does not kill the demo (Node's default) before the stack is stopped.
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => resolve());
  });
  await stop();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
