// `npm run build:plugin`: the CLI (src/cli/main.ts: doctor, plan, --version) as one self-contained executable,
// dist/kubectl-loopguard, that runs with no node, npm or checkout — the file a kubectl plugin is (krew:
// scripts/krew/package.ts). Route: esbuild bundles the CLI and the parts of its dependencies it reaches (the
// cloud SDK's CLB client only, as src/cloud imports it) into one CommonJS file; Node's single executable
// application support (https://nodejs.org/api/single-executable-applications.html) turns it into a blob with a
// V8 code cache, and postject injects the blob into a copy of the project's own Node (the `node` devDependency).
// Prints the binary's size and its start-up time to `--help` against `node -e 0` of the same Node, same run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT as REPO_ROOT } from '../lib/bundle.js';
import { bundlePlugin, writePluginLicenses } from './bundle.js';
import { buildSea } from './sea.js';

const PLUGIN_BINARY = join(REPO_ROOT, 'dist', 'kubectl-loopguard');
const WORK = join(REPO_ROOT, 'dist', 'plugin');
/** The project's own Node (package.json devDependency `node`), not whatever runs this script. */
const NODE = join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node');

/** The project's Node's version: its THIRD_PARTY_LICENSES entry. */
function nodeVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string }).version;
}

async function bundle(): Promise<string> {
  const { script, metafile } = await bundlePlugin(WORK);
  writePluginLicenses(metafile, nodeVersion(), join(WORK, 'THIRD_PARTY_LICENSES'));
  return script;
}

function seaBinary(script: string): void {
  buildSea({ script, blobNode: NODE, target: NODE, codeCache: true, macho: false, workDir: WORK, out: PLUGIN_BINARY });
}

/** Median wall time of `cmd args` over `runs` runs, in ms. */
function medianMs(cmd: string, args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { stdio: 'ignore', env: { PATH: '/usr/bin:/bin' } });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)]!;
}

async function main(): Promise<void> {
  const started = Date.now();
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  const script = await bundle();
  seaBinary(script);
  const size = statSync(PLUGIN_BINARY).size;
  const nodeSize = statSync(NODE).size;
  console.log(`built ${PLUGIN_BINARY} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`size: ${(size / 2 ** 20).toFixed(1)} MiB (the Node binary ${(nodeSize / 2 ** 20).toFixed(1)} MiB + the CLI ${((size - nodeSize) / 2 ** 20).toFixed(1)} MiB; bundle ${(statSync(script).size / 2 ** 20).toFixed(1)} MiB)`);
  const runs = 11;
  medianMs(PLUGIN_BINARY, ['--help'], 2); // warm the page cache for both
  medianMs(NODE, ['-e', '0'], 2);
  const help = medianMs(PLUGIN_BINARY, ['--help'], runs);
  const bare = medianMs(NODE, ['-e', '0'], runs);
  console.log(
    `start-up to --help: ${help.toFixed(0)} ms median of ${runs}; \`node -e 0\` of the same Node: ${bare.toFixed(0)} ms (ratio ${(help / bare).toFixed(2)})`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
