// `loopguard probe`: the loopback probe agent (docs/probe.md), one per node (a DaemonSet). Wiring only: flags and
// the downward API, the kubeconfig, the plan watch, the agent loop and signals.
import { parseArgs } from 'node:util';
import { PooledKubeConfig } from '../kube/pooled-kubeconfig.js';
import { createLogger } from '../runtime/logger.js';
import { ProbeAgent } from './agent.js';
import { ReportWriter, watchPlan } from './kube.js';
import { allowedRanges, WINDOW_SECONDS } from './plan.js';

/** Defaults, justified in docs/probe.md "Rates". */
export const DEFAULT_RATE_PER_SECOND = 5;
export const DEFAULT_MIN_INTERVAL_SECONDS = 10;

const USAGE = `loopguard probe: measures the private CLB VIPs of loopguard's probe plan from this node (docs/probe.md)

  --node NAME                 this node (default: NODE_NAME, the downward API's spec.nodeName)
  --namespace NS              loopguard's namespace, where the plan and the reports are (default: POD_NAMESPACE)
  --kubeconfig FILE           default: in-cluster, else KUBECONFIG
  --rate N                    probes per second from this node, at most (default ${DEFAULT_RATE_PER_SECOND})
  --min-interval-seconds N    a target's probes from this node are at least this far apart on average (default ${DEFAULT_MIN_INTERVAL_SECONDS})
  --allow-cidr CIDR           also probe this range; only inside 127.0.0.0/8 or RFC 1918 (repeatable; tests, the lab)
  --min-window-seconds N      accept plans with windows this short (default ${WINDOW_SECONDS.min}; tests)
  --log-level LEVEL           default info`;

function fail(message: string): never {
  console.error(`loopguard probe: ${message} (--help lists every flag)`);
  process.exit(2);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) fail(`--${name} ${JSON.stringify(raw)}: expected a positive number`);
  return n;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(3),
      options: {
        node: { type: 'string' },
        namespace: { type: 'string' },
        kubeconfig: { type: 'string' },
        rate: { type: 'string' },
        'min-interval-seconds': { type: 'string' },
        'allow-cidr': { type: 'string', multiple: true },
        'min-window-seconds': { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    return fail((err as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const node = values.node ?? process.env['NODE_NAME'] ?? '';
  const namespace = values.namespace ?? process.env['POD_NAMESPACE'] ?? '';
  if (!node) fail('no node name: set NODE_NAME from the downward API (spec.nodeName) or pass --node');
  if (!namespace) fail("no namespace: set POD_NAMESPACE from the downward API or pass --namespace (loopguard's namespace)");
  const ranges = allowedRanges(values['allow-cidr'] ?? []);
  if ('error' in ranges) fail(ranges.error);
  const minWindowSeconds = positive('min-window-seconds', values['min-window-seconds'], WINDOW_SECONDS.min);
  const ratePerSecond = positive('rate', values.rate, DEFAULT_RATE_PER_SECOND);
  const minIntervalSeconds = positive('min-interval-seconds', values['min-interval-seconds'], DEFAULT_MIN_INTERVAL_SECONDS);
  const logger = createLogger({ level: values['log-level'] ?? 'info' });

  const kc = new PooledKubeConfig();
  try {
    if (values.kubeconfig) kc.loadFromFile(values.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    fail(`cannot read kubeconfig ${values.kubeconfig ?? '(default)'}: ${(err as Error).message.split('\n')[0]}`);
  }
  const writer = new ReportWriter(kc);
  const agent = new ProbeAgent({
    node,
    pod: { name: process.env['POD_NAME'] ?? '', uid: process.env['POD_UID'] ?? '' },
    namespace,
    rules: { ranges: ranges.ranges, minWindowSeconds },
    ratePerSecond,
    minIntervalSeconds,
    logger,
    write: (report) => writer.write(report),
  });
  logger.info(
    `Starting the loopback probe on node ${node}: plan ${namespace}/loopguard-probe-plan, at most ${ratePerSecond} probes/s, only to ${ranges.ranges.map((r) => r.text).join(', ')}`,
  );
  const stopWatch = watchPlan(kc, namespace, (plan) => agent.onPlan(plan), logger);
  const shutdown = (signal: string) => {
    logger.info('Stopping the loopback probe', { signal });
    stopWatch();
    agent.stop();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  await agent.run();
  logger.on('finish', () => process.exit(0));
  logger.end();
}

void main();
