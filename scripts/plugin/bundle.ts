// The CLI's bundle (src/cli/main.ts as one CommonJS file) and the THIRD_PARTY_LICENSES of a kubectl-loopguard
// built from it: the npm packages bundled in, and the Node.js the executable is made of (which differs by
// platform in a release, scripts/release/platforms.ts).
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { ROOT, bundleLoopguard, gitCommit, writeThirdPartyLicenses } from '../lib/bundle.js';

/** Writes DIR/loopguard.cjs; returns its path and esbuild's metafile. */
export async function bundlePlugin(dir: string): Promise<{ script: string; metafile: Metafile }> {
  const script = join(dir, 'loopguard.cjs');
  const metafile = await bundleLoopguard({
    entry: join(ROOT, 'src/cli/main.ts'),
    outfile: script,
    commit: gitCommit(),
    minify: 'full',
    moduleUrl: 'file:///kubectl-loopguard/cli/main.js',
  });
  return { script, metafile };
}

export function writePluginLicenses(metafile: Metafile, nodeVersion: string, file: string): void {
  writeThirdPartyLicenses(metafile, file, [
    'kubectl-loopguard bundles the software below. Its own license is in LICENSE.',
    `\n== Node.js v${nodeVersion} (the runtime the binary is built from), MIT License and the licenses of its dependencies:\n   https://github.com/nodejs/node/blob/v${nodeVersion}/LICENSE`,
  ]);
}
