// Wiring only: configuration, clients, the operator, signals. Everything else lives in src/operator.ts.
// Start-up fails fast, with one line naming the cause and the fix, on what only a configuration change can
// fix (flags, kubeconfig, probe port, CLB protocol/region/credentials); what may heal is retried while
// /readyz says why it is false (see runtime/cloud-health.ts and runtime/leader-election.ts).
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import type { KubeConfig } from '@kubernetes/client-node';
import { createCredentialProvider, TencentClbClient } from './cloud/index.js';
import { PooledKubeConfig } from './kube/pooled-kubeconfig.js';
import { Operator } from './operator.js';
import { CloudHealth } from './runtime/cloud-health.js';
import {
  ConfigError,
  detectRuntimeEnvironment,
  loadConfig,
  resolveRuntimeDefaults,
  usage,
  type OperatorConfig,
} from './runtime/config.js';
import { createLogger } from './runtime/logger.js';
import { Metrics } from './runtime/metrics.js';
import { DEFAULT_UNWIND_MS } from './runtime/work-queue.js';
import { formatVersion, readBuildInfo } from './version.js';

// V8 sizes the young generation and lets the old one grow for the host's memory, not the pod's: on a large node
// that is 16 MiB semi-spaces and a heap allowed to grow far past what is live, which a long-lived, mostly waiting
// operator does not need. bench/scale at 12,000 targets: RSS peak 356 MiB without this (and the informer's
// managedFields), 201 MiB with it, the live heap being the same ~75 MiB. V8 reads the flag whenever the
// heap grows or collects, so setting it here, before the informer caches fill, takes effect (measured).
setFlagsFromString('--optimize-for-size');
// And the young generation is asked to stay at its initial size: V8 grows it when much of it survives a scavenge,
// and the rounds after the first one, which plan every target again from the cached observations in a burst, made
// it grow to 45 MiB, the RSS peak with 3,000 CLBs under Audit (bench/scale, docs/benchmarks.md). With this flag that
// run measured new space 2.5 MiB (was 16.5); under an Enforce, though, it still reached 15–21 MiB in the bursts after
// Ready (2026-11-26), so this bounds the common case, not every one.
setFlagsFromString('--semi-space-growth-factor=1');

/** A start-up failure that is the user's to fix: printed as one line, no stack. */
class StartupError extends Error {}

/** A CLB id that cannot exist: DescribeLoadBalancers filters by it and answers an empty list, after checking everything else. */
const PROBE_LOAD_BALANCER_ID = 'lb-00000000';
const PROBE_TIMEOUT_MS = 5_000;
/** After the grace period and the unwind: time for the Lease release and stopping the watches. */
const SHUTDOWN_SLACK_MS = 3_000;

function loadKubeConfig(config: OperatorConfig): KubeConfig {
  const kc = new PooledKubeConfig();
  try {
    if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new StartupError(
      `Cannot read kubeconfig ${config.kubeconfig || '(default)'}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}. ` +
        'Fix: point KUBECONFIG or --kubeconfig at a readable kubeconfig file.',
    );
  }
  // loadFromDefault's last resort is an unauthenticated http://localhost:8080, which client-node 2.x refuses anyway.
  if (!kc.getCurrentCluster()) {
    throw new StartupError('No cluster to talk to: no kubeconfig and not in a pod. Fix: set KUBECONFIG or --kubeconfig (npm run dev:up writes one: source .dev/env).');
  }
  return kc;
}

/** The read-only CLI's subcommands: the image has one entrypoint, so `loopguard:0.1.0 doctor -A` runs the CLI. */
const CLI_COMMANDS = new Set(['doctor', 'plan']);

async function main(): Promise<void> {
  if (CLI_COMMANDS.has(process.argv[2] ?? '')) {
    await import('./cli/main.js');
    return;
  }
  // The loopback probe agent (docs/probe.md): the same image, run by the probe DaemonSet.
  if (process.argv[2] === 'probe') {
    await import('./probe/main.js');
    return;
  }
  const build = readBuildInfo();
  if (process.argv.includes('--version')) {
    console.log(formatVersion(build));
    return;
  }
  if (process.argv.includes('--help')) {
    console.log(
      `${formatVersion(build)}: removes Tencent Cloud CLB loopback faults in TKE clusters\n\nflag / environment variable / meaning\n${usage()}\n` +
        `  --${'version'.padEnd(28)} ${''.padEnd(32)} print the version and commit, then exit\n\n` +
        'doctor … | plan …: the read-only CLI instead of the operator (`doctor --help`, README "Read-only scans")\n' +
          'probe …: the loopback probe agent, one per node (`probe --help`, docs/probe.md)',
    );
    return;
  }
  const config = loadConfig(process.argv.slice(2), process.env);
  if (!config.identity) config.identity = `${hostname()}-${randomBytes(3).toString('hex')}`;
  const logger = createLogger({ level: config.logLevel });
  const fatal = (message: string): never => {
    logger.error(`Cannot start: ${message}`);
    // Let the transport flush the line before exiting.
    logger.on('finish', () => process.exit(1));
    logger.end();
    setTimeout(() => process.exit(1), 1_000).unref();
    throw new StartupError(message);
  };

  let kc: KubeConfig;
  try {
    kc = loadKubeConfig(config);
  } catch (err) {
    return fatal((err as Error).message);
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  const where = detectRuntimeEnvironment({ kubeconfig: config.kubeconfig, kubeconfigEnv: process.env['KUBECONFIG'], ...(context ? { context } : {}) });
  const defaults = resolveRuntimeDefaults(config, where);
  const metrics = new Metrics();

  const credentials = createCredentialProvider({ logger });
  const endpoint = config.clbEndpoint ? { endpoint: config.clbEndpoint, protocol: config.clbProtocol === 'http://' ? ('http' as const) : ('https' as const) } : {};
  const region = config.region;
  // The probe's own client: one attempt and a short timeout, so that start-up reports a bad endpoint in seconds.
  const probeClient = new TencentClbClient({
    region,
    credentials,
    ...endpoint,
    requestTimeoutMs: PROBE_TIMEOUT_MS,
    retry: { maxAttempts: 1 },
    throttle: { defaultBudget: { rps: 1 } },
    logger,
    onCall: (e) => metrics.recordCloudCall(e.action, e.outcome, e.code),
  });
  const health = new CloudHealth({ probe: (signal) => probeClient.describeLoadBalancers([PROBE_LOAD_BALANCER_ID], { signal }), logger });
  const clb = new TencentClbClient({
    region,
    credentials,
    ...endpoint,
    throttle: { defaultBudget: { rps: config.cloudRateLimit }, adaptive: config.cloudRateAdaptive },
    logger,
    onCall: (e) => {
      metrics.recordCloudCall(e.action, e.outcome, e.code);
      health.observe(e);
    },
  });

  metrics.watchCloudRate(() => clb.rateLimits());

  logger.info('Starting loopguard', {
    version: build.version,
    commit: build.commit,
    identity: config.identity,
    leaderElect: config.leaderElect,
    region,
    clbEndpoint: `${config.clbEndpoint ? config.clbProtocol : 'https://'}${config.clbEndpoint || 'clb.tencentcloudapi.com'}`,
    kubeconfigContext: context?.name,
    probe: `${config.probeHost}:${config.probePort} (${defaults.probeHostFrom})`,
    metrics: config.metricsSecure ? `https://${config.probeHost}:${config.metricsPort}/metrics (${defaults.metricsSecureFrom})` : `on the probe port (${defaults.metricsSecureFrom})`,
  });
  const there = [config.leaderElect && `Lease ${config.leaseName}`, config.observationCheckpoint && 'observation checkpoint', 'admission params'].filter(Boolean).join(', ');
  logger.info(`loopguard's namespace: ${config.namespace} (${defaults.namespaceFrom}); there: ${there}`);
  const verdict = await health.check(true);
  if (verdict.kind === 'misconfigured') {
    health.stop();
    return fatal(verdict.message);
  }

  let stopping = false;
  const operator = new Operator({
    kc,
    config,
    clb,
    logger,
    metrics,
    enforce: true,
    readiness: [{ name: 'clb-api', check: () => health.problem === undefined, reason: () => health.problem }],
    onLostLeadership: () => {
      logger.error('Leader election lost; exiting so that a fresh process campaigns again');
      process.exit(1);
    },
  });
  // One shutdown per process, whatever arrives after it (npm/tsx may relay the same Ctrl-C or SIGTERM again).
  // Operator.stop drains: in-flight reconciles and their CLB tasks get --shutdown-grace; nothing is aborted
  // before that, and the Lease is released only after.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('Shutting down', { signal, graceMs: config.shutdownGraceMs });
    // An apiserver that stops answering must not keep the process past the drain (the Lease release and the
    // watches have no deadline of their own): the kubelet would SIGKILL it anyway, and `npm start` would hang.
    setTimeout(() => {
      logger.error('Shutdown did not finish in time; exiting without it');
      process.exit(1);
    }, config.shutdownGraceMs + DEFAULT_UNWIND_MS + SHUTDOWN_SLACK_MS).unref();
    health.stop();
    try {
      await operator.stop();
      await probeClient.close();
    } catch (err) {
      logger.error('Shutdown failed', { error: err instanceof Error ? err.message : String(err) });
      process.exit(1);
    }
    logger.info('Stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  try {
    await operator.start();
  } catch (err) {
    if (err instanceof Error && /^(The probe port|The metrics port|Cannot listen on|Cannot read the metrics certificate)/.test(err.message)) return fatal(err.message);
    throw err;
  }
}

main().catch((err: unknown) => {
  if (err instanceof StartupError) return; // already logged; fatal() exits once the line is out
  if (err instanceof ConfigError) {
    // One problem, one line; several are listed one per line.
    const only = err.problems.length === 1 ? `: ${err.problems[0]} ` : `:\n${err.problems.map((p) => `  - ${p}`).join('\n')}\n`;
    console.error(`loopguard: invalid configuration${only}(--help lists every flag)`);
    process.exit(2);
  }
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
