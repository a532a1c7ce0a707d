// A Node single executable application (https://nodejs.org/api/single-executable-applications.html): a blob made
// from one CommonJS script by a Node, injected by postject into a copy of a Node binary of the SAME version ("The
// version of the Node.js binary used to produce the blob must be the same as the one to which the blob will be
// injected"). The target may be of another platform (a Mach-O for macOS, an ELF for arm64): the blob is then made
// without a V8 code cache, which "can only be loaded on the same platform where [it is] compiled" (same page, on
// cross-platform generation). Used by scripts/plugin/build.ts (the host's binary) and scripts/release/ (all four).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_NODE_OPTIONS, ROOT } from '../lib/bundle.js';

/** The fuse Node looks for to know a blob was injected (Node's SEA documentation, "Injecting the preparation blob"). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** The resource name Node reads the blob from: an ELF note, or a Mach-O section in segment NODE_SEA. */
export const SEA_RESOURCE = 'NODE_SEA_BLOB';
export const SEA_MACHO_SEGMENT = 'NODE_SEA';

/** Runs a build step, showing its output only when it fails (postject's ELF parser warns about every note section). */
export function quiet(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}

export interface SeaBuild {
  /** The CommonJS script the executable runs. */
  script: string;
  /** A Node that runs here, of the target's version: it makes the blob. */
  blobNode: string;
  /** The Node binary to inject into (copied, not changed). */
  target: string;
  /** Whether the target runs here: only then can the blob carry a code cache. */
  codeCache: boolean;
  macho: boolean;
  /** Where the blob and its config go. */
  workDir: string;
  out: string;
}

/** Writes the executable; returns the blob injected into it. */
export function buildSea(b: SeaBuild): Buffer {
  const blob = join(b.workDir, 'sea-prep.blob');
  const config = join(b.workDir, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({ main: b.script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: b.codeCache, execArgv: BUNDLE_NODE_OPTIONS }),
  );
  quiet(b.blobNode, ['--experimental-sea-config', config]);
  rmSync(b.out, { force: true });
  copyFileSync(b.target, b.out);
  chmodSync(b.out, 0o755);
  quiet(process.execPath, [
    join(ROOT, 'node_modules/postject/dist/cli.js'),
    b.out,
    SEA_RESOURCE,
    blob,
    '--sentinel-fuse',
    SEA_FUSE,
    ...(b.macho ? ['--macho-segment-name', SEA_MACHO_SEGMENT] : []),
  ]);
  return readFileSync(blob);
}
