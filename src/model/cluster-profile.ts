// Cluster profile: kube-proxy mode, version and prevent-loopback capability, from the kube-system/kube-proxy DaemonSet,
// its ConfigMap as fallback, and operator flags that win over both; pure, the caller passes the objects in. Sources:
// tencent-cloud.md §6 (where TKE keeps kube-proxy, DataPlaneV2, PR #63066), §7 (TKE-LOOPBACK minimums, TKE-CN).
import type { V1ConfigMap, V1Container } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { ClusterProfileStatus, KubeProxyMode, ProfileSource, Tristate, VipBinding } from '../api/loopbackpolicy.js';
import { parseKubeVersion, preventLoopbackSupport, type KubeVersion } from './kube-proxy-version.js';

export type ContainerFacts = Partial<Pick<V1Container, 'name' | 'image' | 'command' | 'args'>>;

/** The parts of a V1DaemonSet the profile reads (a V1DaemonSet is assignable to it). */
export interface DaemonSetFacts {
  metadata?: { name?: string; namespace?: string };
  spec?: { template?: { spec?: { containers?: ContainerFacts[] } } };
}

export type ConfigMapFacts = Pick<V1ConfigMap, 'metadata' | 'data'>;

/** The operator's and the CLI's kube-proxy flags as given ('' = not set); one mapping for both (src/runtime/config.ts). */
export interface ProfileFlags {
  kubeProxyMode?: string;
  kubeProxyVersion?: string;
  kubeProxyPreventLoopback?: boolean | string;
}

/** The modes a flag may name (detection adds `unknown`). */
export const OVERRIDE_MODES: readonly KubeProxyMode[] = ['ipvs', 'iptables', 'nftables', 'none'];

export interface ProfileInputs {
  daemonSet?: DaemonSetFacts;
  configMap?: ConfigMapFacts;
  /** The operator's flags: they win over what the DaemonSet and ConfigMap say. */
  flags?: ProfileFlags;
}

export interface ClusterProfile extends ClusterProfileStatus {
  vipBinding: VipBinding;
  message: string;
}

/** Picks the kube-proxy container: by name, then by image, then by command, then the first. */
export function kubeProxyContainer(ds: DaemonSetFacts | undefined): ContainerFacts | undefined {
  const containers = ds?.spec?.template?.spec?.containers ?? [];
  return (
    containers.find((c) => c.name === 'kube-proxy') ??
    containers.find((c) => /(^|\/)(kube-proxy|hyperkube)(:|@|$)/.test(c.image ?? '')) ??
    containers.find((c) => [...(c.command ?? []), ...(c.args ?? [])].some((a) => /(^|\/|\s)kube-proxy(\s|$)/.test(a))) ??
    containers[0]
  );
}

/** `registry:5000/tkeimages/hyperkube:v1.20.6-tke.12@sha256:…` → `v1.20.6-tke.12`; no tag → undefined. */
export function imageTag(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const withoutDigest = image.split('@')[0] ?? '';
  const lastSegment = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  return colon >= 0 ? lastSegment.slice(colon + 1) || undefined : undefined;
}

export interface FlagReading {
  /** Value of the last `--proxy-mode` (pflag: last one wins); '' when given empty. */
  proxyMode?: string;
  /** Whether `--config` is given (mode may then come from the mounted ConfigMap). */
  config: boolean;
}

/** Reads `--proxy-mode=ipvs`, `--proxy-mode ipvs` and `--config` from a container's command and args. */
export function readKubeProxyFlags(container: ContainerFacts | undefined): FlagReading {
  const reading: FlagReading = { config: false };
  if (!container) return reading;
  // Command-line tokens; a `sh -c "kube-proxy --proxy-mode=ipvs …"` string is split on spaces too.
  const t = [...(container.command ?? []), ...(container.args ?? [])].flatMap((a) => a.split(/\s+/)).filter((token) => token !== '');
  for (let i = 0; i < t.length; i++) {
    const token = t[i] as string;
    if (token.startsWith('--proxy-mode=')) reading.proxyMode = unquote(token.slice('--proxy-mode='.length));
    else if (token === '--proxy-mode' && i + 1 < t.length) reading.proxyMode = unquote(t[++i] as string);
    else if (token === '--config' || token.startsWith('--config=')) reading.config = true;
  }
  return reading;
}

function unquote(s: string): string {
  return s.replace(/^["']|["']$/g, '');
}

/** `mode:` of a KubeProxyConfiguration in the ConfigMap (`config.conf` first, then any key that has one). */
export function readConfigMapMode(cm: ConfigMapFacts | undefined): { mode?: string; key?: string; problem?: string } {
  const data = cm?.data ?? {};
  const keys = Object.keys(data).sort((a, b) => (a === 'config.conf' ? -1 : b === 'config.conf' ? 1 : a.localeCompare(b)));
  let problem: string | undefined;
  for (const key of keys) {
    let doc: unknown;
    try {
      doc = parseYaml(data[key] as string);
    } catch (err) {
      problem ??= `ConfigMap key ${key} is not YAML (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
      continue;
    }
    if (typeof doc === 'object' && doc !== null && 'mode' in doc) {
      const mode = (doc as { mode: unknown }).mode;
      return { mode: typeof mode === 'string' ? mode : mode === null ? '' : String(mode), key };
    }
  }
  return problem !== undefined ? { problem } : {};
}

/** Maps a kube-proxy mode string; '' is kube-proxy's default on Linux (iptables). */
function normalizeMode(value: string): KubeProxyMode {
  const v = value.trim().toLowerCase() || 'iptables';
  return OVERRIDE_MODES.find((m) => m === v && m !== 'none') ?? 'unknown';
}

/** Whether kube-proxy binds the CLB VIP: on the annotation (a TKE build that supports it), always, never, or unknown. */
function vipBindingFor(mode: KubeProxyMode, supported: Tristate, version: KubeVersion | undefined): VipBinding {
  if (mode === 'unknown') return 'Unknown';
  if (mode !== 'ipvs') return 'Never';
  if (supported !== 'False') return supported === 'True' ? 'OnAnnotation' : 'Unknown';
  // "Not supported" without a version can only come from the operator flag: a TKE build is implied. Older TKE builds
  // deliberately do not bind the EXTERNAL-IP (TKE-CN); upstream builds bind every LB IP to kube-ipvs0 since 1.11
  // (PR #63066, IMROC-CASE).
  return version && version.tke === undefined && version.major === 1 && version.minor >= 11 ? 'Always' : 'Never';
}

/** The kube-proxy mode and where it was read from, with the notes that say so. */
function detectMode(inputs: ProfileInputs, flagMode: KubeProxyMode | undefined, container: ContainerFacts | undefined, dsName: string): { mode: KubeProxyMode; source: ProfileSource; notes: string[] } {
  const { daemonSet } = inputs;
  const flags = readKubeProxyFlags(container);
  const cm = readConfigMapMode(inputs.configMap);
  const found = (mode: KubeProxyMode, source: ProfileSource, note: string) => ({ mode, source, notes: [...(cm.problem ? [cm.problem] : []), note] });
  if (flagMode !== undefined) return found(flagMode, 'Flag', `mode ${flagMode} from operator flag`);
  if (daemonSet && flags.proxyMode !== undefined) {
    const mode = normalizeMode(flags.proxyMode);
    const unknown = mode === 'unknown' ? `; --proxy-mode=${flags.proxyMode} is not a mode loopguard knows (ipvs, iptables, nftables)` : '';
    return found(mode, 'DaemonSet', `mode ${mode} from DaemonSet ${dsName} (--proxy-mode=${flags.proxyMode})${unknown}`);
  }
  if (cm.mode !== undefined) {
    const mode = normalizeMode(cm.mode);
    return found(mode, 'ConfigMap', `mode ${mode} from ConfigMap kube-system/kube-proxy (${cm.key}: mode: ${JSON.stringify(cm.mode)})`);
  }
  if (daemonSet && !flags.config) return found('iptables', 'DaemonSet', `mode iptables: DaemonSet ${dsName} sets no --proxy-mode and kube-proxy defaults to iptables`);
  if (daemonSet) return found('unknown', 'Unknown', `DaemonSet ${dsName} reads --config but no kube-proxy ConfigMap with a mode was found; set --kube-proxy-mode`);
  // DataPlaneV2 (Cilium in kube-proxy's place) looks the same from here: nothing documents how to tell it apart.
  return found('unknown', 'Unknown', 'no kube-system/kube-proxy DaemonSet (kube-proxy may run as a node binary on older clusters); set --kube-proxy-mode and --kube-proxy-version (on DataPlaneV2, where Cilium replaces kube-proxy: --kube-proxy-mode=none)');
}

/** Detects the cluster profile. Total: every combination of missing inputs yields a profile with a message. */
export function detectClusterProfile(inputs: ProfileInputs): ClusterProfile {
  const { daemonSet, flags = {} } = inputs;
  const container = kubeProxyContainer(daemonSet);
  const dsName = `${daemonSet?.metadata?.namespace ?? 'kube-system'}/${daemonSet?.metadata?.name ?? 'kube-proxy'}`;
  // The operator's flags win; '' (or a mode loopguard does not know) is not set.
  const { mode, source, notes } = detectMode(inputs, OVERRIDE_MODES.find((m) => m === flags.kubeProxyMode), container, dsName);

  // --- version
  const versionText = flags.kubeProxyVersion || (mode !== 'none' ? imageTag(container?.image) : undefined);
  if (mode !== 'none' && daemonSet && versionText === undefined) notes.push(`cannot read a version tag from image ${JSON.stringify(container?.image ?? '')}`);
  const version = versionText !== undefined ? parseKubeVersion(versionText) : undefined;
  if (versionText !== undefined && !version) notes.push(`kube-proxy image tag ${JSON.stringify(versionText)} is not vX.Y.Z[-tke.N]`);

  // --- capability
  // Without kube-proxy nothing binds the VIP; otherwise the operator flag wins over what the version says.
  const support = preventLoopbackSupport(version);
  const pl = String(flags.kubeProxyPreventLoopback ?? '');
  const flagged = mode === 'none' ? undefined : pl === 'true' ? true : pl === 'false' ? false : undefined;
  const supported: Tristate = mode === 'none' || flagged === false ? 'False' : flagged ? 'True' : support.supported;
  const upgradeTo = mode === 'none' || flagged ? undefined : support.upgradeTo;
  if (flagged !== undefined) notes.push(`prevent-loopback support ${supported} from operator flag`);
  else if (mode !== 'none' && (versionText !== undefined || daemonSet)) notes.push(support.message);

  return {
    kubeProxyMode: mode,
    ...(versionText !== undefined ? { kubeProxyVersion: versionText } : {}),
    preventLoopbackSupported: supported,
    vipBinding: vipBindingFor(mode, supported, version),
    ...(upgradeTo !== undefined ? { upgradeTo } : {}),
    source,
    message: notes.join('; '),
  };
}

/** The profile from the kube-proxy DaemonSet and ConfigMap as read (informer cache or a scan) and the flags. */
export function profileFrom(objects: { daemonSet?: unknown; configMap?: unknown }, flags: ProfileFlags): ClusterProfile {
  return detectClusterProfile({
    ...(objects.daemonSet ? { daemonSet: objects.daemonSet as DaemonSetFacts } : {}),
    ...(objects.configMap ? { configMap: objects.configMap as ConfigMapFacts } : {}),
    flags,
  });
}
