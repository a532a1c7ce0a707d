// Pure: the rule for an object whose settings reach several targets' CLBs, a TkeServiceConfig or an EnvoyProxy
// (docs/security.md "Shared resources" says why): loopguard changes one only if every target it reaches is selected,
// not opted out, and managed by the same policy, else the target is Conflict (SharedConfig / SharedEnvoyProxy) and
// nothing is written. An EnvoyProxy outside the Gateway's namespace reaches other namespaces' Gateways: only a
// ClusterLoopbackPolicy changes one.
import { IngressAnnotation } from '../api/annotations.js';
import { CLUSTER_KIND } from '../api/clusterloopbackpolicy.js';
import { assessment, type Assessment } from '../model/assessment-result.js';
import { envoyProxyKey, targetKey, writableEnvoyProxy, type EnvoyProxyRef } from '../model/facts.js';
import { describeOwner, policyRefOf } from '../model/record-registry.js';
import { namesIn } from './shared-clb.js';
import { configKey, type SharedUser, type Snapshot, type TargetSnapshot } from './snapshot.js';

/** Verdicts under which loopguard would change nothing on the target anyway: the rule has nothing to hold back. */
const NOT_ACTING = new Set(['Skipped', 'NotApplicable', 'Conflict']);

/**
 * The other targets the shared object loopguard would change for the target (an Ingress's TkeServiceConfig, a
 * Gateway's EnvoyProxy: `ep`) reaches that the snapshot's policy may not change.
 */
function configSharers(s: Snapshot, t: TargetSnapshot, ep: EnvoyProxyRef | undefined): SharedUser[] {
  const key = t.facts.kind === 'Ingress' ? t.config && configKey(t.facts.namespace, t.config.name) : ep && envoyProxyKey(ep);
  const self = targetKey(t.facts);
  return (key ? (s.shared.configs.get(key) ?? []) : []).filter((u) => targetKey(u.facts) !== self && (u.optedOut || u.policy !== s.owner));
}

function why(u: SharedUser, owner: string): string {
  if (u.optedOut) return 'opted out';
  return u.policy ? `managed by ${describeOwner(u.policy)}` : `not selected by ${describeOwner(owner)}`;
}

const OWN_ENVOY_PROXY = "give this Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef; mergeType: StrategicMerge keeps its class's settings)";

/** The target's verdict when what it shares forbids the change; undefined when nothing does. */
export function sharedConfigAssessment(s: Snapshot, t: TargetSnapshot, assessed: Assessment): Assessment | undefined {
  if (NOT_ACTING.has(assessed.verdict)) return undefined;
  const conflict = (rootCause: 'SharedConfig' | 'SharedEnvoyProxy', message: string): Assessment =>
    assessment(assessed.target, { ...(assessed.loadBalancerId !== undefined ? { loadBalancerId: assessed.loadBalancerId } : {}), rootCause, warnings: assessed.warnings, message });
  const ep = writableEnvoyProxy(t.facts);
  if (ep && ep.namespace !== t.facts.namespace && policyRefOf(s.owner).kind !== CLUSTER_KIND) {
    return conflict('SharedEnvoyProxy', `${epName(ep)} is outside this namespace (its class's) and reaches other namespaces' Gateways: only a ClusterLoopbackPolicy changes it; ${OWN_ENVOY_PROXY}`);
  }
  const others = configSharers(s, t, ep);
  if (others.length === 0) return undefined;
  // The others by kind and name with why each stops the change, those of other namespaces only counted (namesIn).
  const list = namesIn(t.facts.namespace, others, others[0]?.facts.kind ?? 'target', (u) => `${u.facts.kind} ${u.facts.name} (${why(u, s.owner)})`, ' and ');
  if (ep) return conflict('SharedEnvoyProxy', `${epName(ep)} also reaches ${list}: Envoy Gateway copies its annotations onto their Services too, so loopguard changes nothing through it. ${OWN_ENVOY_PROXY[0]!.toUpperCase()}${OWN_ENVOY_PROXY.slice(1)}, or bring the others under this policy`);
  return conflict(
    'SharedConfig',
    `TkeServiceConfig ${t.config?.name ?? ''} also governs ${list}: TKE applies it to their CLBs too, so loopguard changes nothing through it. ` +
      `Give this Ingress a TkeServiceConfig of its own (${IngressAnnotation.TkeServiceConfig}), or bring the others under this policy`,
  );
}

function epName(ep: EnvoyProxyRef): string {
  return `EnvoyProxy ${ep.namespace}/${ep.name}`;
}
