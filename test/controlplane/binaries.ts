// Finds (building on first use) the stock kube-apiserver and etcd binaries pinned by go.mod here, or, for another
// Kubernetes minor, kube-apiserver pinned by versions/<minor>/go.mod (with the same etcd).
// The build itself lives in build.sh so it can also run without Node (CI warm-up, `npm run controlplane:build`).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface ControlPlaneBinaries {
  dir: string;
  kubeApiserver: string;
  etcd: string;
}

/** The minors the test ground can start besides the default (./go.mod): one directory each under versions/. */
export function extraKubeVersions(): string[] {
  const dir = join(here, 'versions');
  return existsSync(dir) ? readdirSync(dir).filter((v) => /^1\.\d+$/.test(v) && existsSync(join(dir, v, 'go.mod'))).sort() : [];
}

/** `--kube-version` as users write it (1.28, v1.28, 1.28.15): the minor, or an error naming the ones there are. */
export function kubeMinor(value: string): string {
  const m = /^v?(1\.\d+)(\.\d+)?$/.exec(value.trim());
  if (!m?.[1]) throw new Error(`--kube-version ${value}: expected a Kubernetes minor such as 1.28`);
  return m[1];
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
  options: { env?: NodeJS.ProcessEnv; onOutput?: (chunk: string) => void; /** A minor such as 1.28; default: ./go.mod's. */ kubeVersion?: string } = {},
): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const onOutput = options.onOutput ?? ((chunk: string) => process.stderr.write(chunk));
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const args = options.kubeVersion ? [kubeMinor(options.kubeVersion)] : [];
      const child = spawn('bash', [join(here, 'build.sh'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
