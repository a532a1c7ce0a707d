// What changed since a policy's last round, as the units of planning it concerns (issue 39: work follows change).
// The unit is every target bound to one CLB and every Ingress governed by one TkeServiceConfig, joined where they
// overlap (shared-CLB and shared-config decisions need them together), or one target without either. A
// TkeServiceConfig concerns the Ingresses it governs; a namespace (relabelled, or another policy's claims there) its
// targets; a policy-wide input (the policy's spec, the cluster profile, leadership gained) all of them. Informer
// events and CLB reads that differ from the cached observation add changes (routing.ts); a round takes them, plans
// exactly the targets they concern and keeps the others' outcomes (policy-controller.ts). Pure.
import { targetKey, type TargetFacts } from '../../model/facts.js';
import { governingConfigName } from '../../plan/l7.js';

export type Change = { all: true } | { clb: string } | { target: string } | { namespace: string } | { config: string };

export const EVERYTHING: Change = { all: true };

/** A TkeServiceConfig as a change names it. */
export const configKey = (namespace: string, name: string): string => `${namespace}/${name}`;

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
  const clbs = new Set<string>();
  const configs = new Set<string>();
  const chosen = new Set<T>();
  const take = (t: T) => {
    chosen.add(t);
    if (t.loadBalancerId !== undefined) clbs.add(t.loadBalancerId);
    const config = configOf(t);
    if (config !== undefined) configs.add(config);
  };
  for (const t of targets) {
    const key = targetKey(t);
    const config = configOf(t);
    const concerned = !planned(key) || pending.targets.has(key) || pending.namespaces.has(t.namespace) || (t.loadBalancerId !== undefined && pending.clbs.has(t.loadBalancerId)) || (config !== undefined && pending.configs.has(config));
    if (concerned) take(t);
  }
  // Joined until nothing more shares a CLB or a config with what is chosen (an Ingress's config-mate may sit on another CLB).
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of targets) {
      if (chosen.has(t)) continue;
      const config = configOf(t);
      if ((t.loadBalancerId !== undefined && clbs.has(t.loadBalancerId)) || (config !== undefined && configs.has(config))) {
        take(t);
        grew = true;
      }
    }
  }
  return targets.filter((t) => chosen.has(t));
}
