// scripts/lib/go-tool.sh builds a Go tool once per version into the cache. On a fresh machine two integration suites
// side by side need the same tool (coredns and dns-managed both run scripts/coredns/build.sh): the second build used to
// remove the first one's "$out.tmp" under it, and both suites failed. With the lock, the second waits and finds the
// tool built. test/controlplane/build.sh (kube-apiserver and etcd) takes the same lock. `go` here is a stand-in on PATH
// that takes a moment, counts its runs and writes the binary `go install` (into GOBIN) or `go build -o` would (the
// real builds take minutes).
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

const FAKE_GO = `#!/bin/sh
echo run >> "$RUNS"
sleep 0.5
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
# go install PKG@VERSION: the binary is named after the package's last element
[ -n "$out" ] || { pkg=\${prev%@*}; out="$GOBIN/\${pkg##*/}"; }
printf '#!/bin/sh\\n' > "$out"
chmod +x "$out"
`;

function build(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const coredns = join(REPO_ROOT, 'scripts/coredns/build.sh');
const COREDNS_VERSION = /^COREDNS_VERSION=(\S+)$/m.exec(readFileSync(coredns, 'utf8'))?.[1] ?? '(no COREDNS_VERSION)';

describe('a Go tool built by two scripts at once', () => {
  it.each([
    // the script, the go runs of one build, the printed directory relative to the cache, the binaries in it
    { name: 'scripts/coredns/build.sh', runs: 1, dir: new RegExp(`^coredns/${COREDNS_VERSION.replaceAll('.', '\\.')}$`), binaries: ['coredns'] },
    { name: 'test/controlplane/build.sh', runs: 2, dir: /^controlplane\/v[\d.]+-v[\d.]+-[0-9a-f]{12}$/, binaries: ['kube-apiserver', 'etcd'] },
  ])('$name is built once; both print its directory', async ({ name, runs, dir: expected, binaries }) => {
    const script = join(REPO_ROOT, name);
    const dir = mkdtempSync(join(tmpdir(), 'lg-go-tool-'));
    try {
      const runLog = join(dir, 'runs');
      writeFileSync(join(dir, 'go'), FAKE_GO);
      chmodSync(join(dir, 'go'), 0o755);
      const env = { PATH: `${dir}:/usr/bin:/bin`, HOME: dir, LOOPGUARD_CACHE: join(dir, 'cache'), RUNS: runLog };
      const [a, b] = await Promise.all([build(script, env), build(script, env)]);
      expect([a.code, b.code, a.stderr.includes('cannot stat') || b.stderr.includes('cannot stat')]).toEqual([0, 0, false]);
      const [first = '', second] = [a, b].map((r) => r.stdout.trim().split('\n').pop() ?? '');
      expect(second).toBe(first);
      expect(relative(join(dir, 'cache'), first)).toMatch(expected);
      expect(binaries.map((bin) => existsSync(join(first, bin)))).toEqual(binaries.map(() => true));
      expect(readFileSync(runLog, 'utf8')).toBe('run\n'.repeat(runs));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
