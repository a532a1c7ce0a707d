// Wiring only: configuration, clients, the operator, signals. Everything else lives in src/operator.ts.
import { KubeConfig } from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createCredentialProvider, TencentClbClient } from './cloud/index.js';
import { createL4Mitigator } from './mitigation/l4/index.js';
import { createL7Mitigator } from './mitigation/l7/index.js';
import { Operator } from './operator.js';
import { ConfigError, loadConfig, usage } from './runtime/config.js';
import { createLogger } from './runtime/logger.js';
import { Metrics } from './runtime/metrics.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(`loopguard: removes Tencent Cloud CLB loopback faults in TKE clusters\n\nflag / environment variable / meaning\n${usage()}`);
    return;
  }
  const config = loadConfig(process.argv.slice(2), process.env);
  if (!config.identity) config.identity = `${hostname()}-${randomBytes(3).toString('hex')}`;
  const logger = createLogger({ level: config.logLevel });
  const metrics = new Metrics();
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();

  const clb = new TencentClbClient({
    region: config.region || 'ap-guangzhou',
    credentials: createCredentialProvider({ logger }),
    ...(config.clbEndpoint ? { endpoint: config.clbEndpoint, protocol: config.clbProtocol === 'http://' ? 'http' : 'https' } : {}),
    throttle: { defaultBudget: { rps: config.cloudRateLimit } },
    logger,
    onCall: (e) => metrics.recordCloudCall(e.action, e.outcome, e.code),
  });

  let stopping = false;
  const operator = new Operator({
    kc,
    config,
    clb,
    logger,
    metrics,
    layers: { l4: createL4Mitigator, l7: createL7Mitigator },
    onLostLeadership: () => {
      logger.error('Leader election lost; exiting so that a fresh process campaigns again');
      process.exit(1);
    },
  });
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('Shutting down', { signal });
    await operator.stop();
    logger.info('Stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  logger.info('Starting loopguard', {
    identity: config.identity,
    leaderElect: config.leaderElect,
    region: config.region,
    clbEndpoint: config.clbEndpoint || 'clb.tencentcloudapi.com',
  });
  await operator.start();
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(`${err.message}\n\nRun with --help for every flag.`);
    process.exit(2);
  }
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
