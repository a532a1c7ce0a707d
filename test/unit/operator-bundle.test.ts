// The operator's bundle (npm run build:operator), what the image runs: built into a temporary directory and run as
// the image's entrypoint runs it (the image test does the same inside the image, when podman is there).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOperatorBundle } from '../../scripts/build-operator.js';
import { BUNDLE_NODE_OPTIONS } from '../../scripts/lib/bundle.js';

const { version, dependencies } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; dependencies: Record<string, string> };

describe('the operator bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-bundle-'));
  let bundle = '';
  beforeAll(async () => {
    bundle = await buildOperatorBundle(dir, '0123456789ab');
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, [...BUNDLE_NODE_OPTIONS, bundle, ...args], { cwd: tmpdir(), encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '' } });

  it('prints the baked version and commit, with no warning, away from any checkout', () => {
    expect(run('--version')).toMatchObject({ status: 0, stdout: `loopguard ${version} (commit 0123456789ab)\n`, stderr: '' });
  });

  it('bakes a commit that is not one as `unknown` (the build argument is the builder\'s to set)', async () => {
    const other = mkdtempSync(join(tmpdir(), 'loopguard-bundle-'));
    try {
      const file = await buildOperatorBundle(other, '$(rm -rf /)');
      const res = spawnSync(process.execPath, [...BUNDLE_NODE_OPTIONS, file, '--version'], { encoding: 'utf8', timeout: 30_000 });
      expect(res.stdout).toBe(`loopguard ${version} (commit unknown)\n`);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 60_000);

  it('is ASCII only: V8 keeps its source for the life of the process, two bytes a character if one is beyond Latin-1', () => {
    const source = readFileSync(bundle, 'utf8');
    let at = -1;
    for (let i = 0; i < source.length && at < 0; i++) if (source.charCodeAt(i) > 0x7f) at = i;
    expect(at < 0 ? '' : source.slice(Math.max(0, at - 60), at + 10)).toBe('');
  });

  it("leaves out whatwg-url and tr46's table: node-fetch 2 uses Node's URL (1.4 MiB of live heap, issue 40)", () => {
    const source = readFileSync(bundle, 'utf8');
    expect(source).toContain('node_modules/node-fetch/');
    expect(['node_modules/whatwg-url/', 'node_modules/tr46/'].filter((m) => source.includes(m))).toEqual([]);
  });

  it('holds the read-only CLI too (the image runs `doctor` and `plan` through it)', () => {
    const res = run('doctor', '--help');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Usage: loopguard doctor/);
  });

  it('carries loopguard\'s license and that of every production dependency it bundles', () => {
    expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toMatch(/Apache License/);
    const licenses = readFileSync(join(dir, 'THIRD_PARTY_LICENSES'), 'utf8');
    for (const dep of Object.keys(dependencies)) expect({ dep, listed: licenses.includes(`\n== ${dep}@`) }).toEqual({ dep, listed: true });
  });
});
