// `npm run sim:tke -- [flags]`: the TKE controller simulator as a process (dev:up runs it in the background).
// Credentials come from the environment only (never flags: flags are visible in `ps`), and are never logged.
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_TEST_CREDENTIALS } from '../clb-emulator/options.js';
import { applyClusterProfile, CLUSTER_PROFILES, isClusterProfileName } from './profiles.js';
import { SYNC_SCOPES } from './context.js';
import { MISSING_ENABLE_READINGS } from './health-check-enable.js';
import { startTkeSimulator } from './simulator.js';

const USAGE = `usage: sim:tke [--kubeconfig FILE] [--clb-endpoint HOST:PORT] [--region R] [--resync SECONDS]
       [--switch-health-check-source on|off] [--sync-scope all|declared] [--missing-enable refused|switchOff] [--cluster-id ID] [--vpc-id ID] [--namespace-prefix P]... [--profile NAME]
Environment: KUBECONFIG, LOOPGUARD_CLB_ENDPOINT, TENCENTCLOUD_SECRET_ID, TENCENTCLOUD_SECRET_KEY, TENCENTCLOUD_REGION
(default credentials: the CLB emulator's built-in test account). Profiles: ${CLUSTER_PROFILES.join(', ')}`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      'clb-endpoint': { type: 'string' },
      region: { type: 'string' },
      resync: { type: 'string' },
      'switch-health-check-source': { type: 'string', default: 'on' },
      'sync-scope': { type: 'string', default: 'all' },
      'missing-enable': { type: 'string', default: 'refused' },
      'cluster-id': { type: 'string' },
      'vpc-id': { type: 'string' },
      'namespace-prefix': { type: 'string', multiple: true },
      profile: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const endpoint = values['clb-endpoint'] ?? process.env.LOOPGUARD_CLB_ENDPOINT;
  if (!endpoint) throw new Error(`no CLB endpoint: pass --clb-endpoint or set LOOPGUARD_CLB_ENDPOINT\n${USAGE}`);
  const kc = new KubeConfig();
  const kubeconfig = values.kubeconfig ?? process.env.KUBECONFIG;
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();

  if (values.profile !== undefined) {
    if (!isClusterProfileName(values.profile)) throw new Error(`unknown profile ${values.profile}\n${USAGE}`);
    await applyClusterProfile(kc, values.profile);
  }
  const resyncSeconds = values.resync !== undefined ? Number(values.resync) : 30;
  if (!Number.isFinite(resyncSeconds) || resyncSeconds < 0) throw new Error(`--resync must be a number of seconds ≥ 0`);
  const syncScope = SYNC_SCOPES.find((s) => s === values['sync-scope']);
  if (!syncScope) throw new Error(`--sync-scope must be one of ${SYNC_SCOPES.join(', ')}\n${USAGE}`);
  const switchSource = values['switch-health-check-source'];
  if (switchSource !== 'on' && switchSource !== 'off') throw new Error(`--switch-health-check-source must be on or off\n${USAGE}`);
  const missingEnable = MISSING_ENABLE_READINGS.find((r) => r === values['missing-enable']);
  if (!missingEnable) throw new Error(`--missing-enable must be one of ${MISSING_ENABLE_READINGS.join(', ')}\n${USAGE}`);
  const prefixes = values['namespace-prefix'] ?? [];
  const log = (line: string): void => console.error(`${new Date().toISOString()} ${line}`);

  const sim = await startTkeSimulator({
    kubeConfig: kc,
    clb: {
      endpoint,
      region: values.region || process.env.TENCENTCLOUD_REGION || 'ap-guangzhou',
      credentials: {
        secretId: process.env.TENCENTCLOUD_SECRET_ID || DEFAULT_TEST_CREDENTIALS.secretId,
        secretKey: process.env.TENCENTCLOUD_SECRET_KEY || DEFAULT_TEST_CREDENTIALS.secretKey,
      },
    },
    resyncIntervalMs: resyncSeconds * 1000,
    switchHealthCheckSourceOnPreventLoopback: switchSource === 'on',
    syncScope,
    missingHealthCheckEnable: missingEnable,
    ...(values['cluster-id'] ? { clusterId: values['cluster-id'] } : {}),
    ...(values['vpc-id'] ? { vpcId: values['vpc-id'] } : {}),
    ...(prefixes.length > 0 ? { namespaceFilter: (ns: string) => prefixes.some((p) => ns.startsWith(p)) } : {}),
    log,
  });
  const shutdown = (signal: string): void => {
    log(`${signal}: stopping`);
    sim.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
