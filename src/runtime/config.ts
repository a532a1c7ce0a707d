// Operator configuration from flags (`--name=value` or `--name value`) and environment variables, flags
// winning. Every problem is collected and reported at once, naming the flag, its variable and what is allowed.
// What depends on where the operator runs is settled by `resolveRuntimeDefaults` once the kubeconfig is loaded:
// loopguard's own namespace, the probe address and secure metrics (see there).
import { ENVOY_GATEWAY_NAMESPACE } from '../model/gateway-service.js';
import { TKE_GRACE_MS } from '../model/tke-timing.js';

interface Setting {
  flag: string;
  /** The variable when it is not LOOPGUARD_ and the flag in upper case (`envOf`). */
  env?: string;
  /** Older or conventional names that still work; the primary names win over them. */
  aliases?: { flags?: readonly string[]; envs?: readonly string[] };
  kind: 'string' | 'bool' | 'int' | 'duration';
  help: string;
  allowed?: readonly string[];
  min?: number;
  max?: number;
  /** The value when neither a flag nor a variable sets it; undefined and '' are settled by `resolveRuntimeDefaults` where it says so. */
  default: string | number | boolean | undefined;
}

/**
 * Tencent Cloud's VPC DNS servers, what a TKE node's /etc/resolv.conf names and CoreDNS's `forward . /etc/resolv.conf`
 * reaches (an assumption, docs/dns.md §4: the addresses are from Tencent Cloud's own VPC example).
 */
export const DEFAULT_DNS_UPSTREAM = '183.60.83.19,183.60.82.98';

/** A list of DNS servers, `ip` or `ip:port` or `[ipv6]:port`, comma-separated: the servers, or the entry that is not one. */
export function parseDnsServers(text: string): { servers: string[] } | { bad: string } {
  const servers = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const ok = (s: string) => {
    const m = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9a-fA-F:]+)\]|([0-9a-fA-F:]*:[0-9a-fA-F:]*))(?::(\d{1,5}))?$/.exec(s);
    if (!m) return false;
    if (m[1] && m[1].split('.').some((o) => Number(o) > 255)) return false;
    if (m[3] && m[4] !== undefined) return false; // a bare IPv6 address cannot carry a port
    return m[4] === undefined || (Number(m[4]) > 0 && Number(m[4]) <= 65535);
  };
  const bad = servers.find((s) => !ok(s));
  return bad !== undefined ? { bad } : { servers };
}

/** `--kube-proxy-version`: a Kubernetes version, with TKE's build suffix where it has one. */
export const KUBE_PROXY_VERSION = /^v\d+\.\d+\.\d+(-tke\.\d+)?$/;

/** Every setting once, by its key in OperatorConfig: its flag, variable, kind, range, default and help (OperatorConfig is derived from it). */
const SETTINGS = {
  kubeconfig: { flag: 'kubeconfig', env: 'KUBECONFIG', kind: 'string', default: '', help: 'kubeconfig file; empty = in-cluster' },
  leaderElect: { flag: 'leader-elect', kind: 'bool', default: true, help: 'elect a leader among replicas (only the leader writes)' },
  // POD_NAMESPACE: what the Deployment sets from the downward API; --lease-namespace: loopguard's earlier name (the
  // chart's operator.leaseNamespace passes it); --leader-election-namespace: controller-runtime's name.
  // '' until `resolveRuntimeDefaults`: out of cluster it must be given, never guessed.
  namespace: { flag: 'namespace', aliases: { flags: ['lease-namespace', 'leader-election-namespace'], envs: ['LOOPGUARD_LEASE_NAMESPACE', 'POD_NAMESPACE'] }, kind: 'string', default: '', help: "loopguard's own namespace: its Lease, observation checkpoint and admission params, left out of cluster policies (default: the pod's namespace in a cluster; required out of cluster)" },
  leaseName: { flag: 'leader-election-id', env: 'LOOPGUARD_LEASE_NAME', kind: 'string', default: 'loopguard-leader', help: 'name of the Lease' },
  identity: { flag: 'identity', env: 'POD_NAME', kind: 'string', default: '', help: 'this replica in the Lease (default: hostname + random suffix)' },
  probeHost: { flag: 'probe-host', kind: 'string', default: '', help: 'address of /healthz, /readyz, /metrics (default: 0.0.0.0 in a pod, else 127.0.0.1)' },
  probePort: { flag: 'probe-port', kind: 'int', min: 0, max: 65535, default: 8081, help: 'port of /healthz, /readyz (and /metrics when not --metrics-secure) (0 = any free port)' },
  // runtime/metrics-server.ts; undefined until `resolveRuntimeDefaults`.
  metricsSecure: { flag: 'metrics-secure', kind: 'bool', default: undefined, help: 'serve /metrics over HTTPS on --metrics-port to ServiceAccounts allowed to get it (TokenReview + SubjectAccessReview); false: on the probe port, open (default: true in a pod, else false)' },
  metricsPort: { flag: 'metrics-port', kind: 'int', min: 0, max: 65535, default: 8443, help: 'port of the HTTPS /metrics with --metrics-secure (0 = any free port)' },
  metricsCertDir: { flag: 'metrics-cert-dir', kind: 'string', default: '', help: 'directory with tls.crt and tls.key for the HTTPS /metrics (read again each minute); empty: a self-signed certificate made at start' },
  region: { flag: 'region', env: 'TENCENTCLOUD_REGION', kind: 'string', default: '', help: 'Tencent Cloud region of the cluster, e.g. ap-guangzhou' },
  clbEndpoint: { flag: 'clb-endpoint', kind: 'string', default: '', help: 'CLB API endpoint override, host[:port] or http(s)://host[:port] (the local emulator)' },
  // Given as either form; loadConfig leaves 'https://' or 'http://'.
  clbProtocol: { flag: 'clb-protocol', kind: 'string', allowed: ['https://', 'http://', 'https', 'http'], default: 'https://', help: 'protocol of the CLB endpoint (the emulator speaks http://)' },
  cloudRateLimit: { flag: 'cloud-rate-limit', kind: 'int', min: 1, max: 20, default: 10, help: 'CLB API requests per second per action (quota 20, shared with TKE)' },
  // src/cloud/adaptive-rate.ts
  cloudRateAdaptive: { flag: 'cloud-rate-adaptive', kind: 'bool', default: true, help: 'lower the rate of an action while the CLB answers RequestLimitExceeded and raise it back to --cloud-rate-limit, so clusters sharing an account share its quota (false: fixed rate, 1 s pause per throttle)' },
  concurrency: { flag: 'concurrency', kind: 'int', min: 1, max: 64, default: 4, help: 'targets reconciled at once' },
  // docs/probe.md §4, §11.1
  probeWindowMs: { flag: 'probe-window', kind: 'duration', min: 1_000, max: 3_600_000, default: 300_000, help: "the probe plan's window: each target is probed from every node at least once per window; agents refuse under 1m unless started with --min-window-seconds (docs/probe.md)" },
  driftCheckIntervalMs: { flag: 'drift-check-interval', kind: 'duration', min: 1_000, default: 5 * 60_000, help: 'how often converged targets are re-verified in the CLB (e.g. 5m)' },
  // src/controllers/observation-upkeep.ts
  observationCheckpoint: { flag: 'observation-checkpoint', kind: 'bool', default: true, help: "keep what was last read of each CLB in ConfigMaps of loopguard's namespace, so a new leader judges converged targets from it and re-reads them on the drift schedule (false: it reads every CLB first)" },
  // src/controllers/drift-signal.ts
  driftFullReadShare: { flag: 'drift-full-read-share', kind: 'int', min: 1, max: 100, default: 20, help: 'percent of --cloud-rate-limit the full re-reads of converged CLBs may take; beyond it, each CLB is re-read in full less often than every drift-check interval (its backend health still is)' },
  tkeGraceMs: { flag: 'tke-grace-period', kind: 'duration', min: 1_000, default: TKE_GRACE_MS, help: 'how long TKE gets to apply what loopguard declared (TkeServiceConfig, pass-to-target, the source switch on prevent-loopback) before loopguard writes it itself or reports it' },
  kubeProxyMode: { flag: 'kube-proxy-mode', kind: 'string', allowed: ['', 'ipvs', 'iptables', 'nftables', 'none'], default: '', help: 'override the detected kube-proxy mode' },
  kubeProxyVersion: { flag: 'kube-proxy-version', kind: 'string', default: '', help: 'override the detected kube-proxy version, e.g. v1.20.6-tke.12' },
  // For builds TKE documents no minimum for.
  kubeProxyPreventLoopback: { flag: 'kube-proxy-prevent-loopback', kind: 'string', allowed: ['', 'true', 'false'], default: '', help: 'whether kube-proxy supports prevent-loopback (default: decided from its version)' },
  envoyGatewayNamespace: { flag: 'envoy-gateway-namespace', kind: 'string', default: ENVOY_GATEWAY_NAMESPACE, help: "Envoy Gateway's namespace, where it generates the LoadBalancer Service of each Gateway (docs/gateways.md)" },
  // l7.inClusterDNS: Managed (docs/dns.md §4).
  dnsUpstream: { flag: 'dns-upstream', kind: 'string', default: DEFAULT_DNS_UPSTREAM, help: "the DNS servers CoreDNS forwards to (ip or ip:port, comma-separated): a host name is rewritten only where their answer is its target's own CLB VIP (default: Tencent Cloud's VPC DNS, docs/dns.md)" },
  corednsServers: { flag: 'coredns-servers', kind: 'string', default: '', help: "the CoreDNS servers the rewrite rules are checked through (ip or ip:port, comma-separated; each must answer with the Service's ClusterIP). Empty: the ClusterIP of kube-system/kube-dns" },
  dnsCheckWaitMs: { flag: 'dns-check-wait', kind: 'duration', min: 1_000, max: 3_600_000, default: 150_000, help: "how long after writing its CoreDNS rules loopguard waits for CoreDNS to answer by them before reporting them not in effect (CoreDNS's reload interval + jitter + the kubelet's ConfigMap propagation)" },
  clusterDomain: { flag: 'cluster-domain', kind: 'string', default: 'cluster.local', help: "the cluster's DNS domain (the kubelet's --cluster-domain): Service names in the CoreDNS rules end in svc.<it>" },
  logLevel: { flag: 'log-level', kind: 'string', allowed: ['error', 'warn', 'info', 'debug'], default: 'info', help: 'log level' },
  shutdownGraceMs: { flag: 'shutdown-grace', kind: 'duration', min: 0, default: 8_000, help: 'on SIGTERM/SIGINT, how long in-flight reconciles and the CLB tasks they await may finish before they are aborted' },
} as const satisfies Record<string, Setting>;

/** A setting's value: one of its allowed values, a boolean or a number by its kind, else a string; undefined where that is its default. */
type ValueOf<F> = (F extends { allowed: readonly (infer A)[] } ? A : F extends { kind: 'bool' } ? boolean : F extends { kind: 'int' | 'duration' } ? number : string) | (F extends { default: undefined } ? undefined : never);

export type OperatorConfig = { -readonly [K in keyof typeof SETTINGS]: ValueOf<(typeof SETTINGS)[K]> };

type Field = Setting & { key: keyof OperatorConfig; env: string };

const envOf = (flag: string) => `LOOPGUARD_${flag.toUpperCase().replaceAll('-', '_')}`;

export const FIELDS: readonly Field[] = Object.entries(SETTINGS).map(([key, s]: [string, Setting]) => ({ ...s, key: key as keyof OperatorConfig, env: s.env ?? envOf(s.flag) }));

export const DEFAULTS = Object.fromEntries(FIELDS.map((f) => [f.key, f.default])) as OperatorConfig;

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
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      problems.push(`unexpected argument "${arg}" (flags look like --name=value)`);
      continue;
    }
    const name = m[1]!;
    const field = FIELDS.find((f) => f.flag === name || f.aliases?.flags?.includes(name));
    if (!field) {
      problems.push(`unknown flag --${name}`);
      continue;
    }
    let value = m[2];
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
  const given = new Set<keyof OperatorConfig>();
  for (const f of FIELDS) {
    const source = firstSet(f, flags, env);
    if (!source) continue;
    given.add(f.key);
    const { where, raw } = source;
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
        else if (f.max !== undefined && ms > f.max) fail(`must be at most ${f.max} ms`);
        else config[f.key] = ms;
        break;
      }
    }
  }
  const result = config as unknown as OperatorConfig;
  normaliseClbEndpoint(result, given.has('clbProtocol'), problems);
  // Also with --clb-endpoint: a VPC endpoint still serves one region, and guessing one would act on the wrong CLBs.
  if (!result.region) problems.push("no region: set --region or TENCENTCLOUD_REGION (e.g. ap-guangzhou), the region of the cluster's CLBs");
  if (result.kubeProxyVersion && !KUBE_PROXY_VERSION.test(result.kubeProxyVersion)) problems.push(`--kube-proxy-version="${result.kubeProxyVersion}": expected a version such as v1.20.6-tke.12`);
  for (const [flag, env, value, empty] of [['dns-upstream', 'LOOPGUARD_DNS_UPSTREAM', result.dnsUpstream, false], ['coredns-servers', 'LOOPGUARD_COREDNS_SERVERS', result.corednsServers, true]] as const) {
    const parsed = parseDnsServers(value);
    if ('bad' in parsed) problems.push(`--${flag}="${value}" (${env}): "${parsed.bad}" is not an IP address or ip:port`);
    else if (!empty && parsed.servers.length === 0) problems.push(`--${flag} (${env}) is empty: name at least one DNS server`);
  }
  const dnsName = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
  if (!dnsName.test(result.clusterDomain)) problems.push(`--cluster-domain="${result.clusterDomain}" (LOOPGUARD_CLUSTER_DOMAIN): expected a lower-case DNS name such as cluster.local`);
  if (problems.length > 0) throw new ConfigError(problems);
  return result;
}

/** The value a field takes and where it came from: its flags (primary first), then its variables; '' in a variable means unset. */
function firstSet(f: Field, flags: Map<string, string>, env: NodeJS.ProcessEnv): { where: string; raw: string } | undefined {
  for (const flag of [f.flag, ...(f.aliases?.flags ?? [])]) {
    const raw = flags.get(flag);
    if (raw !== undefined) return { where: `--${flag}`, raw };
  }
  for (const name of [f.env, ...(f.aliases?.envs ?? [])]) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') return { where: name, raw };
  }
  return undefined;
}

/**
 * One protocol form ('http://') whichever was given ('http', 'http://'), and a scheme written into the
 * endpoint moves to clbProtocol: `LOOPGUARD_CLB_ENDPOINT=http://127.0.0.1:9000` means what it says instead of
 * sending TLS to a plain-HTTP server (EPROTO). A scheme that contradicts an explicit protocol is a problem.
 */
function normaliseClbEndpoint(c: OperatorConfig, explicit: boolean, problems: string[]): void {
  c.clbProtocol = (c.clbProtocol.endsWith('://') ? c.clbProtocol : `${c.clbProtocol}://`) as OperatorConfig['clbProtocol'];
  if (!c.clbEndpoint) return;
  const m = /^(https?):\/\/([^/]+)\/?$/i.exec(c.clbEndpoint);
  if (m) {
    const scheme = `${m[1]!.toLowerCase()}://` as OperatorConfig['clbProtocol'];
    if (explicit && scheme !== c.clbProtocol) {
      problems.push(`--clb-endpoint="${c.clbEndpoint}" says ${scheme} but --clb-protocol (LOOPGUARD_CLB_PROTOCOL) says ${c.clbProtocol}: drop one of them`);
    }
    c.clbEndpoint = m[2]!;
    c.clbProtocol = scheme;
  } else if (c.clbEndpoint.includes('/')) {
    problems.push(`--clb-endpoint="${c.clbEndpoint}": expected host[:port] or http(s)://host[:port] (LOOPGUARD_CLB_ENDPOINT)`);
  }
}

/** Where the operator runs, as far as its defaults care. */
export interface RuntimeEnvironment {
  /** The pod's namespace (the ServiceAccount namespace file); set only inside a pod (see `detectRuntimeEnvironment`). */
  serviceAccountNamespace?: string;
}

/** The names client-node's KubeConfig.loadFromCluster gives what it loads (client-node 2.x dist/config.js). */
export const CLIENT_NODE_IN_CLUSTER = { context: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser' } as const;

/** What main.ts knows once the kubeconfig is loaded; `detectRuntimeEnvironment` decides from it alone. */
export interface RuntimeFacts {
  /** --kubeconfig, or KUBECONFIG through loadConfig ('' = neither). */
  kubeconfig: string;
  /** KUBECONFIG as client-node's loadFromDefault reads it (process.env). */
  kubeconfigEnv: string | undefined;
  /** The current context of what client-node loaded (in cluster, its namespace is the ServiceAccount file's). */
  context?: { name: string; cluster?: string; user?: string; namespace?: string };
}

/**
 * In a pod only when no kubeconfig was given (no --kubeconfig, no KUBECONFIG) and client-node fell back to its
 * in-cluster config (no ~/.kube/config either). The ServiceAccount file alone says nothing: `npm start` in a dev
 * container or a CI pod has one, yet talks to the cluster its kubeconfig names, and must put the Lease in that
 * --namespace and keep its probes on loopback.
 */
export function detectRuntimeEnvironment(facts: RuntimeFacts): RuntimeEnvironment {
  const namespace = facts.context?.namespace?.trim() ?? '';
  const kubeconfigGiven = facts.kubeconfig !== '' || (facts.kubeconfigEnv ?? '') !== '';
  const loadedInCluster =
    facts.context?.name === CLIENT_NODE_IN_CLUSTER.context &&
    facts.context.cluster === CLIENT_NODE_IN_CLUSTER.cluster &&
    facts.context.user === CLIENT_NODE_IN_CLUSTER.user;
  const inCluster = !kubeconfigGiven && loadedInCluster && namespace !== '';
  return inCluster ? { serviceAccountNamespace: namespace } : {};
}

/** The problem when loopguard's namespace is known from nowhere (out of cluster, no flag or variable). */
export const NO_NAMESPACE_PROBLEM =
  "no namespace of loopguard's own: set --namespace or LOOPGUARD_NAMESPACE (e.g. loopguard-system, which must exist) for its Lease, observation checkpoint and admission params; out of cluster it is never guessed";

/**
 * Settles the defaults that depend on where loopguard runs (a flag or variable always wins), in `config`, and returns
 * one sentence per default saying where it came from, for the start-up log:
 * - loopguard's namespace: in a pod its own namespace (the ServiceAccount file, as controller-runtime does). Out of
 *   cluster it must be given: the kubeconfig context's namespace (often none, so `default`) is the user's working
 *   namespace, not loopguard's, and taking it put the Lease, the checkpoint and the admission params there, left
 *   that namespace out of every cluster policy and made the admission policy (which reads its params from
 *   loopguard-system) warn nothing (issue 38 #3). Throws a ConfigError naming the flag.
 * - Probe address: 0.0.0.0 in a pod (the kubelet probes the pod IP); 127.0.0.1 on a workstation, where
 *   nothing outside needs /metrics.
 * - Secure metrics: on in a pod, where /metrics would otherwise show every tenant's targets to anyone reaching the
 *   pod IP (issue 22 #6); off on a workstation, where they are on loopback only.
 */
export function resolveRuntimeDefaults(config: OperatorConfig, where: RuntimeEnvironment) {
  const podNamespace = where.serviceAccountNamespace?.trim() ?? '';
  const inCluster = podNamespace !== '';
  if (!config.namespace && !inCluster) throw new ConfigError([NO_NAMESPACE_PROBLEM]);
  const from = {
    namespaceFrom: config.namespace ? 'set by --namespace, LOOPGUARD_NAMESPACE or an alias' : "the pod's own namespace (ServiceAccount)",
    probeHostFrom: config.probeHost ? 'set by --probe-host or LOOPGUARD_PROBE_HOST' : inCluster ? 'in a pod: every interface, for the kubelet' : 'out of cluster: loopback only',
    metricsSecureFrom: config.metricsSecure !== undefined ? 'set by --metrics-secure or LOOPGUARD_METRICS_SECURE' : inCluster ? 'in a pod: authenticated HTTPS' : 'out of cluster: on the probe port',
  };
  config.namespace ||= podNamespace;
  config.probeHost ||= inCluster ? '0.0.0.0' : '127.0.0.1';
  config.metricsSecure ??= inCluster;
  return from;
}

export function usage(): string {
  return FIELDS.map((f) => {
    const also = [...(f.aliases?.flags ?? []).map((a) => `--${a}`), ...(f.aliases?.envs ?? [])];
    return `  --${f.flag.padEnd(28)} ${f.env.padEnd(32)} ${f.help}${also.length > 0 ? ` (also: ${also.join(', ')})` : ''}`;
  }).join('\n');
}
