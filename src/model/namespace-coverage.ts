// Pure: which namespaces a ClusterLoopbackPolicy covers, and in which mode (docs/cluster-policy.md §2–§4): those its
// namespaceSelector matches (empty: all, as metav1.LabelSelector), the system ones left out unless `systemNamespaces:
// Include`; each in the mode of its first matching modeOverride, else spec.mode.
import { SYSTEM_NAMESPACES, type ResolvedClusterPolicySpec } from '../api/clusterloopbackpolicy.js';
import type { PolicyMode } from '../api/loopbackpolicy.js';
import { matchesSelector } from './selection.js';

export interface NamespaceFacts {
  name: string;
  labels?: Readonly<Record<string, string>>;
}

export interface Coverage {
  /** Covered namespace → its mode. */
  modes: ReadonlyMap<string, PolicyMode>;
  /** System namespaces the selector matched but `systemNamespaces: Exclude` left out, sorted. */
  excluded: readonly string[];
}

type CoverageSpec = Pick<ResolvedClusterPolicySpec, 'mode' | 'namespaceSelector' | 'systemNamespaces' | 'modeOverrides'>;

/** Whether `namespace` is one `systemNamespaces: Exclude` leaves out (Kubernetes' own, and loopguard's). */
export function isSystemNamespace(namespace: string, ownNamespace: string | undefined): boolean {
  return SYSTEM_NAMESPACES.includes(namespace) || (ownNamespace !== undefined && ownNamespace !== '' && namespace === ownNamespace);
}

/**
 * The mode a namespace with these labels gets: the first override that matches, else spec.mode. Also used for a
 * namespace that left the policy: its targets are released if this says Enforce (§4).
 */
export function namespaceMode(spec: Pick<CoverageSpec, 'mode' | 'modeOverrides'>, labels: Readonly<Record<string, string>> | undefined): PolicyMode {
  return spec.modeOverrides.find((o) => matchesSelector(o.namespaceSelector, labels))?.mode ?? spec.mode;
}

/** Whether the policy covers one namespace: its mode, 'excluded' (a system namespace Exclude left out), or undefined. */
export function coverageOf(spec: CoverageSpec, ns: NamespaceFacts, ownNamespace?: string): PolicyMode | 'excluded' | undefined {
  if (!matchesSelector(spec.namespaceSelector, ns.labels)) return undefined;
  if (spec.systemNamespaces === 'Exclude' && isSystemNamespace(ns.name, ownNamespace)) return 'excluded';
  return namespaceMode(spec, ns.labels);
}

/** The namespaces the policy covers among `namespaces`, each with its mode, and the system ones it left out. */
export function coveredNamespaces(spec: CoverageSpec, namespaces: readonly NamespaceFacts[], ownNamespace?: string): Coverage {
  const modes = new Map<string, PolicyMode>();
  const excluded: string[] = [];
  for (const ns of namespaces) {
    const c = coverageOf(spec, ns, ownNamespace);
    if (c === 'excluded') excluded.push(ns.name);
    else if (c !== undefined) modes.set(ns.name, c);
  }
  return { modes, excluded: excluded.sort() };
}
