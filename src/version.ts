// What this loopguard is: the package version and the git commit it was built from, for `loopguard --version`
// and the start-up log line.
// A bundle (the image's loopguard.cjs, the kubectl plugin) has both baked in by scripts/lib/bundle.ts. Elsewhere:
//   - version: package.json's, read next to the code (the repo root from src/ or dist/);
//   - commit: `git rev-parse` in the checkout the code runs from (with -dirty when tracked files differ from HEAD,
//     as `npm run image` names it), else "unknown".
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  version: string;
  commit: string;
}

const UNKNOWN = 'unknown';

/**
 * The build info baked into a bundle (scripts/lib/bundle.ts, through esbuild's `define`): it has no package.json or
 * git checkout beside it. Undefined everywhere else.
 */
declare const LOOPGUARD_EMBEDDED_BUILD_INFO: BuildInfo | undefined;
const embedded: BuildInfo | undefined = typeof LOOPGUARD_EMBEDDED_BUILD_INFO === 'undefined' ? undefined : LOOPGUARD_EMBEDDED_BUILD_INFO;
/** A commit as git names it here: hex, optionally -dirty. */
const COMMIT = /^[0-9a-f]{7,40}(-dirty)?$/;

function readJson(url: URL): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(url, 'utf8'));
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function git(cwd: string, args: string[]): { ok: boolean; out: string } {
  try {
    const out = execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 });
    return { ok: true, out: out.trim() };
  } catch {
    return { ok: false, out: '' };
  }
}

function commitFromGit(dir: string): string | undefined {
  const head = git(dir, ['rev-parse', '--short=12', 'HEAD']);
  if (!head.ok || !COMMIT.test(head.out)) return undefined;
  return git(dir, ['diff', '--quiet', 'HEAD', '--']).ok ? head.out : `${head.out}-dirty`;
}

/** The build info of the code at `moduleUrl` (default: this module): `../package.json` relative to it, git in its directory. */
export function readBuildInfo(moduleUrl?: string | URL): BuildInfo {
  if (embedded && moduleUrl === undefined) return embedded;
  moduleUrl ??= import.meta.url;
  const pkg = readJson(new URL('../package.json', moduleUrl));
  const version = typeof pkg?.['version'] === 'string' ? pkg['version'] : UNKNOWN;
  return { version, commit: commitFromGit(dirname(fileURLToPath(moduleUrl))) ?? UNKNOWN };
}

/** The package version alone (no git): what reports name their tool version with. */
export function packageVersion(): string {
  if (embedded) return embedded.version;
  const v = readJson(new URL('../package.json', import.meta.url))?.['version'];
  return typeof v === 'string' ? v : UNKNOWN;
}

/** What `loopguard --version` prints. */
export function formatVersion(info: BuildInfo): string {
  return `loopguard ${info.version} (commit ${info.commit})`;
}
