// Operator configuration from flags (`--name=value` or `--name value`) and environment variables, flags
// winning. Every problem is collected and reported at once, naming the flag, its variable and what is allowed.

export type KubeProxyModeOverride = 'ipvs' | 'iptables' | 'none';

export interface OperatorConfig {
  /** Empty: in-cluster config, else KUBECONFIG / ~/.kube/config. */
  kubeconfig: string;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  probeHost: string;
  probePort: number;
  region: string;
  /** host[:port] of a CLB API endpoint; empty means the public Tencent Cloud endpoint. */
  clbEndpoint: string;
  clbProtocol: 'https://' | 'http://';
  /** Requests per second per CLB action (the account quota is 20 and TKE's controllers share it). */
  cloudRateLimit: number;
  concurrency: number;
  driftCheckIntervalMs: number;
  kubeProxyMode: KubeProxyModeOverride | '';
  kubeProxyVersion: string;
  /** Whether kube-proxy honours prevent-loopback, for builds TKE documents no minimum for; '' = decide from the version. */
  kubeProxyPreventLoopback: '' | 'true' | 'false';
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  shutdownGraceMs: number;
}

type Kind = 'string' | 'bool' | 'int' | 'duration';

interface Field {
  key: keyof OperatorConfig;
  flag: string;
  env: string;
  kind: Kind;
  help: string;
  allowed?: readonly string[];
  min?: number;
  max?: number;
}

export const FIELDS: readonly Field[] = [
  { key: 'kubeconfig', flag: 'kubeconfig', env: 'KUBECONFIG', kind: 'string', help: 'kubeconfig file; empty = in-cluster' },
  { key: 'leaderElect', flag: 'leader-elect', env: 'LOOPGUARD_LEADER_ELECT', kind: 'bool', help: 'elect a leader among replicas (only the leader writes)' },
  { key: 'leaseNamespace', flag: 'leader-election-namespace', env: 'POD_NAMESPACE', kind: 'string', help: 'namespace of the Lease' },
  { key: 'leaseName', flag: 'leader-election-id', env: 'LOOPGUARD_LEASE_NAME', kind: 'string', help: 'name of the Lease' },
  { key: 'identity', flag: 'identity', env: 'POD_NAME', kind: 'string', help: 'this replica in the Lease (default: hostname + random suffix)' },
  { key: 'probeHost', flag: 'probe-host', env: 'LOOPGUARD_PROBE_HOST', kind: 'string', help: 'address of /healthz, /readyz, /metrics' },
  { key: 'probePort', flag: 'probe-port', env: 'LOOPGUARD_PROBE_PORT', kind: 'int', min: 0, max: 65535, help: 'port of /healthz, /readyz, /metrics (0 = any free port)' },
  { key: 'region', flag: 'region', env: 'TENCENTCLOUD_REGION', kind: 'string', help: 'Tencent Cloud region of the cluster, e.g. ap-guangzhou' },
  { key: 'clbEndpoint', flag: 'clb-endpoint', env: 'LOOPGUARD_CLB_ENDPOINT', kind: 'string', help: 'CLB API endpoint override, host[:port] (the local emulator)' },
  { key: 'clbProtocol', flag: 'clb-protocol', env: 'LOOPGUARD_CLB_PROTOCOL', kind: 'string', allowed: ['https://', 'http://'], help: 'protocol of the CLB endpoint' },
  { key: 'cloudRateLimit', flag: 'cloud-rate-limit', env: 'LOOPGUARD_CLOUD_RATE_LIMIT', kind: 'int', min: 1, max: 20, help: 'CLB API requests per second per action (quota 20, shared with TKE)' },
  { key: 'concurrency', flag: 'concurrency', env: 'LOOPGUARD_CONCURRENCY', kind: 'int', min: 1, max: 64, help: 'targets reconciled at once' },
  { key: 'driftCheckIntervalMs', flag: 'drift-check-interval', env: 'LOOPGUARD_DRIFT_CHECK_INTERVAL', kind: 'duration', min: 1_000, help: 'how often converged targets are re-verified in the CLB (e.g. 5m)' },
  { key: 'kubeProxyMode', flag: 'kube-proxy-mode', env: 'LOOPGUARD_KUBE_PROXY_MODE', kind: 'string', allowed: ['', 'ipvs', 'iptables', 'none'], help: 'override the detected kube-proxy mode' },
  { key: 'kubeProxyVersion', flag: 'kube-proxy-version', env: 'LOOPGUARD_KUBE_PROXY_VERSION', kind: 'string', help: 'override the detected kube-proxy version, e.g. v1.20.6-tke.12' },
  {
    key: 'kubeProxyPreventLoopback',
    flag: 'kube-proxy-prevent-loopback',
    env: 'LOOPGUARD_KUBE_PROXY_PREVENT_LOOPBACK',
    kind: 'string',
    allowed: ['', 'true', 'false'],
    help: 'whether kube-proxy supports prevent-loopback (default: decided from its version)',
  },
  { key: 'logLevel', flag: 'log-level', env: 'LOOPGUARD_LOG_LEVEL', kind: 'string', allowed: ['error', 'warn', 'info', 'debug'], help: 'log level' },
  { key: 'shutdownGraceMs', flag: 'shutdown-grace', env: 'LOOPGUARD_SHUTDOWN_GRACE', kind: 'duration', min: 0, help: 'how long in-flight work may finish on SIGTERM' },
];

export const DEFAULTS: OperatorConfig = {
  kubeconfig: '',
  leaderElect: true,
  leaseNamespace: 'loopguard-system',
  leaseName: 'loopguard-leader',
  identity: '',
  probeHost: '0.0.0.0',
  probePort: 8081,
  region: '',
  clbEndpoint: '',
  clbProtocol: 'https://',
  cloudRateLimit: 10,
  concurrency: 4,
  driftCheckIntervalMs: 5 * 60_000,
  kubeProxyMode: '',
  kubeProxyVersion: '',
  kubeProxyPreventLoopback: '',
  logLevel: 'info',
  shutdownGraceMs: 8_000,
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses `5m`, `30s`, `1500ms`, `1h`, or a bare number of seconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const factor = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * factor);
}

function parseFlags(argv: readonly string[], problems: string[]): Map<string, string> {
  const known = new Set(FIELDS.map((f) => f.flag));
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      problems.push(`unexpected argument "${arg}" (flags look like --name=value)`);
      continue;
    }
    const name = m[1]!;
    if (!known.has(name)) {
      problems.push(`unknown flag --${name}`);
      continue;
    }
    let value = m[2];
    const field = FIELDS.find((f) => f.flag === name)!;
    if (value === undefined) {
      const next = argv[i + 1];
      if (field.kind === 'bool' && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) {
        problems.push(`flag --${name} needs a value`);
        continue;
      } else {
        value = next;
        i++;
      }
    }
    out.set(name, value);
  }
  return out;
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorConfig {
  const problems: string[] = [];
  const flags = parseFlags(argv, problems);
  const config: Record<string, unknown> = { ...DEFAULTS };
  for (const f of FIELDS) {
    const fromFlag = flags.get(f.flag);
    const raw = fromFlag ?? env[f.env];
    if (raw === undefined || (fromFlag === undefined && raw === '')) continue;
    const where = fromFlag !== undefined ? `--${f.flag}` : `${f.env}`;
    const fail = (what: string) => problems.push(`${where}="${raw}": ${what} (${f.help})`);
    switch (f.kind) {
      case 'string':
        if (f.allowed && !f.allowed.includes(raw)) fail(`must be one of ${f.allowed.filter(Boolean).join(', ')}`);
        else config[f.key] = raw;
        break;
      case 'bool':
        if (!['true', 'false', '1', '0'].includes(raw)) fail('must be true or false');
        else config[f.key] = raw === 'true' || raw === '1';
        break;
      case 'int': {
        const n = Number(raw);
        if (!Number.isInteger(n)) fail('must be a whole number');
        else if ((f.min !== undefined && n < f.min) || (f.max !== undefined && n > f.max)) fail(`must be between ${f.min} and ${f.max}`);
        else config[f.key] = n;
        break;
      }
      case 'duration': {
        const ms = parseDuration(raw);
        if (ms === undefined) fail('must be a duration such as 30s, 5m or 1h');
        else if (f.min !== undefined && ms < f.min) fail(`must be at least ${f.min} ms`);
        else config[f.key] = ms;
        break;
      }
    }
  }
  const result = config as unknown as OperatorConfig;
  if (!result.region && !result.clbEndpoint) {
    problems.push('no region: set --region or TENCENTCLOUD_REGION (e.g. ap-guangzhou), the region of the cluster\'s CLBs');
  }
  if (result.kubeProxyVersion && !/^v\d+\.\d+\.\d+(-tke\.\d+)?$/.test(result.kubeProxyVersion)) {
    problems.push(`--kube-proxy-version="${result.kubeProxyVersion}": expected a version such as v1.20.6-tke.12`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return result;
}

export function usage(): string {
  return FIELDS.map((f) => `  --${f.flag.padEnd(28)} ${f.env.padEnd(32)} ${f.help}`).join('\n');
}
