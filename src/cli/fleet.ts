// `loopguard doctor --context a --context b …` / `--all-contexts`: the doctor's scan of several clusters of one
// kubeconfig, each context with its own Kubernetes credentials and its own CLB client (rate and retries as the
// operator's), and one report (fleet-report.ts). All contexts share one Tencent Cloud identity, so one account's
// quota of 20 requests/s per action (docs/tencent-cloud.md §3): at most quota / --cloud-rate-limit contexts are
// scanned at once, and each client's rate adapts when others spend the quota too. A context that cannot be
// scanned (unreachable, credentials refused, RBAC) is a row with its error; the others are still scanned.
import { createCredentialProvider } from '../cloud/index.js';
import { settleAll } from '../runtime/settle.js';
import { packageVersion } from '../version.js';
import { callCounter, probeClbAccess } from './clb-access.js';
import { scanCluster, type CliIo, type DoctorDeps, type DoctorOptions } from './doctor.js';
import { errorText } from './errors.js';
import { buildFleetReport, fleetExitCode, type ClusterOutcome } from './fleet-report.js';
import { fleetContexts, loadKubeconfig } from './kubeconfig.js';
import { renderFleet } from './output/fleet.js';

/** CLB API requests per second per action per account (docs/tencent-cloud.md §3 "Rate limits"). */
const CLB_ACTION_QUOTA = 20;

export async function runFleetDoctor(options: DoctorOptions, contexts: readonly string[] | 'all', io: CliIo, deps: DoctorDeps = {}): Promise<number> {
  const choice = options.kubeconfig ? { kubeconfig: options.kubeconfig } : {};
  const names = fleetContexts(choice, contexts);
  const credentials = deps.credentials ?? createCredentialProvider();
  // One identity for every context: a wrong region or missing credentials is one line before any cluster is read.
  await probeClbAccess(options.clb, credentials);
  const parallel = Math.max(1, Math.floor(CLB_ACTION_QUOTA / options.clb.rateLimit));
  // One progress bar per cluster at once would garble the terminal: the roll-up is the progress report here.
  const quiet = { ...options, progress: false };
  const settled = await settleAll(names, parallel, async (context): Promise<ClusterOutcome> => {
    let server: string | undefined;
    try {
      const loaded = loadKubeconfig({ ...choice, context });
      server = loaded.server;
      const report = await scanCluster(quiet, loaded, { credentials, calls: callCounter(), io, ...(deps.now ? { now: deps.now } : {}) });
      return { cluster: context, server, report };
    } catch (err) {
      return { cluster: context, ...(server ? { server } : {}), error: errorText(err) };
    }
  });
  const outcomes = settled.map((r, i): ClusterOutcome => (r.status === 'fulfilled' ? r.value : { cluster: names[i] ?? '', error: errorText(r.reason) }));
  const report = buildFleetReport(outcomes, deps.now?.() ?? new Date());
  io.stdout.write(renderFleet(report, options.output, packageVersion()));
  return fleetExitCode(report);
}
