// What changed since a policy's last round, as the units of planning it concerns (docs/architecture.md §3 "The unit of
// work"). routing.ts adds the changes; a round plans exactly the targets they concern. Pure.
import { targetKey, type TargetFacts } from '../../model/facts.js';
import { governingConfigName } from '../../plan/l7.js';
import { configKey } from '../../plan/snapshot.js';

export type Change = { all: true } | { clb: string } | { target: string } | { namespace: string } | { config: string };

export const EVERYTHING: Change = { all: true };

export class PendingChanges {
  all = false;
  /** The targets (targetKey), CLBs and TkeServiceConfigs (their units, unitsOf) a change concerns. */
  readonly keys = new Set<string>();
  readonly namespaces = new Set<string>();

  add(c: Change): void {
    if ('all' in c) this.all = true;
    else if ('namespace' in c) this.namespaces.add(c.namespace);
    else this.keys.add('clb' in c ? clbUnit(c.clb) : 'config' in c ? c.config : c.target);
  }
}

const clbUnit = (id: string): string => `clb ${id}`;

type Plannable = Pick<TargetFacts, 'kind' | 'namespace' | 'name' | 'loadBalancerId' | 'annotations'>;

/**
 * The targets to plan: those a change concerns or never planned (`planned` does not know them), and with them every
 * target sharing a CLB or a TkeServiceConfig with one planned. In the targets' order.
 */
export function targetsToPlan<T extends Plannable>(targets: readonly T[], pending: PendingChanges, planned: (key: string) => boolean): T[] {
  if (pending.all) return [...targets];
  // Every target by the CLB and the config it belongs to; from what a change concerns, joined until nothing more shares
  // a CLB or a config with what is chosen (an Ingress's config-mate may sit on another CLB). Each target is taken once.
  const units = new Map<string, number[]>();
  const unitsOf = targets.map((t) => {
    const config = t.kind === 'Ingress' ? governingConfigName(t.name, t.annotations) : undefined;
    return [t.loadBalancerId !== undefined ? clbUnit(t.loadBalancerId) : undefined, config ? configKey(t.namespace, config) : undefined].filter((u): u is string => u !== undefined);
  });
  unitsOf.forEach((us, i) => us.forEach((u) => (units.get(u) ?? units.set(u, []).get(u)!).push(i)));
  const chosen = new Set<number>();
  const open: number[] = [];
  targets.forEach((t, i) => {
    const key = targetKey(t);
    if (!planned(key) || pending.namespaces.has(t.namespace) || [key, ...unitsOf[i]!].some((u) => pending.keys.has(u))) open.push(i);
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
