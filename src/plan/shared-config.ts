// Pure: the rule for a TkeServiceConfig that governs several Ingresses (docs/security.md "Shared resources"). TKE
// applies a config to the CLB of every Ingress that names it, so a change made for one reaches all of them. loopguard
// changes a config only if every Ingress naming it is selected, not opted out, and managed by the same policy;
// otherwise the target is Conflict / SharedConfig, the message names the others and the way out (a config of its
// own), and nothing is written.
import { IngressAnnotation } from '../api/annotations.js';
import { assessment, type Assessment } from '../model/assessment-result.js';
import { targetKey } from '../model/facts.js';
import { describeOwner } from '../model/record-registry.js';
import { configKey, type SharedUser, type Snapshot, type TargetSnapshot } from './snapshot.js';

/** Verdicts under which loopguard would change nothing on the target anyway: the rule has nothing to hold back. */
const NOT_ACTING = new Set(['Skipped', 'NotApplicable', 'Conflict']);

/** Names of the others shown in the message; the rest are counted. */
const MAX_NAMED = 5;

/** The other Ingresses on the target's TkeServiceConfig that the snapshot's policy may not change. */
export function configSharers(s: Snapshot, t: TargetSnapshot): SharedUser[] {
  if (t.facts.kind !== 'Ingress' || !t.config) return [];
  const users = s.shared.configs.get(configKey(t.facts.namespace, t.config.name)) ?? [];
  const self = targetKey(t.facts);
  return users.filter((u) => targetKey(u.facts) !== self && (u.optedOut || u.policy !== s.owner));
}

function why(u: SharedUser, owner: string): string {
  if (u.optedOut) return 'opted out';
  return u.policy ? `managed by ${describeOwner(u.policy)}` : `not selected by ${describeOwner(owner)}`;
}

/** The target's verdict when its config is shared with Ingresses the policy may not change; undefined when it is not. */
export function sharedConfigAssessment(s: Snapshot, t: TargetSnapshot, assessed: Assessment): Assessment | undefined {
  if (NOT_ACTING.has(assessed.verdict) || !t.config) return undefined;
  const others = configSharers(s, t);
  if (others.length === 0) return undefined;
  const named = others.slice(0, MAX_NAMED).map((u) => `Ingress ${u.facts.name} (${why(u, s.owner)})`);
  const more = others.length > MAX_NAMED ? ` and ${others.length - MAX_NAMED} more` : '';
  return assessment(assessed.target, {
    ...(assessed.loadBalancerId !== undefined ? { loadBalancerId: assessed.loadBalancerId } : {}),
    rootCause: 'SharedConfig',
    warnings: assessed.warnings,
    message:
      `TkeServiceConfig ${t.config.name} also governs ${named.join(', ')}${more}: TKE applies it to their CLBs too, so loopguard changes nothing through it. ` +
      `Give this Ingress a TkeServiceConfig of its own (${IngressAnnotation.TkeServiceConfig}), or bring the others under this policy`,
  });
}
