// Pure: the data of the admission policy's parameter object, the ConfigMap `loopguard-admission-params` in the
// operator's namespace (the binding's paramRef names it: config/admission). The policy cannot read the cluster profile
// or the LoopbackPolicies itself; the operator keeps this object true (src/admission/params-writer.ts writes it when
// it changes). Without it the policy says nothing (parameterNotFoundAction: Allow).
//
// Keys (ConfigMap keys allow [-._a-zA-Z0-9]; namespace names are DNS labels, so they fit):
//   kubeProxy, kubeProxyMode, kubeProxyVersion, preventLoopbackSupported, upgradeTo  what the messages name
//   risk.<shape>            root cause the model gives that shape here (src/admission/shapes.ts); absent = no warning
//   enforce.<Kind>.<ns>     the policy that manages <Kind>s of namespace <ns> when it enforces them (its objects need no
//                           warning): the winner model/conflicts.ts picks, as for any target there
import { withSpecDefaults, type LoopbackPolicy, type TargetKind } from '../api/loopbackpolicy.js';
import { CLUSTER_KIND, withClusterSpecDefaults, type ClusterLoopbackPolicy } from '../api/clusterloopbackpolicy.js';
import { clusterPolicyIdentity, describePolicy, policyIdentity, resolveConflicts, type Claim } from '../model/conflicts.js';
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
 * The namespaces whose <Kind>s a policy manages in Enforce, each with that policy's name (a cluster policy's as
 * `ClusterLoopbackPolicy/<name>`). It is the winner the operator's resolution (model/conflicts.ts, docs/cluster-policy.md
 * §5) gives a <Kind> that every policy covering the namespace selects, and its mode: a policy that loses there covers
 * nothing. The admission check cannot evaluate selectors from the parameters, so a policy with a label selector counts
 * for its whole namespace: it errs on the quiet side (the objects a selector leaves out still get Events, metrics and
 * `loopguard doctor`). A policy being deleted covers nothing: loopguard is giving its targets back.
 */
export function enforcedNamespaces(policies: readonly LoopbackPolicy[], kind: TargetKind, cluster: Pick<AdmissionParamsInput, 'clusterPolicies' | 'namespaces' | 'ownNamespace'> = {}): Map<string, string[]> {
  // One claim per policy and namespace, on a stand-in target of the kind: the resolution groups them per namespace.
  const claims: Claim[] = [];
  const target = (namespace: string) => ({ kind, namespace, name: '' });
  for (const c of cluster.clusterPolicies ?? []) {
    if (!c.metadata.name || c.metadata.deletionTimestamp) continue;
    const spec = withClusterSpecDefaults(c.spec);
    if (!spec.targets.includes(kind)) continue;
    const policy = clusterPolicyIdentity(c);
    for (const [ns, mode] of coveredNamespaces(spec, cluster.namespaces ?? [], cluster.ownNamespace).modes) claims.push({ policy, target: target(ns), mode });
  }
  for (const p of policies) {
    if (!p.metadata.namespace || !p.metadata.name || p.metadata.deletionTimestamp) continue;
    const spec = withSpecDefaults(p.spec);
    if (spec.targets.includes(kind)) claims.push({ policy: policyIdentity(p), target: target(p.metadata.namespace), mode: spec.mode });
  }
  const out = new Map<string, string[]>();
  for (const r of resolveConflicts(claims).values()) {
    if (r.winnerMode === 'Enforce') out.set(r.target.namespace, [r.winner.kind === CLUSTER_KIND ? describePolicy(r.winner) : r.winner.name]);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
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
