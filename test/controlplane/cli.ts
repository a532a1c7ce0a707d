// `npm run cluster:up` / `npm run cluster:down`: a control plane for manual work, outliving the command.
// The pointer to its state lives in .dev/cluster (gitignored) so `down` finds it from any shell.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureControlPlaneBinaries, kubeMinor } from './binaries.js';
import { installCrds, REPO_ROOT } from './crds.js';
import { readState, startControlPlane, stopControlPlane, type ControlPlaneState } from './launcher.js';

const pointer = join(REPO_ROOT, '.dev', 'cluster');

function running(): ControlPlaneState | undefined {
  if (!existsSync(pointer)) return undefined;
  const state = readState(readFileSync(pointer, 'utf8').trim());
  if (!state) return undefined;
  try {
    process.kill(state.apiserverPid, 0);
    return state;
  } catch {
    return undefined;
  }
}

/** `kubeVersion`: a minor with its own build (`--kube-version 1.28`; see build.sh); default: ./go.mod's. */
export async function clusterUp(options: { kubeVersion?: string } = {}): Promise<ControlPlaneState> {
  const existing = running();
  if (existing) {
    // One control plane at a time: say so rather than hand back one of another minor than asked for.
    const want = options.kubeVersion ? kubeMinor(options.kubeVersion) : undefined;
    if (want && kubeMinor(existing.version.replace(/-.*$/, '')) !== want) {
      throw new Error(`a control plane ${existing.version} is already running; stop it first (npm run cluster:down or dev:down)`);
    }
    return existing;
  }
  const binaries = await ensureControlPlaneBinaries(options.kubeVersion ? { kubeVersion: options.kubeVersion } : {});
  const t0 = Date.now();
  const state = await startControlPlane({ binaries, detached: true });
  await installCrds(state.kubeconfig);
  mkdirSync(join(REPO_ROOT, '.dev'), { recursive: true });
  writeFileSync(pointer, state.dir);
  console.error(`control plane ${state.version} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s at ${state.server}`);
  return state;
}

export async function clusterDown(): Promise<boolean> {
  if (!existsSync(pointer)) return false;
  const state = readState(readFileSync(pointer, 'utf8').trim());
  if (state) await stopControlPlane(state);
  rmSync(pointer, { force: true });
  return state !== undefined;
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({ args: rest, options: { 'kube-version': { type: 'string' } } });
  if (command === 'up') {
    const kubeVersion = values['kube-version'];
    const state = await clusterUp(kubeVersion ? { kubeVersion } : {});
    console.error(`unprivileged user kubeconfig: ${state.userKubeconfig}`);
    console.log(`export KUBECONFIG=${state.kubeconfig}`);
  } else if (command === 'down') {
    console.error((await clusterDown()) ? 'control plane stopped' : 'no control plane was running');
  } else {
    console.error('usage: cli.ts up [--kube-version 1.28] | down');
    process.exitCode = 2;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
