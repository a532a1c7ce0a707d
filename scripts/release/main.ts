// `npm run release [-- --release-url URL]`: every file a release publishes, into dist/release/:
//   - kubectl-loopguard_<version>_<os>_<arch>.tar.gz for linux and darwin on amd64 and arm64: the CLI as a Node
//     single executable (scripts/plugin/sea.ts) made from the Node npm package of that platform
//     (scripts/release/platforms.ts), with LICENSE and THIRD_PARTY_LICENSES. Only the binary for this machine
//     (linux/amd64) carries a V8 code cache: a cache cannot be made for another platform. Each binary is checked
//     from its bytes to carry the blob where Node reads it (scripts/release/sea-check.ts), and this machine's runs
//     `version`.
//   - loopguard.yaml: the krew manifest, each platform's uri on the release page and the archive's sha256;
//   - loopguard-<version>.tgz: the Helm chart (`helm package`, helm from scripts/helm/build.sh);
//   - loopguard-image_<version>.oci.tar: the image (`npm run image`) as an OCI archive, and image-digest.txt,
//     the digest of its manifest in that archive;
//   - checksums.txt: the sha256 of every file above, as `sha256sum -c` reads it.
// The uri folder is the project's release page for the version (PROJECT_URL), or --release-url /
// LOOPGUARD_RELEASE_URL. docs/release.md says how to verify and install each; test/integration/release.test.ts
// checks the result with krew's validator and krew.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../lib/bundle.js';
import { bundlePlugin, writePluginLicenses } from '../plugin/bundle.js';
import { buildSea } from '../plugin/sea.js';
import { krewManifest } from '../krew/manifest.js';
import { checksumsText, ociManifestDigest, sha256File, writeTarGz } from './archive.js';
import { nodeBinary } from './node-dist.js';
import { CHECKSUMS, HOST_NODE_PACKAGE, IMAGE_DIGEST, PLATFORMS, PROJECT_URL, RELEASE_DIR, archiveName, imageArchiveName, platformName, releaseUrl as releaseFolder, releaseVersion, type Platform } from './platforms.js';
import { inspectSea, seaProblems } from './sea-check.js';

const WORK = join(ROOT, 'dist', 'release-work');
const ARCHIVED = ['kubectl-loopguard', 'LICENSE', 'THIRD_PARTY_LICENSES'];

const isHost = (p: Platform): boolean => p.os === 'linux' && p.arch === 'amd64' && process.platform === 'linux' && process.arch === 'x64';

function step(what: string): void {
  console.error(`release: ${what}`);
}

/** The executable and archive of one platform; returns the archive's name and sha256. */
function buildPlatform(p: Platform, version: string, script: string, metafile: Parameters<typeof writePluginLicenses>[0]): { name: string; sha256: string } {
  const dir = join(WORK, platformName(p));
  mkdirSync(dir, { recursive: true });
  const target = nodeBinary(p.nodePackage, p.nodeVersion);
  const blobNode = nodeBinary(HOST_NODE_PACKAGE, p.nodeVersion);
  const codeCache = isHost(p);
  step(`${platformName(p)}: Node ${p.nodeVersion} (${p.nodePackage}), ${codeCache ? 'with' : 'without'} a code cache`);
  const out = join(dir, 'kubectl-loopguard');
  const blob = buildSea({ script, blobNode, target, codeCache, macho: p.os === 'darwin', workDir: dir, out });
  const problems = seaProblems(inspectSea(readFileSync(out)), { format: p.os === 'darwin' ? 'macho' : 'elf', arch: p.arch === 'amd64' ? 'x64' : 'arm64', blob });
  if (problems.length > 0) throw new Error(`${out}: ${problems.join('; ')}`);
  if (codeCache) {
    const line = execFileSync(out, ['version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } }).trim();
    if (!line.startsWith(`loopguard ${version.slice(1)} `)) throw new Error(`${out} version printed ${JSON.stringify(line)}`);
  }
  copyFileSync(join(ROOT, 'LICENSE'), join(dir, 'LICENSE'));
  writePluginLicenses(metafile, p.nodeVersion, join(dir, 'THIRD_PARTY_LICENSES'));
  const name = archiveName(version, p);
  writeTarGz(join(RELEASE_DIR, name), dir, ARCHIVED);
  return { name, sha256: sha256File(join(RELEASE_DIR, name)) };
}

/** The last line of a script's stdout (helm/build.sh prints helm's path there). */
function lastLine(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
}

function helmChart(version: string): void {
  const chart = readFileSync(join(ROOT, 'charts/loopguard/Chart.yaml'), 'utf8');
  const chartVersion = /^version:\s*(\S+)/m.exec(chart)?.[1];
  if (`v${chartVersion}` !== version) throw new Error(`charts/loopguard/Chart.yaml version ${chartVersion} is not package.json's ${version}`);
  const helm = lastLine('bash', ['scripts/helm/build.sh']);
  step(`helm package charts/loopguard (${helm})`);
  execFileSync(helm, ['package', join(ROOT, 'charts/loopguard'), '--destination', RELEASE_DIR], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** `npm run image`, then the image saved as an OCI archive; returns its manifest digest (from the archive's index.json). */
function image(version: string): string {
  step('npm run image (scripts/image/build.sh)');
  const built = execFileSync('bash', ['scripts/image/build.sh'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const ref = /^IMAGE=(.+)$/m.exec(built)?.[1];
  if (!ref) throw new Error('scripts/image/build.sh printed no IMAGE= line');
  const archive = join(RELEASE_DIR, imageArchiveName(version));
  step(`podman save --format oci-archive ${ref}`);
  const saved = spawnSync(join(ROOT, 'scripts/image/podman.sh'), ['save', '--quiet', '--format', 'oci-archive', '--output', archive, ref], { encoding: 'utf8' });
  if (saved.status !== 0) throw new Error(`podman save failed (${saved.status ?? saved.signal}): ${saved.stderr}`);
  return ociManifestDigest(archive);
}

async function main(): Promise<void> {
  const started = Date.now();
  const { values } = parseArgs({ options: { 'release-url': { type: 'string' } } });
  const version = releaseVersion();
  const releaseUrl = releaseFolder(version, values['release-url'] ?? process.env['LOOPGUARD_RELEASE_URL']);
  rmSync(RELEASE_DIR, { recursive: true, force: true });
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(RELEASE_DIR, { recursive: true });
  mkdirSync(WORK, { recursive: true });

  step('bundling the CLI');
  const { script, metafile } = await bundlePlugin(WORK);
  const archives = PLATFORMS.map((p) => ({ os: p.os, arch: p.arch, ...buildPlatform(p, version, script, metafile) }));
  writeFileSync(
    join(RELEASE_DIR, 'loopguard.yaml'),
    krewManifest(readFileSync(join(ROOT, 'plugins/loopguard.yaml'), 'utf8'), {
      version,
      homepage: PROJECT_URL,
      releaseUrl,
      archives,
      writtenBy: `Written by \`npm run release\` from plugins/loopguard.yaml for loopguard ${version}.`,
    }),
  );
  helmChart(version);
  writeFileSync(join(RELEASE_DIR, IMAGE_DIGEST), `${image(version)}\n`);

  const files = readdirSync(RELEASE_DIR).filter((f) => f !== CHECKSUMS);
  writeFileSync(join(RELEASE_DIR, CHECKSUMS), checksumsText(files.map((name) => ({ name, sha256: sha256File(join(RELEASE_DIR, name)) }))));
  rmSync(WORK, { recursive: true, force: true });
  console.log(`release ${version} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${RELEASE_DIR}`);
  for (const f of readdirSync(RELEASE_DIR)) console.log(`  ${f}`);
  console.log(`uris under ${releaseUrl}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
