// The real krew CLI and krew's manifest validator for the plugin test: scripts/krew/build.sh builds
// sigs.k8s.io/krew/cmd/krew and cmd/validate-krew-manifest at the pinned version from the Go module proxy into
// ~/.cache/loopguard/krew/<version> (only the first run builds; .ci/run does it in its own stage). Gate as for helm
// (test/support/helm.ts): without a Go toolchain (build.sh exit 3) the krew tests are skipped with the reason
// printed, unless LOOPGUARD_REQUIRE_KREW_TEST=true (set by .ci/run), which makes that a failure.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

const BUILD = join(REPO_ROOT, 'scripts', 'krew', 'build.sh');

export type KrewGate = { krew: string; validator: string; skip?: undefined } | { krew?: undefined; validator?: undefined; skip: string };

export function krewTools(suite: string): KrewGate {
  const built = spawnSync('bash', [BUILD], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 20 * 60_000 });
  if (built.status === 0) {
    const dir = built.stdout.trim().split('\n').pop() ?? '';
    return { krew: join(dir, 'krew'), validator: join(dir, 'validate-krew-manifest') };
  }
  const reason = `${built.stderr ?? ''}`.trim().split('\n').pop() || `scripts/krew/build.sh exited ${built.status ?? built.signal}`;
  if (built.status !== 3) throw new Error(`${suite}: scripts/krew/build.sh failed (exit ${built.status ?? built.signal}): ${reason}`);
  if (process.env['LOOPGUARD_REQUIRE_KREW_TEST'] === 'true') throw new Error(`${suite}: LOOPGUARD_REQUIRE_KREW_TEST=true, but ${reason}`);
  console.warn(`[loopguard] SKIPPING ${suite}: ${reason}`);
  return { skip: reason };
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (never rejects): its exit code (-1 when it could not run or timed out) and output. */
export function run(cmd: string, args: string[], opts: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** A directory holding only a `kubectl` link (and what `extra` adds): PATH for a machine without Node. */
export function kubectlOnlyPath(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'lg-kubectl-bin-'));
  const kubectl = (process.env['PATH'] ?? '').split(':').map((d) => join(d, 'kubectl')).find((f) => {
    try {
      return statSync(f).isFile();
    } catch {
      return false;
    }
  });
  if (!kubectl) throw new Error('kubectl is not on PATH');
  symlinkSync(kubectl, join(dir, 'kubectl'));
  for (const [name, target] of Object.entries(extra)) symlinkSync(target, join(dir, name));
  return dir;
}
