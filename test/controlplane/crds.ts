// Installs the project's CRDs (ours in crds/, the simulated TKE ones in sim/crds/) with kubectl, as a user
// would, and waits until the apiserver serves them: a CR created before `Established` gets a 404.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CRD_DIRS = [join(REPO_ROOT, 'crds'), join(REPO_ROOT, 'sim', 'crds')];

/**
 * The environment of the tests' short-lived Go clients (kubectl, helm): one OS thread for Go code. A run of kubectl
 * is mostly start-up, and with two Ps its garbage collector marks on the second core too: `kubectl apply
 * --server-side` measured 0.30 s of CPU with the default and 0.24 s with one P (20 runs each, twice, 2026-11-30, a
 * quiet machine); over the 1,300 runs of a whole `npm test`, on a busy machine, 0.29 s against 0.30-0.32 s (docs/
 * development.md "The floor at today's CPU"). Their answers are the same.
 */
export const GO_CLIENT_ENV = { GOMAXPROCS: '1' } as const;

function run(args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile('kubectl', args, { maxBuffer: 8 * 1024 * 1024, timeout: 90_000, env: { ...process.env, ...GO_CLIENT_ENV } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`kubectl ${args.filter((a) => !a.includes('kubeconfig')).join(' ')} failed: ${stderr || err.message}`));
      else resolvePromise(stdout);
    });
  });
}

export function crdFiles(dirs = CRD_DIRS): string[] {
  return dirs
    .filter((d) => existsSync(d))
    .flatMap((d) => readdirSync(d).filter((f) => /\.ya?ml$/.test(f) && !/^kustomization\.ya?ml$/.test(f)).map((f) => join(d, f)))
    .sort();
}

/** Applies every CRD file and waits for each to be Established. Returns the CRD names. */
export async function installCrds(kubeconfig: string, dirs = CRD_DIRS): Promise<string[]> {
  const files = crdFiles(dirs);
  if (files.length === 0) return [];
  // Server-side apply: no last-applied annotation, and large schemas don't hit the annotation size limit.
  const out = await run([
    '--kubeconfig', kubeconfig, 'apply', '--server-side', '--force-conflicts', '--field-manager=loopguard-tests',
    '-o', 'name', ...files.flatMap((f) => ['-f', f]),
  ]);
  const names = out.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('customresourcedefinition'));
  if (names.length > 0) {
    await run(['--kubeconfig', kubeconfig, 'wait', '--for=condition=Established', '--timeout=60s', ...names]);
  }
  return names.map((n) => n.replace(/^customresourcedefinition[^/]*\//, ''));
}
