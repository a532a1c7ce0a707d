// `npm run build:operator [-- --outdir DIR --commit C]`: the operator as the image runs it, one file:
// DIR/loopguard.cjs (default dist/operator), esbuild's bundle of src/main.ts and the parts of its dependencies it
// reaches, with LICENSE and THIRD_PARTY_LICENSES beside it. The image's build stage runs this (Dockerfile), and bench/scale runs
// the same file.
// Why a bundle: Node loading the dependencies from node_modules (hundreds of modules, each with its source text
// and its loader records) costs the operator about 50 MiB of RSS at start that the bundle does not: `--version`, which
// loads every module, peaks at 153 MiB from dist/main.js and at 98-101 MiB from the bundle (VmHWM, 2026-11-26); under
// load the V8 heap stays ~22 MiB smaller (docs/benchmarks.md). The image is 38 MB smaller too.
// Identifiers are kept (minify: 'names'): a logged stack trace still names loopguard's functions.
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, bundleLoopguard, gitCommit, writeThirdPartyLicenses } from './lib/bundle.js';

/** The bundle's file name, in the image and under dist/operator. */
export const OPERATOR_BUNDLE = 'loopguard.cjs';

/** A commit as `npm run image` and gitCommit name it: hex, optionally -dirty; anything else is baked as `unknown`. */
const COMMIT = /^[0-9a-f]{7,40}(-dirty)?$/;

export async function buildOperatorBundle(outdir: string, given: string): Promise<string> {
  const commit = COMMIT.test(given) ? given : 'unknown';
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, OPERATOR_BUNDLE);
  const metafile = await bundleLoopguard({ entry: join(ROOT, 'src/main.ts'), outfile, commit, minify: 'names', moduleUrl: 'file:///loopguard/loopguard.cjs' });
  copyFileSync(join(ROOT, 'LICENSE'), join(outdir, 'LICENSE'));
  writeThirdPartyLicenses(metafile, join(outdir, 'THIRD_PARTY_LICENSES'), ['loopguard.cjs bundles the software below. loopguard\'s own license is in LICENSE.']);
  return outfile;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(ROOT, 'scripts/build-operator.ts')) {
  const { values } = parseArgs({ options: { outdir: { type: 'string', default: join(ROOT, 'dist', 'operator') }, commit: { type: 'string' } } });
  const started = Date.now();
  buildOperatorBundle(resolve(values.outdir), values.commit || gitCommit()).then(
    (file) => console.log(`built ${file} (${(statSync(file).size / 2 ** 20).toFixed(1)} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
