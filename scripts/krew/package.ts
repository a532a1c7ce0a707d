// `npm run build:krew [-- --release-url URL]`: the krew plugin — the single binary (npm run build:plugin, run
// first), an archive holding it with LICENSE and THIRD_PARTY_LICENSES, and the manifest that points at that
// archive: dist/krew/kubectl-loopguard_<version>_linux_amd64.tar.gz and dist/krew/loopguard.yaml, made from
// plugins/loopguard.yaml with spec.version from package.json and the archive's uri and sha256.
// The uri is where a release publishes the archive: --release-url (or LOOPGUARD_RELEASE_URL) is the folder the
// archive goes in. Without it the uri is a placeholder under example.invalid: until then, install with
// `kubectl krew install --manifest=dist/krew/loopguard.yaml --archive=dist/krew/<archive>`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDocument } from 'yaml';
import { REPO_ROOT } from '../../test/controlplane/crds.js';

const OUT = join(REPO_ROOT, 'dist', 'krew');
/** The one platform the binary is built for: the project's Node is linux-x64 (krew names it linux/amd64). */
const OS = 'linux';
const ARCH = 'amd64';
const PLACEHOLDER_URL = 'https://example.invalid/loopguard/releases';

function main(): void {
  const { values } = parseArgs({ options: { 'release-url': { type: 'string' }, 'no-build': { type: 'boolean', default: false } } });
  const version = `v${(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
  const releaseUrl = (values['release-url'] ?? process.env['LOOPGUARD_RELEASE_URL'] ?? `${PLACEHOLDER_URL}/${version}`).replace(/\/+$/, '');

  if (!values['no-build']) {
    execFileSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/plugin/build.ts')], { stdio: 'inherit', cwd: REPO_ROOT });
  }

  rmSync(OUT, { recursive: true, force: true });
  const stage = join(OUT, 'stage');
  mkdirSync(stage, { recursive: true });
  copyFileSync(join(REPO_ROOT, 'dist', 'kubectl-loopguard'), join(stage, 'kubectl-loopguard'));
  copyFileSync(join(REPO_ROOT, 'LICENSE'), join(stage, 'LICENSE'));
  copyFileSync(join(REPO_ROOT, 'dist', 'plugin', 'THIRD_PARTY_LICENSES'), join(stage, 'THIRD_PARTY_LICENSES'));
  const archiveName = `kubectl-loopguard_${version}_${OS}_${ARCH}.tar.gz`;
  const archive = join(OUT, archiveName);
  // Same bytes for the same inputs: fixed order, owner and time, and gzip without a name or time stamp.
  const tar = execFileSync(
    'tar',
    ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', stage, '-cf', '-', 'kubectl-loopguard', 'LICENSE', 'THIRD_PARTY_LICENSES'],
    { maxBuffer: 1 << 30 },
  );
  writeFileSync(archive, execFileSync('gzip', ['-n', '-9'], { input: tar, maxBuffer: 1 << 30 }));
  rmSync(stage, { recursive: true });
  const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');

  const manifest = parseDocument(readFileSync(join(REPO_ROOT, 'plugins', 'loopguard.yaml'), 'utf8'));
  manifest.setIn(['spec', 'version'], version);
  const platforms = manifest.getIn(['spec', 'platforms']) as { items: unknown[] };
  if (platforms.items.length !== 1) throw new Error('plugins/loopguard.yaml: expected one platform (linux/amd64), the one the binary is built for');
  manifest.setIn(['spec', 'platforms', 0, 'uri'], `${releaseUrl}/${archiveName}`);
  manifest.setIn(['spec', 'platforms', 0, 'sha256'], sha256);
  // The version line's "set by" comment is about the source, not this output.
  const versionNode = manifest.getIn(['spec', 'version'], true) as { comment?: string | null };
  versionNode.comment = null;
  (manifest.contents as { items: { key: { commentBefore?: string | null } }[] }).items[0]!.key.commentBefore = null;
  manifest.commentBefore = ' Written by `npm run build:krew` from plugins/loopguard.yaml, for the archive beside it.';
  const manifestFile = join(OUT, 'loopguard.yaml');
  writeFileSync(manifestFile, manifest.toString());

  console.log(`archive:  ${archive} (sha256 ${sha256})`);
  console.log(`manifest: ${manifestFile} (uri ${releaseUrl}/${archiveName})`);
  console.log(`install:  kubectl krew install --manifest=${manifestFile} --archive=${archive}`);
}

main();
