// Which Services and Ingresses a policy selects: same namespace, a kind in spec.targets, and the label
// selector (metav1.LabelSelector semantics: matchLabels AND every matchExpression; empty selects all).
import type { LabelSelector, LabelSelectorRequirement, ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import type { TargetRef } from './facts.js';

export type SelectableTarget = TargetRef & { labels?: Readonly<Record<string, string>> };

function matchesRequirement(req: LabelSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      // apimachinery rejects In/NotIn without values (the CRD does too); an empty In matches nothing.
      return has && values.includes(labels[req.key] as string);
    case 'NotIn':
      return !has || !values.includes(labels[req.key] as string);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      // Unknown operator (cannot pass the CRD's enum): select nothing rather than everything.
      return false;
  }
}

/** metav1.LabelSelector matching; an absent or empty selector matches every object. */
export function matchesSelector(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  const labelsMatch = Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => l[key] === value);
  return labelsMatch && (selector?.matchExpressions ?? []).every((req) => matchesRequirement(req, l));
}

export function selects(policy: { namespace: string; spec: ResolvedPolicySpec }, target: SelectableTarget): boolean {
  return target.namespace === policy.namespace && policy.spec.targets.includes(target.kind) && matchesSelector(policy.spec.selector, target.labels);
}

