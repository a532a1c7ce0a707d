// scripts/lib/go-tool.sh builds a Go tool once per version into the cache. On a fresh machine two integration suites
// side by side need the same tool (coredns and dns-managed both run scripts/coredns/build.sh): the second build used to
// remove the first one's "$out.tmp" under it, and both suites failed. With the lock, the second waits and finds the
// tool built. `go` here is a stand-in on PATH that takes a moment and counts its runs (the real build takes minutes).
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

const SCRIPT = join(REPO_ROOT, 'scripts/coredns/build.sh');

function build(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a Go tool built by two scripts at once', () => {
  it('is built once; both print its directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lg-go-tool-'));
    try {
      const runs = join(dir, 'runs');
      const fakeGo = join(dir, 'go');
      // `go install … pkg@version` writes the binary into GOBIN.
      writeFileSync(fakeGo, `#!/bin/sh\necho run >> ${JSON.stringify(runs)}\nsleep 0.5\nprintf '#!/bin/sh\\n' > "$GOBIN/coredns"\nchmod +x "$GOBIN/coredns"\n`);
      chmodSync(fakeGo, 0o755);
      const env = { PATH: `${dir}:/usr/bin:/bin`, HOME: dir, LOOPGUARD_CACHE: join(dir, 'cache') };
      const [a, b] = await Promise.all([build(env), build(env)]);
      expect([a.code, b.code, a.stderr.includes('cannot stat') || b.stderr.includes('cannot stat')]).toEqual([0, 0, false]);
      const version = /^COREDNS_VERSION=(\S+)$/m.exec(readFileSync(SCRIPT, 'utf8'))?.[1];
      const out = join(dir, 'cache', 'coredns', version ?? '(no COREDNS_VERSION)');
      expect([a, b].map((r) => r.stdout.trim().split('\n').pop())).toEqual([out, out]);
      expect(readFileSync(runs, 'utf8')).toBe('run\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
