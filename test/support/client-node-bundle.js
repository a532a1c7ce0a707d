// @kubernetes/client-node as one ES module, for Jest. Jest gives every test file its own module registry and links
// each ES module a file imports into it: client-node is 1,033 of them (one per API model), about 0.7 s of CPU for each
// of the ~90 test files that load it, on every run. One module of the same code costs about 0.2 s. It is the same
// package, only concatenated, as the operator's own bundle (scripts/lib/bundle.ts) concatenates it into the image.
//
// client-node's dependencies stay outside, each imported by the absolute path Node's resolution gives from
// client-node's own files (some are client-node's nested copies, e.g. its js-yaml), so the bundle loads exactly the
// files client-node would. jest.config.js maps both ways loopguard imports client-node onto it: the package, and
// `dist/gen/apis/exception.js` (src/runtime/kube-errors.ts imports ApiException from there, to keep client-node out of
// the CLI's `--help`); one module for both keeps one ApiException class, so `instanceof` holds.
//
// Built once per client-node version, esbuild version, checkout and version of this file, into the cache outside the repo that the other
// builds use (~/.cache/loopguard, or $LOOPGUARD_CACHE); written to a temporary name and renamed, so two runs starting
// together never read half a file. JavaScript, not TypeScript: jest.config.js loads it natively.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGE = join(ROOT, 'node_modules', '@kubernetes', 'client-node');

/** The bundle's path, built first when the cache has none for this client-node, esbuild and checkout. */
export async function clientNodeBundle() {
  const manifest = readFileSync(join(PACKAGE, 'package.json'));
  // This file's own text is in the key: a change to how the bundle is made makes a new one.
  const key = createHash('sha256').update(manifest).update(esbuildVersion).update(ROOT).update(readFileSync(fileURLToPath(import.meta.url))).digest('hex').slice(0, 16);
  const cache = process.env.LOOPGUARD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loopguard');
  const file = join(cache, 'jest', `client-node-${JSON.parse(manifest.toString()).version}-${key}.mjs`);
  if (existsSync(file)) return file;
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
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
    // CommonJS dependencies (undici, openid-client, …) require Node's own modules: through Node's require.
    banner: { js: "import { createRequire as __loopguardCreateRequire } from 'node:module'; const require = __loopguardCreateRequire(import.meta.url);" },
  });
  renameSync(partial, file);
  return file;
}
