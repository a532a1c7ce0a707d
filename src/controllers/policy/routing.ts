// Which policies a change concerns, and what of each (pending.ts; docs/architecture.md §3 "The unit of work"); the
// queue's keys are owner keys. A namespace's change reaches its own policies and the cluster policies covering it,
// never every cluster policy (one over thousands of targets must not reconcile on every Service update elsewhere); a
// target's or a CLB's, every policy with targets on that CLB. Cluster policies hear of target churn after a delay.
import { ABANDON_ANNOTATION } from '../../api/loopbackpolicy.js';
import { clusterOwnerKey, ownerKey, ownerOf, type OwnerKey } from '../../model/record-registry.js';
import type { PolicyCaches } from './deps.js';
import { coveringClusterPolicies } from './targets.js';
import { EVERYTHING, type Change } from './pending.js';
import { configKey } from '../../plan/snapshot.js';
import { targetKey, type TargetRef } from '../../model/facts.js';
import type { WorkQueue } from '../../runtime/work-queue.js';

/** How long target churn waits before it reaches a cluster policy (coalescing a burst into one round). */
export const CLUSTER_CHURN_DELAY_MS = 1_000;

interface Meta {
  metadata?: { name?: string; namespace?: string; generation?: number; deletionTimestamp?: unknown; finalizers?: string[]; annotations?: Record<string, string>; labels?: Record<string, string> };
}

/** What the router reads: the policies and the namespaces, from the informer caches. */
export type RoutingSources = Pick<PolicyCaches, 'policy' | 'policies' | 'clusterPolicy' | 'clusterPolicies' | 'namespace' | 'ownNamespace'>;

/**
 * What of a policy, of either kind, calls for a reconcile: its spec (generation), deletion, finalizers and the abandon
 * annotation (the way out of a blocked deletion). Its own status writes change none of these (controller-runtime's
 * GenerationChangedPredicate).
 */
export function policyFingerprint(p: Meta): string {
  const md = p.metadata;
  return `${md?.generation ?? ''}|${md?.deletionTimestamp ? 'deleting' : ''}|${(md?.finalizers ?? []).join(',')}|${md?.annotations?.[ABANDON_ANNOTATION] ?? ''}`;
}

/** A namespace's labels as one string: a namespace event matters to cluster policies only when they change. */
export function labelsFingerprint(labels: Readonly<Record<string, string>> | undefined): string {
  return JSON.stringify(Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export const namespacedKey = (p: Meta): string => ownerKey(p.metadata?.namespace ?? '', p.metadata?.name ?? '');
export const clusterKeyOf = (p: Meta): string => clusterOwnerKey(p.metadata?.name ?? '');

/** Where the router notes what changed for a policy (policy-controller.ts), and which policies work on a CLB. */
export interface PendingWork {
  touch(key: OwnerKey, change: Change): void;
  policiesOn(clb: string): readonly OwnerKey[];
}

/** Turns informer events and changed CLB reads into work-queue keys and pending changes (see the header). */
export class PolicyEventRouter {
  /** Each policy's fingerprint (policyFingerprint) and generation as last seen. */
  private readonly policySeen = new Map<string, { fingerprint: string; generation: number | undefined }>();
  /**
   * The CLB each target was last seen bound to and an Ingress's TkeServiceConfig (configKey), by target key: a target
   * that leaves either concerns the targets it left too (the informers' update event carries the new object only).
   */
  private readonly boundTo = new Map<string, { clb?: string; config?: string }>();
  /** Each namespace's labels as last seen: only a change concerns the cluster policies. */
  private readonly namespaceLabels = new Map<string, string>();

  constructor(
    private readonly queue: Pick<WorkQueue, 'add' | 'addAfter'>,
    private readonly s: RoutingSources,
    private readonly work: PendingWork,
    /** A policy changed: the admission parameters may too. */
    private readonly onPolicyChange: () => void,
  ) {}

  /** `change`: what the policy's next round plans again; none, to only run it (its finalizer, its deletion). */
  private add(key: OwnerKey, change: Change | undefined, delayMs = 0): void {
    if (change) this.work.touch(key, change);
    if (delayMs > 0) this.queue.addAfter(key, delayMs);
    else this.queue.add(key);
  }

  /**
   * Whether the policy changed in what calls for a reconcile: undefined if not; else what its round plans again, every
   * target when it is new, gone or its spec changed (a new generation), nothing when only its finalizers, deletion or
   * abandon annotation did (the deletion plans from the records; loopguard's own finalizer write re-plans nothing).
   */
  private changed(key: string, p: Meta, live: boolean): { plan?: Change } | undefined {
    const fingerprint = policyFingerprint(p);
    const generation = p.metadata?.generation;
    const seen = this.policySeen.get(key);
    if (seen?.fingerprint === fingerprint && live) return undefined;
    if (live) this.policySeen.set(key, { fingerprint, generation });
    else this.policySeen.delete(key);
    return seen && live && seen.generation === generation ? {} : { plan: EVERYTHING };
  }

  /**
   * A LoopbackPolicy changed: it, and the other policies that may claim its namespace's targets (its namespace's
   * LoopbackPolicies, the cluster policies covering it): precedence may move targets between them.
   */
  policy(p: Meta): void {
    const key = namespacedKey(p);
    const namespace = p.metadata?.namespace ?? '';
    const changed = this.changed(key, p, this.s.policy(namespace, p.metadata?.name ?? '') !== undefined);
    if (!changed) return;
    this.add(key, changed.plan);
    for (const q of this.s.policies(namespace)) if (namespacedKey(q) !== key) this.add(namespacedKey(q), changed.plan);
    for (const c of coveringClusterPolicies(this.s, namespace)) this.add(ownerOf(c.identity), changed.plan && { namespace });
    this.onPolicyChange();
  }

  /** A cluster policy changed: it, and every other policy (its precedence may give their targets to it or back). */
  clusterPolicy(p: Meta): void {
    const key = clusterKeyOf(p);
    const changed = this.changed(key, p, this.s.clusterPolicy(p.metadata?.name ?? '') !== undefined);
    if (!changed) return;
    this.add(key, changed.plan);
    for (const q of this.s.policies()) this.add(namespacedKey(q), changed.plan);
    for (const c of this.s.clusterPolicies()) if (clusterKeyOf(c) !== key) this.add(clusterKeyOf(c), changed.plan);
    this.onPolicyChange();
  }

  /** A namespace created, deleted or relabelled (not its status): the policies its coverage concerns. */
  namespace(ns: Meta, deleted: boolean): void {
    const name = ns.metadata?.name ?? '';
    const labels = deleted ? undefined : labelsFingerprint(ns.metadata?.labels);
    if (!deleted && this.namespaceLabels.get(name) === labels) return;
    if (labels === undefined) this.namespaceLabels.delete(name);
    else this.namespaceLabels.set(name, labels);
    // A relabelled namespace may have left a cluster policy: every cluster policy looks again, not only the covering ones.
    for (const p of this.s.policies(name)) this.add(namespacedKey(p), EVERYTHING);
    for (const p of this.s.clusterPolicies()) this.add(clusterKeyOf(p), { namespace: name });
    // Which namespaces a cluster policy enforces in may have changed (the admission warning's parameters).
    if (this.s.clusterPolicies().length > 0) this.onPolicyChange();
  }

  /**
   * A Service, Ingress or Gateway (`key`) changed: its namespace's policies for it, cluster ones after a short delay;
   * the policies with targets on the CLB it is bound to (`clb`, none when `gone`), or was until now; and an Ingress's
   * TkeServiceConfig (`config`, its name), or the one it named until now, for the Ingresses that config governs.
   */
  target(namespace: string, key: string, clb: string | undefined, gone = false, config?: string): void {
    this.inNamespace(namespace, { target: key });
    const before = this.boundTo.get(key);
    const now = gone ? {} : { ...(clb !== undefined ? { clb } : {}), ...(config !== undefined ? { config: configKey(namespace, config) } : {}) };
    if (now.clb === undefined && now.config === undefined) this.boundTo.delete(key);
    else this.boundTo.set(key, now);
    for (const id of new Set([before?.clb, now.clb])) if (id !== undefined) this.clb(id);
    // The config it names now too: whether a config is shared is judged against every Ingress naming it, including
    // ones no policy of ours manages (shared-config.ts), so its Ingresses are planned again when one joins or leaves.
    for (const c of new Set([before?.config, now.config])) if (c !== undefined) this.inNamespace(namespace, { config: c });
  }

  /** A target's LoopbackRecord changed: the target, and the policies with targets on the CLB it is bound to (`clb`). */
  record(target: TargetRef, clb: string | undefined): void {
    this.inNamespace(target.namespace, { target: targetKey(target) });
    if (clb !== undefined) this.clb(clb);
  }

  /** A TkeServiceConfig changed: its namespace's policies, for the Ingresses it governs. */
  config(namespace: string, name: string): void {
    this.inNamespace(namespace, { config: configKey(namespace, name) });
  }

  /** A read of the CLB found it changed (ClbObserver.onChange), or its read failed for too long: the policies with targets on it. */
  clb(id: string): void {
    for (const k of this.work.policiesOn(id)) this.add(k, { clb: id });
  }

  /** A change in `namespace`: its LoopbackPolicies, and the cluster policies covering it after a short delay. */
  private inNamespace(namespace: string, change: Change): void {
    for (const p of this.s.policies(namespace)) this.add(namespacedKey(p), change);
    for (const c of coveringClusterPolicies(this.s, namespace)) this.add(ownerOf(c.identity), change, CLUSTER_CHURN_DELAY_MS);
  }

  /** The namespaces' report names changed: the cluster policies, whose status names them, come back (planning nothing new). */
  reportNames(): void {
    for (const p of this.s.clusterPolicies()) this.queue.add(clusterKeyOf(p));
  }

  /** Every policy, every target (leadership gained, the cluster profile changed). */
  all(): void {
    for (const p of this.s.policies()) this.add(namespacedKey(p), EVERYTHING);
    for (const p of this.s.clusterPolicies()) this.add(clusterKeyOf(p), EVERYTHING);
  }
}
