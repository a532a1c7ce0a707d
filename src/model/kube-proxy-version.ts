// kube-proxy image tags (`vX.Y.Z-tke.N`, tencent-cloud.md §6) and the prevent-loopback capability of TKE builds
// (the minimums: TKE-LOOPBACK, tencent-cloud.md §7; the revision history: §2).
import type { Tristate } from '../api/loopbackpolicy.js';

export interface KubeVersion {
  major: number;
  minor: number;
  patch: number;
  /** TKE build revision N of `-tke.N`; undefined for non-TKE (upstream) builds. */
  tke?: number;
}

const TAG = /^v?(\d+)\.(\d+)\.(\d+)(?:-tke\.(\d+))?$/;

/** Parses `v1.20.6-tke.12` or `v1.30.2`; anything else (`latest`, `v1.20.6-rc.1`) → undefined. */
export function parseKubeVersion(tag: string): KubeVersion | undefined {
  const m = TAG.exec(tag.trim());
  if (!m) return undefined;
  const [, major, minor, patch, tke] = m;
  return { major: Number(major), minor: Number(minor), patch: Number(patch), ...(tke !== undefined ? { tke: Number(tke) } : {}) };
}

/** Orders versions by major, minor, patch, then TKE revision (a build without revision sorts first). */
export function compareKubeVersions(a: KubeVersion, b: KubeVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || (a.tke ?? -1) - (b.tke ?? -1);
}

/** Minimum TKE kube-proxy per minor line that binds the CLB VIP for prevent-loopback (TKE-LOOPBACK). */
export const PREVENT_LOOPBACK_MINIMUMS: Readonly<Record<number, string>> = Object.freeze({
  12: 'v1.12.4-tke.30',
  14: 'v1.14.3-tke.24',
  16: 'v1.16.3-tke.25',
  18: 'v1.18.4-tke.20',
  20: 'v1.20.6-tke.12',
});

/** First minor that TKE released after the fix; assumed to include it (no TKE document lists it). */
export const FIRST_MINOR_ASSUMED_SUPPORTED = 22;
/** TKE revision history: "lb vip binding issue fixed (kube-proxy)" (tencent-cloud.md §2). */
export const VIP_BINDING_FIX_1_28 = 'v1.28.3-tke.3';

/** Decides whether a kube-proxy version honours `service.cloud.tencent.com/prevent-loopback`. */
export function preventLoopbackSupport(version: KubeVersion | undefined) {
  const tke = (supported: Tristate, message: string, upgradeTo?: string) => ({ supported, ...(upgradeTo ? { upgradeTo } : {}), message });
  if (!version) return tke('Unknown', 'kube-proxy version unknown; set the operator flag --kube-proxy-version (e.g. v1.20.6-tke.12) or use l4.preventLoopback: Always');
  const v = `v${version.major}.${version.minor}.${version.patch}${version.tke !== undefined ? `-tke.${version.tke}` : ''}`;
  if (version.tke === undefined) return tke('False', `kube-proxy ${v} is not a TKE build (no -tke.N suffix); only TKE builds know the prevent-loopback annotation`);
  if (version.major !== 1) return tke('Unknown', `kube-proxy ${v}: unexpected major version`);
  const minimum = PREVENT_LOOPBACK_MINIMUMS[version.minor];
  if (minimum !== undefined) {
    if (compareKubeVersions(version, parseKubeVersion(minimum) as KubeVersion) >= 0) return tke('True', `kube-proxy ${v} supports prevent-loopback (needs ${minimum} or later)`);
    return tke('False', `kube-proxy ${v} is older than ${minimum}; upgrade the kube-system/kube-proxy DaemonSet image to ${minimum} or later`, minimum);
  }
  const oldest = PREVENT_LOOPBACK_MINIMUMS[12];
  if (version.minor < 12) {
    return tke('False', `kube-proxy ${v}: no 1.${version.minor} build supports prevent-loopback; upgrade the cluster to 1.12 or later (kube-proxy ${oldest} or later)`, oldest);
  }
  if (version.minor >= FIRST_MINOR_ASSUMED_SUPPORTED) {
    const note =
      version.minor === 28 && compareKubeVersions(version, parseKubeVersion(VIP_BINDING_FIX_1_28) as KubeVersion) < 0
        ? `; note: TKE's revision history lists "lb vip binding issue fixed" in ${VIP_BINDING_FIX_1_28}, consider upgrading`
        : '';
    return tke('True', `kube-proxy ${v}: assumed to support prevent-loopback (TKE lines from 1.${FIRST_MINOR_ASSUMED_SUPPORTED} were released after the fix)${note}`);
  }
  // Odd minors (1.13 … 1.21) are not TKE release lines; nothing documents them either way.
  return tke(
    'Unknown',
    `kube-proxy ${v}: TKE documents no prevent-loopback minimum for 1.${version.minor}; set --kube-proxy-prevent-loopback=true if you know it supports it, or upgrade to ${PREVENT_LOOPBACK_MINIMUMS[20]} or later`,
  );
}
