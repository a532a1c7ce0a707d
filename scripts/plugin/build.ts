// `npm run build:plugin`: the CLI (src/cli/main.ts: doctor, plan, --version) as one self-contained executable,
// dist/kubectl-loopguard, that runs with no node, npm or checkout — the file a kubectl plugin is (krew:
// scripts/krew/package.ts). Route: esbuild bundles the CLI and the parts of its dependencies it reaches (the
// cloud SDK's CLB client only, as src/cloud imports it) into one CommonJS file; Node's single executable
// application support (https://nodejs.org/api/single-executable-applications.html) turns it into a blob with a
// V8 code cache, and postject injects the blob into a copy of the project's own Node (the `node` devDependency).
// Prints the binary's size and its start-up time to `--help` against `node -e 0` of the same Node, same run.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { REPO_ROOT } from '../../test/controlplane/crds.js';

const PLUGIN_BINARY = join(REPO_ROOT, 'dist', 'kubectl-loopguard');
const WORK = join(REPO_ROOT, 'dist', 'plugin');
/** The project's own Node (package.json devDependency `node`), not whatever runs this script. */
const NODE = join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node');
/** The fuse Node looks for to know a blob was injected (Node's SEA documentation, "Injecting the preparation blob"). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const clean = spawnSync('git', ['diff', '--quiet', 'HEAD', '--'], { cwd: REPO_ROOT }).status === 0;
    return clean ? head : `${head}-dirty`;
  } catch {
    return 'unknown';
  }
}

/** The npm packages a bundle holds (their directories), from esbuild's metafile. */
function bundledPackages(metafile: Metafile): string[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(m[1]!);
  }
  return [...dirs].sort();
}

/**
 * THIRD_PARTY_LICENSES: the binary redistributes Node.js and the npm packages bundled into it, so it carries
 * their licenses (esbuild's legal comments are dropped from the bundle in favour of this file).
 */
function writeThirdPartyLicenses(metafile: Metafile): void {
  const nodeVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string }).version;
  const parts = [
    'kubectl-loopguard bundles the software below. Its own license is in LICENSE.',
    `\n== Node.js v${nodeVersion} (the runtime the binary is built from), MIT License and the licenses of its dependencies:\n   https://github.com/nodejs/node/blob/v${nodeVersion}/LICENSE`,
  ];
  for (const dir of bundledPackages(metafile)) {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    const file = readdirSync(join(REPO_ROOT, dir)).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    const text = file ? readFileSync(join(REPO_ROOT, dir, file), 'utf8').trim() : `(no license file in the package; package.json says ${pkg.license ?? 'nothing'})`;
    parts.push(`\n== ${pkg.name}@${pkg.version} (${pkg.license ?? 'no license field'})\n\n${text}`);
  }
  writeFileSync(join(REPO_ROOT, 'dist', 'plugin', 'THIRD_PARTY_LICENSES'), parts.join('\n') + '\n');
}

async function bundle(): Promise<string> {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const out = join(WORK, 'loopguard.cjs');
  const result = await build({
    metafile: true,
    entryPoints: [join(REPO_ROOT, 'src/cli/main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    define: {
      // src/version.ts: no package.json or git beside the binary, so the build info is baked in.
      LOOPGUARD_EMBEDDED_BUILD_INFO: JSON.stringify({ version: pkg.version, commit: commit() }),
      // Only reached without the baked info above; keeps esbuild from warning that CommonJS has no import.meta.
      'import.meta.url': JSON.stringify('file:///kubectl-loopguard/cli/main.js'),
    },
  });
  writeThirdPartyLicenses(result.metafile);
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
    // Node warns about `require('punycode')` (tr46, under node-fetch) and `url.parse()` (node-fetch 2, under the
    // cloud SDK) only for code outside node_modules: bundled, the dependencies' code looks like ours. The checkout
    // prints neither; neither is loopguard's to fix.
    execArgv: ['--disable-warning=DEP0040', '--disable-warning=DEP0169'],
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
