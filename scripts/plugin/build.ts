// `npm run build:plugin`: the CLI (src/cli/main.ts: doctor, plan, --version) as one self-contained executable,
// dist/kubectl-loopguard, that runs with no node, npm or checkout — the file a kubectl plugin is (krew:
// scripts/krew/package.ts). Route: esbuild bundles the CLI and the parts of its dependencies it reaches (the
// cloud SDK's CLB client only, as src/cloud imports it) into one CommonJS file; Node's single executable
// application support (https://nodejs.org/api/single-executable-applications.html) turns it into a blob with a
// V8 code cache, and postject injects the blob into a copy of the project's own Node (the `node` devDependency).
// Prints the binary's size and its start-up time to `--help` against `node -e 0` of the same Node, same run.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { BUNDLE_NODE_OPTIONS, ROOT as REPO_ROOT, bundleLoopguard, gitCommit, writeThirdPartyLicenses } from '../lib/bundle.js';

const PLUGIN_BINARY = join(REPO_ROOT, 'dist', 'kubectl-loopguard');
const WORK = join(REPO_ROOT, 'dist', 'plugin');
/** The project's own Node (package.json devDependency `node`), not whatever runs this script. */
const NODE = join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node');
/** The fuse Node looks for to know a blob was injected (Node's SEA documentation, "Injecting the preparation blob"). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** THIRD_PARTY_LICENSES: the binary also redistributes Node.js. */
function writeLicenses(metafile: Metafile): void {
  const nodeVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string }).version;
  writeThirdPartyLicenses(metafile, join(WORK, 'THIRD_PARTY_LICENSES'), [
    'kubectl-loopguard bundles the software below. Its own license is in LICENSE.',
    `\n== Node.js v${nodeVersion} (the runtime the binary is built from), MIT License and the licenses of its dependencies:\n   https://github.com/nodejs/node/blob/v${nodeVersion}/LICENSE`,
  ]);
}

async function bundle(): Promise<string> {
  const out = join(WORK, 'loopguard.cjs');
  const metafile = await bundleLoopguard({
    entry: join(REPO_ROOT, 'src/cli/main.ts'),
    outfile: out,
    commit: gitCommit(),
    minify: 'full',
    moduleUrl: 'file:///kubectl-loopguard/cli/main.js',
  });
  writeLicenses(metafile);
  return out;
}

/** Runs a build step, showing its output only when it fails (postject's ELF parser warns about every note section). */
function quiet(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}

function seaBinary(script: string): void {
  const blob = join(WORK, 'sea-prep.blob');
  const config = join(WORK, 'sea-config.json');
  const seaConfig = {
    main: script,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    execArgv: BUNDLE_NODE_OPTIONS,
  };
  writeFileSync(config, JSON.stringify(seaConfig));
  quiet(NODE, ['--experimental-sea-config', config]);
  rmSync(PLUGIN_BINARY, { force: true });
  copyFileSync(NODE, PLUGIN_BINARY);
  chmodSync(PLUGIN_BINARY, 0o755);
  quiet(NODE, [join(REPO_ROOT, 'node_modules/postject/dist/cli.js'), PLUGIN_BINARY, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]);
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
