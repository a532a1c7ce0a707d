// What changed since a policy's last round, as the units of planning it concerns (issue 39: work follows change).
// The unit is one CLB with every target bound to it, since shared-CLB and shared-config decisions need them
// together, or one target without a CLB. A namespace's TkeServiceConfig concerns its targets; a policy-wide input
// (the policy's spec, another policy's claims, the cluster profile, leadership gained) concerns all of them. Informer
// events and CLB reads that differ from the cached observation add changes (routing.ts); a round takes them, plans
// exactly the targets they concern and keeps the others' outcomes (policy-controller.ts). Pure.
import { targetKey, type TargetFacts } from '../../model/facts.js';

export type Change = { all: true } | { clb: string } | { target: string } | { namespace: string };

export const EVERYTHING: Change = { all: true };

export class PendingChanges {
  all = false;
  readonly clbs = new Set<string>();
  readonly targets = new Set<string>();
  readonly namespaces = new Set<string>();

  add(c: Change): void {
    if ('all' in c) this.all = true;
    else if ('clb' in c) this.clbs.add(c.clb);
    else if ('target' in c) this.targets.add(c.target);
    else this.namespaces.add(c.namespace);
  }
}

/**
 * The targets to plan: those a change concerns or never planned (`planned` does not know them), and with each of
 * them every other target on its CLB. In the targets' order.
 */
export function targetsToPlan<T extends Pick<TargetFacts, 'kind' | 'namespace' | 'name' | 'loadBalancerId'>>(targets: readonly T[], pending: PendingChanges, planned: (key: string) => boolean): T[] {
  if (pending.all) return [...targets];
  const touched = (t: T) => {
    const key = targetKey(t);
    return !planned(key) || pending.targets.has(key) || pending.namespaces.has(t.namespace) || (t.loadBalancerId !== undefined && pending.clbs.has(t.loadBalancerId));
  };
  const clbs = new Set(targets.flatMap((t) => (t.loadBalancerId !== undefined && touched(t) ? [t.loadBalancerId] : [])));
  return targets.filter((t) => (t.loadBalancerId !== undefined ? clbs.has(t.loadBalancerId) : touched(t)));
}
