// `loopguard --version` and the start-up log line say which loopguard runs: package.json's version and the commit
// read from the checkout with git, else "unknown" (a bundle has both baked in: test/unit/operator-bundle.test.ts).
import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatVersion, readBuildInfo } from '../../src/version.js';

const REPO = new URL('../../', import.meta.url);
const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(new URL('package.json', REPO), 'utf8')) as { version: string };

function checkoutCommit(): string {
  const cwd = REPO.pathname;
  const head = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd, encoding: 'utf8' }).stdout.trim();
  return spawnSync('git', ['diff', '--quiet', 'HEAD', '--'], { cwd }).status === 0 ? head : `${head}-dirty`;
}

/** A fake install outside git: <dir>/package.json and <dir>/dist/version.js's URL. */
function install(): { url: URL; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-version-'));
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'loopguard', version: '9.8.7' }));
  return { url: pathToFileURL(join(dir, 'dist', 'version.js')), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('build info', () => {
  it('from a checkout: package.json version and git HEAD (-dirty with local changes)', () => {
    expect(readBuildInfo()).toEqual({ version, commit: checkoutCommit() });
  });

  it('"unknown" outside a git checkout', () => {
    const { url, cleanup } = install();
    try {
      expect(readBuildInfo(url)).toEqual({ version: '9.8.7', commit: 'unknown' });
    } finally {
      cleanup();
    }
  });

  it('formats as `loopguard <version> (commit <commit>)`', () => {
    expect(formatVersion({ version: '0.1.0', commit: 'abc1234def56' })).toBe('loopguard 0.1.0 (commit abc1234def56)');
  });
});

describe('loopguard', () => {
  it('--version prints the version and commit, and nothing else', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', MAIN, '--version'], { encoding: 'utf8', timeout: 30_000 });
    expect({ status: res.status, stdout: res.stdout, stderr: res.stderr }).toEqual({
      status: 0,
      stdout: `loopguard ${version} (commit ${checkoutCommit()})\n`,
      stderr: '',
    });
  });

  it('logs version and commit in its start-up line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopguard-version-'));
    const kubeconfig = join(dir, 'kubeconfig');
    // Nothing listens on port 1: the operator starts, logs its start-up line and retries the unreachable CLB API.
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
    );
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, `--kubeconfig=${kubeconfig}`, '--region=ap-guangzhou', '--clb-endpoint=127.0.0.1:1', '--clb-protocol=http://', '--probe-port=0', '--leader-elect=false', '--namespace=loopguard-system'],
      { env: { PATH: process.env['PATH'] ?? '', TENCENTCLOUD_SECRET_ID: 'AKIDtest', TENCENTCLOUD_SECRET_KEY: 'secret' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no start-up line in 30 s:\n${out}`)), 30_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const found = out
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => l['message'] === 'Starting loopguard');
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        });
      });
      expect(line).toMatchObject({ version, commit: checkoutCommit() });
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
