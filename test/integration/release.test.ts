// `npm run release` (issue 37 #6), run once, then checked as a user and krew-index would check it:
//   - dist/release/ holds every file a release publishes: four plugin archives (linux and darwin, amd64 and arm64),
//     the krew manifest, the Helm chart, the image as an OCI archive and its digest, checksums.txt;
//   - `sha256sum -c checksums.txt` passes and covers every other file;
//   - krew's own validator (scripts/krew/build.sh) accepts the manifest: structurally, and by installing all four
//     platforms from their uris (served on 127.0.0.1, as the release page would serve them);
//   - `kubectl krew install --manifest --archive` installs the linux/amd64 plugin into a fresh KREW_ROOT, and
//     `kubectl loopguard version` runs from there with only kubectl beside it;
//   - each binary, runnable here or not, carries the SEA blob where Node reads it, for its format and CPU
//     (scripts/release/sea-check.ts); only this machine's has a code cache;
//   - the chart is charts/loopguard at package.json's version; the image archive's manifest has the recorded digest
//     and is the image `npm run image` built.
// Gates: helm and krew (Go), podman (scripts/image/build.sh --check): skipped with the reason printed when one cannot
// be had here, unless .ci/run's LOOPGUARD_REQUIRE_*_TEST makes that a failure. In CI `npm run image` ran before, so
// the release's image build reuses its layers.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse, parseDocument } from 'yaml';
import { ociManifestDigest } from '../../scripts/release/archive.js';
import { CHECKSUMS, IMAGE_DIGEST, PLATFORMS, RELEASE_DIR, archiveName, imageArchiveName, releaseVersion } from '../../scripts/release/platforms.js';
import { inspectSea, seaProblems } from '../../scripts/release/sea-check.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { helmBinary } from '../support/helm.js';
import { krewTools, kubectlOnlyPath, run } from '../support/krew.js';
import { holdForSuite } from '../support/exclusive.js';

// `npm run image`/`build:krew`/`release` write the checkout's dist/ and image tag: one such suite at a time.
holdForSuite('builds');

const SUITE = 'test/integration/release.test.ts';
const VERSION = releaseVersion();
const PODMAN = join(REPO_ROOT, 'scripts/image/podman.sh');

function podmanGate(): string | undefined {
  const check = spawnSync('bash', [join(REPO_ROOT, 'scripts/image/build.sh'), '--check'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 15 * 60_000 });
  if (check.status === 0) return undefined;
  const reason = `${check.stderr ?? ''}`.trim().split('\n').pop() || `build.sh --check exited ${check.status ?? check.signal}`;
  if (check.status !== 3) throw new Error(`${SUITE}: scripts/image/build.sh --check failed (exit ${check.status ?? check.signal}): ${reason}`);
  if (process.env['LOOPGUARD_REQUIRE_IMAGE_TEST'] === 'true') throw new Error(`${SUITE}: LOOPGUARD_REQUIRE_IMAGE_TEST=true, but ${reason}`);
  console.warn(`[loopguard] SKIPPING ${SUITE}: ${reason}`);
  return reason;
}

const krew = krewTools(SUITE);
const helm = helmBinary(SUITE);
const skip = krew.skip ?? helm.skip ?? podmanGate();
const suite = skip ? describe.skip : describe;




const archives = PLATFORMS.map((p) => ({ ...p, name: archiveName(VERSION, p) }));
const manifestFile = join(RELEASE_DIR, 'loopguard.yaml');
const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

interface Manifest {
  spec: { version: string; homepage: string; platforms: Array<{ selector: { matchLabels: { os: string; arch: string } }; uri: string; sha256: string }> };
}

suite(`npm run release${skip ? ` (skipped: ${skip})` : ''}`, () => {
  /** Each archive unpacked: platform name → directory. */
  const unpacked = new Map<string, string>();
  // Every directory the suite unpacks or installs into lives under one, removed at the end: the four unpacked
  // archives alone are about 0.5 GB, and left behind they came to tens of GB on a machine that runs the suite often.
  let scratchRoot: string | undefined;
  const scratch = (prefix: string): string => mkdtempSync(join((scratchRoot ??= mkdtempSync(join(tmpdir(), 'lg-release-'))), prefix));
  afterAll(() => {
    if (scratchRoot) rmSync(scratchRoot, { recursive: true, force: true });
  });

  beforeAll(async () => {
    const r = await run('npm', ['run', 'release'], { cwd: REPO_ROOT, env: { ...process.env } as Record<string, string>, timeoutMs: 1_800_000 });
    if (r.code !== 0) throw new Error(`npm run release exited ${r.code}:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
    for (const a of archives) {
      const dir = scratch(`${a.os}-${a.arch}-`);
      const x = await run('tar', ['-xzf', join(RELEASE_DIR, a.name), '-C', dir], { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } });
      expect(x.code).toBe(0);
      unpacked.set(`${a.os}/${a.arch}`, dir);
    }
  }, 1_900_000);

  it('writes every file a release publishes, and nothing else', () => {
    expect(readdirSync(RELEASE_DIR).sort()).toEqual(
      [...archives.map((a) => a.name), 'loopguard.yaml', `loopguard-${VERSION.slice(1)}.tgz`, imageArchiveName(VERSION), IMAGE_DIGEST, CHECKSUMS].sort(),
    );
    expect(archives.map((a) => `${a.os}/${a.arch}`)).toEqual(['linux/amd64', 'linux/arm64', 'darwin/amd64', 'darwin/arm64']);
  });

  it('sha256sum -c checksums.txt passes for every other file', async () => {
    const r = await run('sha256sum', ['-c', CHECKSUMS], { cwd: RELEASE_DIR, env: { PATH: process.env['PATH'] ?? '' } });
    expect(r.code).toBe(0);
    const ok = r.stdout.trim().split('\n').sort();
    expect(ok).toEqual(readdirSync(RELEASE_DIR).filter((f) => f !== CHECKSUMS).sort().map((f) => `${f}: OK`));
  });

  it('the manifest names the project homepage and, per platform, its archive on the release page with its sha256', () => {
    const m = parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    expect(m.spec.version).toBe(VERSION);
    expect(m.spec.homepage).toBe('https://github.com/loopguard/loopguard');
    expect(m.spec.platforms.map((p) => ({ os: p.selector.matchLabels.os, arch: p.selector.matchLabels.arch, uri: p.uri, sha256: p.sha256 }))).toEqual(
      archives.map((a) => ({ os: a.os, arch: a.arch, uri: `https://github.com/loopguard/loopguard/releases/download/${VERSION}/${a.name}`, sha256: sha256(join(RELEASE_DIR, a.name)) })),
    );
  });

  it("passes krew's manifest validator (structure)", async () => {
    const r = await run(krew.validator!, ['-manifest', manifestFile, '-skip-install'], { cwd: RELEASE_DIR, env: { PATH: process.env['PATH'] ?? '' } });
    expect(r.stderr).toContain('structural validation OK');
    expect(r.code).toBe(0);
  });

  it("passes krew's validator installing all four platforms from their uris", async () => {
    // The manifest with the release page's host swapped for 127.0.0.1: the validator downloads each archive,
    // checks its sha256, installs it (krew's OS/arch overridden per platform) and looks for the LICENSE.
    const server: Server = createServer((req, res) => {
      const name = (req.url ?? '').slice(1);
      if (!archives.some((a) => a.name === name)) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': statSync(join(RELEASE_DIR, name)).size });
      createReadStream(join(RELEASE_DIR, name)).pipe(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const dir = scratch('manifest-');
      const doc = parseDocument(readFileSync(manifestFile, 'utf8'));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      archives.forEach((a, i) => doc.setIn(['spec', 'platforms', i, 'uri'], `${base}/${a.name}`));
      writeFileSync(join(dir, 'loopguard.yaml'), doc.toString());
      const r = await run(krew.validator!, ['-manifest', join(dir, 'loopguard.yaml')], { cwd: dir, env: { PATH: kubectlOnlyPath({ 'kubectl-krew': krew.krew! }) }, timeoutMs: 600_000 });
      expect(r.stderr).toContain('all 4 spec.platforms installed fine');
      expect(r.code).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 660_000);

  it('kubectl krew install --manifest --archive (linux/amd64) into a fresh KREW_ROOT; kubectl loopguard version runs', async () => {
    const root = scratch('krew-root-');
    const cwd = scratch('cwd-');
    const bin = kubectlOnlyPath({ 'kubectl-krew': krew.krew! });
    const home = scratch('home-');
    const archive = join(RELEASE_DIR, archives[0]!.name);
    const installed = await run('kubectl', ['krew', 'install', `--manifest=${manifestFile}`, `--archive=${archive}`], { cwd, env: { PATH: bin, HOME: home, KREW_ROOT: root } });
    expect(installed.stderr).toContain('Installed plugin: loopguard');
    expect(installed.code).toBe(0);
    expect(readdirSync(join(root, 'store', 'loopguard', VERSION)).sort()).toEqual(['LICENSE', 'THIRD_PARTY_LICENSES', 'kubectl-loopguard']);
    // As krew tells its users: its bin directory on PATH, in front of kubectl's; nothing else (no node, npm, tsx).
    const r = await run('kubectl', ['loopguard', 'version'], { cwd, env: { PATH: `${join(root, 'bin')}:${bin}`, HOME: home, KREW_ROOT: root } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^loopguard ${VERSION.slice(1).replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}(-dirty)?\\)\\n$`));
  });

  it('each archive holds the binary of its platform with the SEA blob where Node reads it, LICENSE and the licenses of what it bundles', () => {
    const blobs = new Map<string, Buffer>();
    for (const a of archives) {
      const dir = unpacked.get(`${a.os}/${a.arch}`)!;
      expect(readdirSync(dir).sort()).toEqual(['LICENSE', 'THIRD_PARTY_LICENSES', 'kubectl-loopguard']);
      expect(statSync(join(dir, 'kubectl-loopguard')).mode & 0o111).toBe(0o111);
      const got = inspectSea(readFileSync(join(dir, 'kubectl-loopguard')));
      expect(seaProblems(got, { format: a.os === 'darwin' ? 'macho' : 'elf', arch: a.arch === 'amd64' ? 'x64' : 'arm64' })).toEqual([]);
      blobs.set(`${a.os}/${a.arch}`, got.blob!);
      // The Node a binary is made of is named in its licenses.
      expect(readFileSync(join(dir, 'THIRD_PARTY_LICENSES'), 'utf8')).toContain(`== Node.js v${a.nodeVersion} (the runtime the binary is built from)`);
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'));
      // The darwin ones are not signed: postject's injection drops Node's signature (docs/release.md: codesign).
      if (a.os === 'darwin') expect(got.codeSignature).toBe(false);
    }
    // Only this machine's binary has a code cache: made without one, the same script gives the same blob for the same Node.
    expect(blobs.get('darwin/amd64')!.equals(blobs.get('darwin/arm64')!)).toBe(true);
    expect(blobs.get('linux/amd64')!.length).toBeGreaterThan(blobs.get('linux/arm64')!.length);
  });

  it('the chart is charts/loopguard at the release version', async () => {
    const r = await run(helm.helm!, ['show', 'chart', join(RELEASE_DIR, `loopguard-${VERSION.slice(1)}.tgz`)], { cwd: RELEASE_DIR, env: { PATH: process.env['PATH'] ?? '' } });
    expect(r.code).toBe(0);
    expect(parse(r.stdout)).toMatchObject({ name: 'loopguard', version: VERSION.slice(1), appVersion: VERSION.slice(1) });
  });

  it("the image archive's manifest has the recorded digest and is the image npm run image built", async () => {
    const archive = join(RELEASE_DIR, imageArchiveName(VERSION));
    const digest = readFileSync(join(RELEASE_DIR, IMAGE_DIGEST), 'utf8');
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}\n$/);
    expect(ociManifestDigest(archive)).toBe(digest.trim());
    const blob = (d: string): Buffer => {
      const r = spawnSync('tar', ['-xOf', archive, `blobs/sha256/${d.replace('sha256:', '')}`], { maxBuffer: 1 << 30 });
      expect(r.status).toBe(0);
      return r.stdout;
    };
    const manifest = blob(digest.trim());
    expect(`sha256:${createHash('sha256').update(manifest).digest('hex')}`).toBe(digest.trim());
    const config = (JSON.parse(manifest.toString('utf8')) as { config: { digest: string } }).config.digest;
    // The config digest is the image ID: the archive holds the image built and tagged by npm run image.
    const id = await run(PODMAN, ['image', 'inspect', '--format', '{{.Id}}', `localhost/loopguard:${VERSION.slice(1)}`], { cwd: REPO_ROOT, env: { ...process.env } as Record<string, string> });
    expect(id.code).toBe(0);
    expect(config).toBe(`sha256:${id.stdout.trim()}`);
  });
});
