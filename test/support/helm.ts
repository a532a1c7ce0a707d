// The real helm CLI for the chart tests: scripts/helm/build.sh builds helm.sh/helm/v3/cmd/helm at its pinned version
// from the Go module proxy into ~/.cache/loopguard/helm/<version> (only the first run builds; .ci/run does it in its
// own stage). Gate: without a Go toolchain (build.sh exit 3) the chart suites are skipped with the reason printed,
// unless LOOPGUARD_REQUIRE_HELM_TEST=true (set by .ci/run), which makes that a failure. Any other build failure fails.
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GO_CLIENT_ENV, REPO_ROOT } from '../controlplane/crds.js';

export const CHART_DIR = join(REPO_ROOT, 'charts', 'loopguard');
const BUILD = join(REPO_ROOT, 'scripts', 'helm', 'build.sh');

export type HelmGate = { helm: string; skip?: undefined } | { helm?: undefined; skip: string };

export function helmBinary(suite: string): HelmGate {
  const built = spawnSync('bash', [BUILD], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 20 * 60_000 });
  if (built.status === 0) return { helm: built.stdout.trim().split('\n').pop() ?? '' };
  const reason = `${built.stderr ?? ''}`.trim().split('\n').pop() || `scripts/helm/build.sh exited ${built.status ?? built.signal}`;
  if (built.status !== 3) throw new Error(`${suite}: scripts/helm/build.sh failed (exit ${built.status ?? built.signal}): ${reason}`);
  if (process.env['LOOPGUARD_REQUIRE_HELM_TEST'] === 'true') throw new Error(`${suite}: LOOPGUARD_REQUIRE_HELM_TEST=true, but ${reason}`);
  console.warn(`[loopguard] SKIPPING ${suite}: ${reason}`);
  return { skip: reason };
}

export interface HelmRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** helm's state (cache, config, data) in a throwaway place: the tests never read or write ~/.config/helm. */
function helmEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const home = join(tmpdir(), 'loopguard-helm-home');
  return {
    ...process.env,
    ...GO_CLIENT_ENV,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    ...env,
  };
}

/** Runs helm, from the checkout. */
export function runHelm(helm: string, args: string[], env: NodeJS.ProcessEnv = {}): HelmRun {
  const r = spawnSync(helm, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: helmEnv(env) });
  return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/**
 * Runs a README line as a user types it (e.g. `helm template … | kubectl apply --dry-run=server -f -`): bash with
 * pipefail, from the checkout, with this helm first on PATH and `kubeconfig` as KUBECONFIG.
 */
export function runHelmLine(helm: string, line: string, kubeconfig: string): HelmRun {
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', line], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
    env: helmEnv({ PATH: `${dirname(helm)}:${process.env['PATH'] ?? ''}`, KUBECONFIG: kubeconfig }),
  });
  return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
