// Pure: the data of the admission policy's parameter object, the ConfigMap `loopguard-admission-params` in the
// operator's namespace (the binding's paramRef names it: config/admission). The policy cannot read the cluster profile
// or the LoopbackPolicies itself; the operator keeps this object true (src/admission/params-writer.ts writes it when
// it changes). Without it the policy says nothing (parameterNotFoundAction: Allow).
//
// Keys (ConfigMap keys allow [-._a-zA-Z0-9]; namespace names are DNS labels, so they fit):
//   kubeProxy, kubeProxyMode, kubeProxyVersion, preventLoopbackSupported, upgradeTo  what the messages name
//   risk.<shape>            root cause the model gives that shape here (src/admission/shapes.ts); absent = no warning
//   enforce.<Kind>.<ns>     the Enforce policies of namespace <ns> that manage <Kind>s (its objects need no warning)
import { withSpecDefaults, type LoopbackPolicy, type TargetKind } from '../api/loopbackpolicy.js';
import { CLUSTER_KIND, withClusterSpecDefaults, type ClusterLoopbackPolicy } from '../api/clusterloopbackpolicy.js';
import { coveredNamespaces, type NamespaceFacts } from '../model/namespace-coverage.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import { riskyShapes } from './shapes.js';

export const ADMISSION_PARAMS_NAME = 'loopguard-admission-params';

/** What `upgradeTo` says when the profile names no version (the model's wording: assess-service.ts). */
export const UPGRADE_FALLBACK = 'a TKE build that supports prevent-loopback';

export interface AdmissionParamsInput {
  profile: ClusterProfile;
  policies: readonly LoopbackPolicy[];
  /** Cluster policies with the namespaces they cover (docs/cluster-policy.md): where one enforces, no warning either. */
  clusterPolicies?: readonly ClusterLoopbackPolicy[];
  namespaces?: readonly NamespaceFacts[];
  ownNamespace?: string;
  /** The operator carries out Enforce policies (without it they only diagnose, and cover nothing). */
  enforcing: boolean;
}

/**
 * The namespaces whose <Kind>s an Enforce policy manages. A policy with a label selector counts for its whole
 * namespace: the admission check cannot evaluate selectors from the parameters, and it errs on the quiet side (the
 * objects a selector leaves out still get Events, metrics and `loopguard doctor`). A policy being deleted covers
 * nothing: loopguard is giving its targets back.
 */
export function enforcedNamespaces(policies: readonly LoopbackPolicy[], kind: TargetKind, cluster: Pick<AdmissionParamsInput, 'clusterPolicies' | 'namespaces' | 'ownNamespace'> = {}): Map<string, string[]> {
  const out = new Map<string, string[]>();
  // A cluster policy counts in each namespace it covers in Enforce (a modeOverride, or spec.mode).
  for (const c of cluster.clusterPolicies ?? []) {
    if (!c.metadata.name || c.metadata.deletionTimestamp) continue;
    const spec = withClusterSpecDefaults(c.spec);
    if (!spec.targets.includes(kind)) continue;
    for (const [ns, mode] of coveredNamespaces(spec, cluster.namespaces ?? [], cluster.ownNamespace).modes) {
      if (mode === 'Enforce') out.set(ns, [...(out.get(ns) ?? []), `${CLUSTER_KIND}/${c.metadata.name}`]);
    }
  }
  for (const p of policies) {
    const ns = p.metadata.namespace;
    if (!ns || !p.metadata.name || p.metadata.deletionTimestamp) continue;
    const spec = withSpecDefaults(p.spec);
    if (spec.mode !== 'Enforce' || !spec.targets.includes(kind)) continue;
    out.set(ns, [...(out.get(ns) ?? []), p.metadata.name]);
  }
  for (const [ns, names] of out) out.set(ns, names.sort());
  return out;
}

/** The operator keeps one profile object until kube-proxy changes: its shapes are assessed once. */
const shapesByProfile = new WeakMap<ClusterProfile, Map<string, string>>();

function risksOf(profile: ClusterProfile): Map<string, string> {
  let risks = shapesByProfile.get(profile);
  if (!risks) shapesByProfile.set(profile, (risks = riskyShapes(profile)));
  return risks;
}

export function buildAdmissionParams(input: AdmissionParamsInput): Record<string, string> {
  const { profile } = input;
  const data: Record<string, string> = {
    kubeProxy: `kube-proxy ${profile.kubeProxyMode}${profile.kubeProxyVersion ? ` ${profile.kubeProxyVersion}` : ''}`,
    kubeProxyMode: profile.kubeProxyMode,
    preventLoopbackSupported: profile.preventLoopbackSupported,
    upgradeTo: profile.upgradeTo ?? UPGRADE_FALLBACK,
  };
  if (profile.kubeProxyVersion) data['kubeProxyVersion'] = profile.kubeProxyVersion;
  for (const [shape, cause] of risksOf(profile)) data[`risk.${shape}`] = cause;
  if (input.enforcing) {
    for (const kind of ['Service', 'Ingress'] as const) {
      for (const [ns, names] of enforcedNamespaces(input.policies, kind, input)) data[`enforce.${kind}.${ns}`] = names.join(',');
    }
  }
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => a.localeCompare(b)));
}

/** Equal data: nothing to write. */
export function sameData(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b).length && ka.every((k) => a?.[k] === b[k]);
}
