// Finds (building on first use) the stock kube-apiserver and etcd binaries pinned by go.mod here.
// The build itself lives in build.sh so it can also run without Node (CI warm-up, `npm run controlplane:build`).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface ControlPlaneBinaries {
  dir: string;
  kubeApiserver: string;
  etcd: string;
}

/** Exit code of build.sh when no Go toolchain is on PATH (see build.sh). */
const NO_GO_EXIT_CODE = 3;

export class MissingGoToolchainError extends Error {
  constructor(detail: string) {
    super(
      [
        'loopguard integration tests need a real kube-apiserver + etcd, built from Go modules, but no Go toolchain was found.',
        detail.trim(),
        'Ways out:',
        '  1. install Go >= 1.24 and put it on PATH (e.g. export PATH=$PATH:/usr/local/go/bin), then run npm test again;',
        '  2. or run the tests against an existing cluster:',
        '       LOOPGUARD_USE_EXISTING_CLUSTER=true KUBECONFIG=/path/to/kubeconfig npm test',
      ].join('\n'),
    );
    this.name = 'MissingGoToolchainError';
  }
}

/**
 * Runs build.sh, which returns at once when the cache already holds binaries for these exact module
 * versions, and otherwise builds them (10-20 min the first time on 2 cores). Build output goes to stderr
 * so a long first build is visibly alive.
 */
export async function ensureControlPlaneBinaries(
  options: { env?: NodeJS.ProcessEnv; onOutput?: (chunk: string) => void } = {},
): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const onOutput = options.onOutput ?? ((chunk: string) => process.stderr.write(chunk));
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn('bash', [join(here, 'build.sh')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        onOutput(d.toString());
      });
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c ?? 1, stdout: out, stderr: err }));
    },
  );
  if (code === NO_GO_EXIT_CODE) throw new MissingGoToolchainError(stderr);
  if (code !== 0) {
    throw new Error(`building kube-apiserver/etcd failed (build.sh exit ${code}):\n${stderr.split('\n').slice(-40).join('\n')}`);
  }
  const dir = stdout.trim().split('\n').pop() ?? '';
  return { dir, kubeApiserver: join(dir, 'kube-apiserver'), etcd: join(dir, 'etcd') };
}
