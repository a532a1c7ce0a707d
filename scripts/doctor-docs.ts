// `npm run docs:doctor`: regenerates the output samples in docs/doctor.md from real runs, so the document shows what
// the commands print, never a hand-typed copy. It starts a private local TKE (kube-apiserver + etcd, the CLB emulator,
// the TKE simulator; profile ipvs-new), applies config/samples/demo-workload.yaml, runs `loopguard doctor` as a user
// would (its own process, the emulator's credentials in its environment) and `loopguard plan` on the same file, and
// replaces each block between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`.
// CLB ids and VIPs change from run to run; the plan samples do not (test/unit/cli/docs.test.ts checks them).
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureControlPlaneBinaries } from '../test/controlplane/binaries.js';
import { installCrds, REPO_ROOT } from '../test/controlplane/crds.js';
import { startControlPlane, stopControlPlane } from '../test/controlplane/launcher.js';
import { kubectl, waitFor } from '../test/support/kube.js';
import { startLocalTke } from '../test/support/local-tke.js';

const DOC = join(REPO_ROOT, 'docs/doctor.md');
const NS = 'loopguard-demo';

/** The plan samples: deterministic, so the unit test can run them again and compare. */
export const PLAN_SAMPLES: Record<string, string[]> = {
  'plan-table': ['plan', '-f', 'config/samples/demo-workload.yaml', '--kube-proxy-mode=ipvs', '--kube-proxy-version=v1.18.4-tke.20'],
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function loopguard(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(REPO_ROOT, 'bin/loopguard.js'), ...args], { cwd: REPO_ROOT, env, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** The block as it appears in the document: the command line, the output, the exit status. */
export function sample(args: string[], run: Run): string {
  return ['```console', `$ loopguard ${args.join(' ')}`, run.stdout.trimEnd(), ...(run.stderr ? [run.stderr.trimEnd()] : []), `$ echo $?`, String(run.code), '```'].join('\n');
}

export function replaceBlock(doc: string, name: string, body: string): string {
  const begin = `<!-- BEGIN GENERATED: ${name} -->`;
  const end = `<!-- END GENERATED: ${name} -->`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i < 0 || j < i) throw new Error(`docs/doctor.md has no block ${name}`);
  return `${doc.slice(0, i + begin.length)}\n${body}\n${doc.slice(j)}`;
}

async function main(): Promise<void> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  let doc = readFileSync(DOC, 'utf8');
  for (const [name, args] of Object.entries(PLAN_SAMPLES)) doc = replaceBlock(doc, name, sample(args, await loopguard(args, env)));

  const cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
  try {
    await installCrds(cp.kubeconfig);
    const tke = await startLocalTke({ kubeconfig: cp.kubeconfig, allNamespaces: true, operator: false });
    try {
      const applied = await kubectl(['apply', '-f', join(REPO_ROOT, 'config/samples/demo-workload.yaml')], { kubeconfig: cp.kubeconfig });
      if (applied.code !== 0) throw new Error(applied.stderr);
      await waitFor(
        'the demo CLBs and listeners',
        async () => {
          const state = await tke.emulator.admin.state();
          return state.loadBalancers.length >= 4 && state.loadBalancers.every((lb) => lb.Listeners.length > 0) ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const doctorEnv = {
        ...env,
        KUBECONFIG: cp.kubeconfig,
        TENCENTCLOUD_REGION: tke.emulator.region,
        TENCENTCLOUD_SECRET_ID: tke.emulator.credentials.secretId,
        TENCENTCLOUD_SECRET_KEY: tke.emulator.credentials.secretKey,
        LOOPGUARD_CLB_ENDPOINT: tke.emulator.endpoint,
        LOOPGUARD_CLB_PROTOCOL: 'http',
      };
      const args = ['doctor', '-n', NS];
      const run = await loopguard(args, doctorEnv);
      if (run.code !== 1) throw new Error(`loopguard ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
      doc = replaceBlock(doc, 'doctor-table', sample(args, run));
    } finally {
      await tke.stop();
    }
  } finally {
    await stopControlPlane(cp);
  }
  writeFileSync(DOC, doc);
  console.log('docs/doctor.md: samples regenerated');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
