// What changed since a policy's last round, as the units of planning it concerns (issue 39: work follows change).
// The unit is every target bound to one CLB and every Ingress governed by one TkeServiceConfig, joined where they
// overlap (shared-CLB and shared-config decisions need them together), or one target without either. A
// TkeServiceConfig concerns the Ingresses it governs; a namespace (relabelled, or another policy's claims there) its
// targets; a policy-wide input (the policy's spec, the cluster profile, leadership gained) all of them. Informer
// events and CLB reads that differ from the cached observation add changes (routing.ts); a round takes them, plans
// exactly the targets they concern and keeps the others' outcomes (policy-controller.ts). Pure.
import { targetKey, type TargetFacts } from '../../model/facts.js';
import { governingConfigName } from '../../plan/l7.js';
import { configKey } from '../../plan/snapshot.js';

export type Change = { all: true } | { clb: string } | { target: string } | { namespace: string } | { config: string };

export const EVERYTHING: Change = { all: true };

export class PendingChanges {
  all = false;
  readonly clbs = new Set<string>();
  readonly targets = new Set<string>();
  readonly namespaces = new Set<string>();
  readonly configs = new Set<string>();

  add(c: Change): void {
    if ('all' in c) this.all = true;
    else if ('clb' in c) this.clbs.add(c.clb);
    else if ('target' in c) this.targets.add(c.target);
    else if ('config' in c) this.configs.add(c.config);
    else this.namespaces.add(c.namespace);
  }
}

type Plannable = Pick<TargetFacts, 'kind' | 'namespace' | 'name' | 'loadBalancerId' | 'annotations'>;

/** The TkeServiceConfig governing an Ingress (none for other targets). */
function configOf(t: Plannable): string | undefined {
  const name = t.kind === 'Ingress' ? governingConfigName(t.name, t.annotations) : undefined;
  return name ? configKey(t.namespace, name) : undefined;
}

/**
 * The targets to plan: those a change concerns or never planned (`planned` does not know them), and with them every
 * target sharing a CLB or a TkeServiceConfig with one planned. In the targets' order.
 */
export function targetsToPlan<T extends Plannable>(targets: readonly T[], pending: PendingChanges, planned: (key: string) => boolean): T[] {
  if (pending.all) return [...targets];
  // Every target by the CLB and the config it belongs to; from what a change concerns, joined until nothing more shares
  // a CLB or a config with what is chosen (an Ingress's config-mate may sit on another CLB). Each target is taken once.
  const units = new Map<string, number[]>();
  const configs = targets.map(configOf);
  const unitsOf = targets.map((t, i) => [t.loadBalancerId !== undefined ? `clb ${t.loadBalancerId}` : undefined, configs[i]].filter((u): u is string => u !== undefined));
  unitsOf.forEach((us, i) => {
    for (const u of us) {
      const members = units.get(u);
      if (members) members.push(i);
      else units.set(u, [i]);
    }
  });
  const chosen = new Set<number>();
  const open: number[] = [];
  targets.forEach((t, i) => {
    const key = targetKey(t);
    const config = configs[i];
    if (!planned(key) || pending.targets.has(key) || pending.namespaces.has(t.namespace) || (t.loadBalancerId !== undefined && pending.clbs.has(t.loadBalancerId)) || (config !== undefined && pending.configs.has(config))) open.push(i);
  });
  const joined = new Set<string>();
  for (let i = open.pop(); i !== undefined; i = open.pop()) {
    if (chosen.has(i)) continue;
    chosen.add(i);
    for (const u of unitsOf[i]!) {
      if (joined.has(u)) continue;
      joined.add(u);
      open.push(...(units.get(u) ?? []));
    }
  }
  return targets.filter((_, i) => chosen.has(i));
}
