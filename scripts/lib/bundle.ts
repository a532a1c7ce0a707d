// One esbuild bundle of loopguard's TypeScript and the parts of its dependencies it reaches, for the two programs
// shipped as a single file: the operator the image runs (scripts/build-operator.ts) and the kubectl plugin
// (scripts/plugin/build.ts); also for the data-plane lab's agent, which every lab namespace runs
// (lab/agent-bundle.ts). The build info (version, commit) is baked in, since no package.json or git sits beside
// a bundle. Imports nothing from test/: the image's build stage copies only src/, this file, scripts/build-operator.ts
// and the package files.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Node options a bundle runs with. Node warns about `require('punycode')` (tr46, under node-fetch) and `url.parse()`
 * (node-fetch 2, under the cloud SDK) only for code outside node_modules: bundled, the dependencies' code looks like
 * ours. The checkout prints neither; neither is loopguard's to fix. The Dockerfile's ENTRYPOINT repeats these
 * (test/integration/image.test.ts checks it does). Since tr46 is left out (unusedFallback) the operator's bundle
 * requires no punycode; DEP0040's flag can go with the ENTRYPOINT's once the plugin's bundle is checked too.
 */
export const BUNDLE_NODE_OPTIONS = ['--disable-warning=DEP0040', '--disable-warning=DEP0169'];

/** The checkout's commit, `-dirty` when tracked files differ from HEAD; `unknown` without git. */
export function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const clean = spawnSync('git', ['diff', '--quiet', 'HEAD', '--'], { cwd: ROOT }).status === 0;
    return clean ? head : `${head}-dirty`;
  } catch {
    return 'unknown';
  }
}

export interface BundleOptions {
  /** A TypeScript entry point: under src/, or the lab's agent. */
  entry: string;
  outfile: string;
  commit: string;
  /**
   * `full`: identifiers shortened too (the plugin: the smallest binary). `names`: whitespace and syntax only, every
   * identifier kept, so the operator's logged stack traces still name loopguard's functions.
   */
  minify: 'full' | 'names';
  /** import.meta.url for code that reads it only when the baked build info is absent (CommonJS has none). */
  moduleUrl: string;
}

/**
 * node-fetch 2 (under the cloud SDK) requires whatwg-url when it loads but uses it only where Node has no `url.URL`
 * (`Url.URL || whatwgUrl.URL`, its lib/index.js): never on Node 24. Loaded, whatwg-url brings tr46's Unicode mapping
 * table, 1.4 MiB of the operator's live heap for as long as it runs, and their code (heap snapshot, issue 40;
 * docs/benchmarks.md). A bundle gets an empty module in its place.
 */
const unusedFallback: Plugin = {
  name: 'unused-fallback',
  setup(b) {
    b.onResolve({ filter: /^whatwg-url$/ }, (args) => ({ path: args.path, namespace: 'unused-fallback' }));
    b.onLoad({ filter: /.*/, namespace: 'unused-fallback' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

/** Writes the bundle (CommonJS, Node 24); returns esbuild's metafile (what went in). */
export async function bundleLoopguard(o: BundleOptions): Promise<Metafile> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const result = await build({
    metafile: true,
    absWorkingDir: ROOT,
    entryPoints: [o.entry],
    outfile: o.outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    ...(o.minify === 'full' ? { minify: true } : { minifyWhitespace: true, minifySyntax: true, keepNames: true }),
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [unusedFallback],
    define: {
      // src/version.ts: the build info, baked in.
      LOOPGUARD_EMBEDDED_BUILD_INFO: JSON.stringify({ version: pkg.version, commit: o.commit }),
      'import.meta.url': JSON.stringify(o.moduleUrl),
    },
  });
  return result.metafile;
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
 * THIRD_PARTY_LICENSES: a bundle redistributes the npm packages bundled into it, so it carries their licenses
 * (esbuild's legal comments are dropped from the bundle in favour of this file). `head`: what else the file covers.
 */
export function writeThirdPartyLicenses(metafile: Metafile, file: string, head: string[]): void {
  const parts = [...head];
  for (const dir of bundledPackages(metafile)) {
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    const license = readdirSync(join(ROOT, dir)).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    const text = license ? readFileSync(join(ROOT, dir, license), 'utf8').trim() : `(no license file in the package; package.json says ${pkg.license ?? 'nothing'})`;
    parts.push(`\n== ${pkg.name}@${pkg.version} (${pkg.license ?? 'no license field'})\n\n${text}`);
  }
  writeFileSync(file, parts.join('\n') + '\n');
}
