// Pure: a ClusterLoopbackPolicy's status (docs/cluster-policy.md §7 has its fields and bounds): the namespaced kind's,
// with each target's namespace, plus the namespaces it covers in which mode and one line per namespace.
import { MAX_STATUS_NAMESPACES, type ClusterLoopbackPolicyStatus, type NamespaceSummary } from '../api/clusterloopbackpolicy.js';
import type { PolicyMode } from '../api/loopbackpolicy.js';
import { buildPolicyStatus, type PolicyStatusInput } from './status.js';
import { countVerdicts } from './verdict-counts.js';

export interface ClusterStatusInput extends Omit<PolicyStatusInput, 'mode' | 'enforcedIn'> {
  /** Covered namespace → its mode. */
  namespaces: ReadonlyMap<string, PolicyMode>;
  /** System namespaces the selector matched but Exclude left out. */
  excluded: readonly string[];
  /** Namespace → the name of its Report, where one was written. */
  reports?: ReadonlyMap<string, string>;
}

/** The byNamespace order: at risk, then unsupported, conflict, pending counts, descending; then the name. */
function compareNamespaces({ counts: x, namespace: m }: NamespaceSummary, { counts: y, namespace: n }: NamespaceSummary): number {
  return y.atRisk - x.atRisk || y.unsupported - x.unsupported || y.conflict - x.conflict || y.pending - x.pending || m.localeCompare(n);
}

/** Audit unless some namespace enforces: the Ready message says what Enforce would do only when nothing enforces. */
export function overallMode(namespaces: ReadonlyMap<string, PolicyMode>): PolicyMode {
  return [...namespaces.values()].includes('Enforce') ? 'Enforce' : 'Audit';
}

export function buildClusterPolicyStatus(input: ClusterStatusInput): ClusterLoopbackPolicyStatus {
  const base = buildPolicyStatus({ ...input, mode: overallMode(input.namespaces), enforcedIn: (ns) => input.namespaces.get(ns) === 'Enforce' });
  const byNs = new Map<string, PolicyStatusInput['outcomes'][number][]>();
  for (const ns of input.namespaces.keys()) byNs.set(ns, []);
  for (const o of input.outcomes) byNs.get(o.assessment.target.namespace)?.push(o);
  const summaries: NamespaceSummary[] = [...byNs].map(([namespace, outcomes]) => {
    const report = input.reports?.get(namespace);
    return { namespace, mode: input.namespaces.get(namespace) ?? 'Audit', counts: countVerdicts(outcomes.map((o) => o.assessment)), ...(report ? { report } : {}) };
  });
  summaries.sort(compareNamespaces);
  const modes = [...input.namespaces.values()];
  return {
    ...base,
    namespaces: { selected: input.namespaces.size, enforce: modes.filter((m) => m === 'Enforce').length, audit: modes.filter((m) => m === 'Audit').length, excluded: input.excluded.length },
    ...(input.excluded.length > 0 ? { excludedNamespaces: input.excluded.slice(0, 8) } : {}),
    byNamespace: summaries.slice(0, MAX_STATUS_NAMESPACES),
    byNamespaceTruncated: summaries.length > MAX_STATUS_NAMESPACES,
  } as ClusterLoopbackPolicyStatus;
}
