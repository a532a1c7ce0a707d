// `loopguard doctor`: a read-only scan of the cluster the kubeconfig names. Reads the targets and the cluster profile
// from the Kubernetes API (get/list only), the CLBs through the operator's client and observer (read actions only),
// and prints per target the verdict, root cause, the plan Enforce would carry out and the topology alternatives.
// It writes nothing, to the cluster or to a CLB. Exit status: 0 no risk, 1 risk found, 2 could not scan.
import { createCredentialProvider, type CredentialProvider } from '../cloud/index.js';
import { profileFrom, type ProfileFlags } from '../model/cluster-profile.js';
import { callCounter, probeClbAccess, openClbAccess, observeClbs, type ClbSettings } from './clb-access.js';
import { readCluster } from './cluster-reads.js';
import { loadKubeconfig, type LoadedKubeconfig } from './kubeconfig.js';
import { progressBar, type ProgressStream } from './output/progress.js';
import { render, type OutputFormat } from './output/render.js';
import { exitCodeOf, type Report } from './report.js';
import { scanReport, snapshotTargets } from './scan.js';
import { packageVersion } from '../version.js';
import { targetKey } from '../model/facts.js';
import { DEFAULT_LOOPGUARD_NAMESPACE, measuredLines, readProbe } from './probe-evidence.js';

export interface DoctorOptions extends ProfileFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces: boolean;
  selector?: string;
  /** Where the probe's plan and reports are read (docs/probe.md §11.3); default loopguard-system. */
  loopguardNamespace?: string;
  /** Envoy Gateway's namespace, where Gateways' Services are (docs/gateways.md §2); default envoy-gateway-system. */
  envoyGatewayNamespace?: string;
  clb: ClbSettings;
  output: OutputFormat;
  progress: boolean;
}

export interface CliIo {
  stdout: { write(chunk: string): boolean };
  stderr: ProgressStream;
}

export interface DoctorDeps {
  /** The Tencent Cloud identity; default: the operator's chain (env, credentials file, TKE OIDC, CVM role). */
  credentials?: CredentialProvider;
  now?: () => Date;
}


export async function runDoctor(options: DoctorOptions, io: CliIo, deps: DoctorDeps = {}): Promise<number> {
  const loaded = loadKubeconfig({ ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}), ...(options.context ? { context: options.context } : {}) });
  const credentials = deps.credentials ?? createCredentialProvider();
  // The CLB side first: a wrong region or missing credentials is one line before any listing.
  const calls = callCounter();
  await probeClbAccess(options.clb, credentials, calls.onCall);
  const report = await scanCluster(options, loaded, { credentials, calls, io, ...(deps.now ? { now: deps.now } : {}) });
  io.stdout.write(render(report, options.output, packageVersion()));
  return exitCodeOf(report);
}

export interface ScanDeps {
  credentials: CredentialProvider;
  /** Counts this cluster's CLB calls (the probe's too, when it was made with the same counter). */
  calls: ReturnType<typeof callCounter>;
  io: CliIo;
  now?: () => Date;
}

/** One cluster's report (`loaded`: its context), its scan figures filled in; also one row of the fleet view (fleet.ts). */
export async function scanCluster(options: DoctorOptions, loaded: LoadedKubeconfig, deps: ScanDeps): Promise<Report> {
  const started = Date.now();
  const namespace = options.allNamespaces ? undefined : (options.namespace ?? loaded.namespace ?? 'default');
  const snapshot = await readCluster(loaded.kc, loaded.server, {
    ...(namespace ? { namespace } : {}),
    ...(options.selector ? { selector: options.selector } : {}),
    ...(options.envoyGatewayNamespace ? { envoyGatewayNamespace: options.envoyGatewayNamespace } : {}),
  });
  const profile = profileFrom(snapshot, options);
  const ids = [...new Set(snapshotTargets(snapshot).flatMap((t) => (t.loadBalancerId ? [t.loadBalancerId] : [])))];
  const access = openClbAccess(options.clb, deps.credentials, deps.calls.onCall);
  const bar = progressBar(deps.io.stderr, 'Reading CLBs', ids.length, options.progress);
  let observed;
  try {
    observed = await observeClbs(access.reader, ids, (done) => bar.update(done));
  } finally {
    bar.done();
    await access.close();
  }
  const now = deps.now?.() ?? new Date();
  const report = scanReport({ snapshot, profile, ...observed, now });
  // What the probe agents measured, next to each verdict (docs/probe.md §11.3).
  const measured = measuredLines(await readProbe(loaded.kc, options.loopguardNamespace ?? DEFAULT_LOOPGUARD_NAMESPACE, report.notes), report.targets, now.getTime());
  for (const t of report.targets) {
    const line = measured.get(targetKey(t));
    if (line) t.measured = line;
  }
  report.scan = {
    scope: namespace ? `namespace ${namespace}` : 'all namespaces',
    context: loaded.context,
    clbsRead: ids.length,
    clbCalls: deps.calls.counts.calls,
    throttled: deps.calls.counts.throttled,
    rateLimit: options.clb.rateLimit,
    durationMs: Date.now() - started,
  };
  return report;
}
