// What the cluster's kube-proxy would do with a CLB VIP, read from the `kube-system/kube-proxy` DaemonSet
// (docs/tencent-cloud.md §6). Pure. The simulator keeps its own small version parser on purpose: it must
// stay independent of the operator's code in src/model, or a bug there would be mirrored here and hidden.
import type { V1DaemonSet } from '@kubernetes/client-node';

export interface TkeVersion {
  major: number;
  minor: number;
  patch: number;
  /** N of `-tke.N`. */
  tke: number;
}

export type ProxyMode = 'ipvs' | 'iptables' | 'nftables' | 'unknown';

export interface KubeProxyProfile {
  /** The DaemonSet exists. Without it (binary kube-proxy, DataPlaneV2) nothing binds the VIP. */
  present: boolean;
  mode: ProxyMode;
  version?: TkeVersion;
  /** This build binds the CLB VIP to the IPVS interface when a Service asks for prevent-loopback. */
  supportsPreventLoopback: boolean;
}

export const NO_KUBE_PROXY: KubeProxyProfile = { present: false, mode: 'unknown', supportsPreventLoopback: false };

const TAG = /^v(\d+)\.(\d+)\.(\d+)-tke\.(\d+)$/;

export function parseTkeVersion(tag: string): TkeVersion | undefined {
  const m = TAG.exec(tag.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), tke: Number(m[4]) };
}

/** The tag of an image reference (`registry/repo:tag` or `repo:tag@sha256:...`), if any. */
export function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@')[0] ?? '';
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon < 0 ? undefined : withoutDigest.slice(colon + 1);
}

/**
 * First builds per minor line that bind the LB address to the IPVS interface (TKE loopback doc, via
 * tencent-cloud.md §2). Minors above the newest listed line are assumed to include it (unconfirmed); minors below
 * the oldest, and minors between listed lines that have no entry (odd minors: TKE never shipped them), do not.
 */
const PREVENT_LOOPBACK_MINIMUM: ReadonlyMap<string, TkeVersion> = new Map(
  [
    { major: 1, minor: 12, patch: 4, tke: 30 },
    { major: 1, minor: 14, patch: 3, tke: 24 },
    { major: 1, minor: 16, patch: 3, tke: 25 },
    { major: 1, minor: 18, patch: 4, tke: 20 },
    { major: 1, minor: 20, patch: 6, tke: 12 },
  ].map((v) => [`${v.major}.${v.minor}`, v]),
);
const NEWEST_LISTED = { major: 1, minor: 20 };

export function compareVersions(a: TkeVersion, b: TkeVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || a.tke - b.tke;
}

export function supportsPreventLoopback(v: TkeVersion): boolean {
  const minimum = PREVENT_LOOPBACK_MINIMUM.get(`${v.major}.${v.minor}`);
  if (minimum) return compareVersions(v, minimum) >= 0;
  return v.major > NEWEST_LISTED.major || (v.major === NEWEST_LISTED.major && v.minor > NEWEST_LISTED.minor);
}

/**
 * `--proxy-mode=ipvs` / `--proxy-mode ipvs` in command+args; kube-proxy's own default is iptables.
 * TKE configures kube-proxy with flags, not the kubeadm ConfigMap (tencent-cloud.md §6).
 */
export function proxyModeFromArgs(argv: readonly string[]): ProxyMode {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    let value: string | undefined;
    if (arg.startsWith('--proxy-mode=')) value = arg.slice('--proxy-mode='.length);
    else if (arg === '--proxy-mode') value = argv[i + 1];
    if (value === undefined) continue;
    const mode = value.trim().toLowerCase();
    return mode === 'ipvs' || mode === 'nftables' ? mode : 'iptables';
  }
  return 'iptables';
}

/** Splits `sh -c "kube-proxy --a=b ..."` style commands so flags inside a shell string are seen too. */
function argvOf(command: readonly string[] | undefined, args: readonly string[] | undefined): string[] {
  return [...(command ?? []), ...(args ?? [])].flatMap((part) => part.split(/\s+/)).filter((p) => p.length > 0);
}

export function kubeProxyProfile(ds: V1DaemonSet | undefined): KubeProxyProfile {
  if (!ds) return NO_KUBE_PROXY;
  const containers = ds.spec?.template.spec?.containers ?? [];
  const container = containers.find((c) => c.name === 'kube-proxy') ?? containers[0];
  if (!container) return { ...NO_KUBE_PROXY, present: true };
  const tag = container.image ? imageTag(container.image) : undefined;
  const version = tag ? parseTkeVersion(tag) : undefined;
  return {
    present: true,
    mode: proxyModeFromArgs(argvOf(container.command, container.args)),
    version,
    supportsPreventLoopback: version ? supportsPreventLoopback(version) : false,
  };
}

/** Whether kube-proxy binds this Service's VIP on the nodes: IPVS, a capable build, and the annotation. */
export function bindsVip(profile: KubeProxyProfile, preventLoopbackAnnotated: boolean): boolean {
  return profile.present && profile.mode === 'ipvs' && profile.supportsPreventLoopback && preventLoopbackAnnotated;
}
