// `npm run build:krew [-- --release-url URL]`: the krew plugin for this machine's platform (linux/amd64) — the
// single binary (npm run build:plugin, run first), an archive holding it with LICENSE and THIRD_PARTY_LICENSES, and
// the manifest that points at that archive: dist/krew/kubectl-loopguard_<version>_linux_amd64.tar.gz and
// dist/krew/loopguard.yaml. `npm run release` (scripts/release/main.ts) makes the same for all four platforms.
// The uri is the project's release page (scripts/release/platforms.ts), or --release-url / LOOPGUARD_RELEASE_URL;
// to install before a release serves it: `kubectl krew install --manifest=dist/krew/loopguard.yaml --archive=…`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT as REPO_ROOT } from '../lib/bundle.js';
import { sha256File, writeTarGz } from '../release/archive.js';
import { PROJECT_URL, archiveName, releaseUrl as releaseFolder, releaseVersion } from '../release/platforms.js';
import { krewManifest } from './manifest.js';

const OUT = join(REPO_ROOT, 'dist', 'krew');
/** The one platform this builds: the project's Node here is linux-x64 (krew names it linux/amd64). */
const PLATFORM = { os: 'linux', arch: 'amd64' } as const;
const FILES = ['kubectl-loopguard', 'LICENSE', 'THIRD_PARTY_LICENSES'];

function main(): void {
  const { values } = parseArgs({ options: { 'release-url': { type: 'string' }, 'no-build': { type: 'boolean', default: false } } });
  const version = releaseVersion();
  const releaseUrl = releaseFolder(version, values['release-url'] ?? process.env['LOOPGUARD_RELEASE_URL']);

  if (!values['no-build']) {
    execFileSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/plugin/build.ts')], { stdio: 'inherit', cwd: REPO_ROOT });
  }

  rmSync(OUT, { recursive: true, force: true });
  const stage = join(OUT, 'stage');
  mkdirSync(stage, { recursive: true });
  copyFileSync(join(REPO_ROOT, 'dist', 'kubectl-loopguard'), join(stage, 'kubectl-loopguard'));
  copyFileSync(join(REPO_ROOT, 'LICENSE'), join(stage, 'LICENSE'));
  copyFileSync(join(REPO_ROOT, 'dist', 'plugin', 'THIRD_PARTY_LICENSES'), join(stage, 'THIRD_PARTY_LICENSES'));
  const name = archiveName(version, PLATFORM);
  const archive = join(OUT, name);
  writeTarGz(archive, stage, FILES);
  rmSync(stage, { recursive: true });
  const sha256 = sha256File(archive);

  const manifestFile = join(OUT, 'loopguard.yaml');
  writeFileSync(
    manifestFile,
    krewManifest(readFileSync(join(REPO_ROOT, 'plugins', 'loopguard.yaml'), 'utf8'), {
      version,
      homepage: PROJECT_URL,
      releaseUrl,
      archives: [{ ...PLATFORM, name, sha256 }],
      writtenBy: 'Written by `npm run build:krew` from plugins/loopguard.yaml, for the archive beside it.',
    }),
  );

  console.log(`archive:  ${archive} (sha256 ${sha256})`);
  console.log(`manifest: ${manifestFile} (uri ${releaseUrl}/${name})`);
  console.log(`install:  kubectl krew install --manifest=${manifestFile} --archive=${archive}`);
}

main();
