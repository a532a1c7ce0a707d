// @kubernetes/client-node as one ES module, for Jest. Jest gives every test file its own module registry and links
// each module a file imports into it: client-node is 1,033 ES modules (one per API model) plus its dependencies
// (undici alone 132 files), and about 90 test files load it on every run. Twenty test files that only load it took
// 19.3-20.3 s of CPU from node_modules and 10.1-11.4 s from this bundle (one worker, 2026-12-01): about 0.45 s a file.
// It is the same code, only concatenated, as the operator's own bundle (scripts/lib/bundle.ts) concatenates it into
// the image; its dependencies are bundled too, Node's own modules required through Node (the banner), and ws's
// optional native helpers stay absent as they are here.
//
// jest.config.js maps both ways loopguard imports client-node onto it: the package, and
// `dist/gen/apis/exception.js` (src/runtime/kube-errors.ts imports ApiException from there, to keep client-node out of
// the CLI's `--help`); one module for both keeps one ApiException class, so `instanceof` holds. Another deep import
// would load a second copy beside it in tests only: map it there too.
//
// Built once per checkout and per contents of its installed packages (the lockfile npm writes into node_modules),
// esbuild version and version of this file, into the cache outside the repo that the other builds use
// (~/.cache/loopguard, or $LOOPGUARD_CACHE); a checkout's bundles a day old are removed then. Written to a temporary name
// and renamed, so two runs starting together never read half a file. JavaScript, not TypeScript: jest.config.js
// loads it natively.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGE = join(ROOT, 'node_modules', '@kubernetes', 'client-node');

const DAY_MS = 24 * 3600_000;

const hash = (...parts) => parts.reduce((h, p) => h.update(p).update('\0'), createHash('sha256')).digest('hex').slice(0, 16);

/** The bundle's path, built first when the cache has none for this checkout, its packages, esbuild and this file. */
export async function clientNodeBundle() {
  const installed = readFileSync(join(ROOT, 'node_modules', '.package-lock.json'));
  const version = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')).version;
  const checkout = `client-node-${version}-${hash(ROOT)}-`;
  const cache = process.env.LOOPGUARD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loopguard');
  const dir = join(cache, 'jest');
  const file = join(dir, `${checkout}${hash(installed, esbuildVersion, readFileSync(fileURLToPath(import.meta.url)))}.mjs`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  try {
    await build({
      stdin: { contents: "export * from './dist/index.js';", resolveDir: PACKAGE, sourcefile: 'client-node-bundle.mjs' },
      outfile: partial,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      // As the operator's bundle: less to parse, every name kept (stack traces, error names).
      minifyWhitespace: true,
      minifySyntax: true,
      keepNames: true,
      legalComments: 'none',
      logLevel: 'warning',
      // The CommonJS dependencies (undici, ws, …) require Node's own modules: through Node's require.
      banner: { js: "import { createRequire as __loopguardCreateRequire } from 'node:module'; const require = __loopguardCreateRequire(import.meta.url);" },
    });
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  // A checkout's bundles made for other packages or another version of this file, once a day old: a run still going
  // from this checkout (hours at most) may be reading one younger than that.
  for (const old of readdirSync(dir)) {
    const path = join(dir, old);
    if (old.startsWith(checkout) && old.endsWith('.mjs') && path !== file && Date.now() - statSync(path).mtimeMs > DAY_MS) rmSync(path, { force: true });
  }
  return file;
}
