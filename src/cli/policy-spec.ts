// Pure: which LoopbackPolicy's spec a target is assessed with. The operator assesses a target under the policy that
// manages it (the one holding its record, else the oldest that selects it: src/model/conflicts.ts); the scans do the
// same, so their verdicts match the policy's status. A target no policy selects is assessed with the defaults — what
// an Audit policy without settings (config/samples/audit-policy.yaml) reports.
import { withSpecDefaults, type LoopbackPolicy, type ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import { policyIdentity, resolveConflicts, type Claim } from '../model/conflicts.js';
import { targetKey, type TargetFacts, type TargetRef } from '../model/facts.js';
import { selects } from '../model/selection.js';

export interface PolicyChoice {
  spec: ResolvedPolicySpec;
  /** `<namespace>/<name>`; absent when no policy selects the target. */
  policy?: string;
}

export const DEFAULT_CHOICE: PolicyChoice = { spec: withSpecDefaults({ mode: 'Audit' }) };

/**
 * The policy choice per target key (`Kind/namespace/name`). `holder` names the policy holding a target's
 * LoopbackRecord, which keeps it whatever the ages say.
 */
export function choosePolicies(
  targets: readonly TargetFacts[],
  policies: readonly LoopbackPolicy[],
  holder: (t: TargetRef) => string | undefined = () => undefined,
): Map<string, PolicyChoice> {
  const claims: Claim[] = [];
  const specs = new Map<string, ResolvedPolicySpec>();
  for (const p of policies) {
    const id = policyIdentity(p);
    const spec = withSpecDefaults(p.spec);
    specs.set(`${id.namespace}/${id.name}`, spec);
    for (const t of targets) if (selects({ namespace: id.namespace, spec }, t)) claims.push({ policy: id, target: t });
  }
  const owners = resolveConflicts(claims, holder);
  const out = new Map<string, PolicyChoice>();
  for (const t of targets) {
    const winner = owners.get(targetKey(t))?.winner;
    const key = winner ? `${winner.namespace}/${winner.name}` : undefined;
    const spec = key ? specs.get(key) : undefined;
    out.set(targetKey(t), key && spec ? { spec, policy: key } : DEFAULT_CHOICE);
  }
  return out;
}
