// Pure: what one pass of the planner sees (docs/architecture.md §7 "Snapshot"), gathered once per chunk of targets by
// the operator's round, `loopguard doctor` or `loopguard plan`: planPolicy (policy-plan.ts) is a function of it alone.
// `shared` holds whatever a decision shares (SharedView), so a decision about one target sees what it does to others.
import { readSkip, ServiceAnnotation } from '../api/annotations.js';
import type { LoopbackRecord } from '../api/loopbackrecord.js';
import type { ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import { envoyProxiesOf, envoyProxyKey, targetKey, type AccountCapabilities, type ClbObservation, type EnvoyProxyRef, type TargetFacts, type TargetRef } from '../model/facts.js';
import { governingConfigName, type ConfigView } from './l7.js';
import { madeFor, readRecord, type RecordOwnership } from '../model/record-registry.js';
import { annotatedByLoopguard } from './originals.js';

/** A target the policy manages, as gathered. */
export interface TargetSnapshot {
  facts: TargetFacts;
  clb: ClbObservation;
  /** When `clb` was read (ms since the epoch). */
  observedAt?: number;
  /** The target's record, when one was made for this very object (else none). */
  ownership?: RecordOwnership;
  /** L7: the TkeServiceConfig that governs the Ingress, as the cache has it. */
  config?: ConfigView;
  /**
   * A Gateway's: the EnvoyProxy its record names (Originals.envoyProxy), where its release, or its move to another,
   * gives the key back (the EnvoyProxy outlives a deleted Gateway), with its envoyService.annotations now. Absent when
   * it is gone, or when another live Gateway's record holds a key there as well (the key stays for it).
   */
  envoyProxy?: RecordedEnvoyProxy;
}

/** A target whose record belongs to the policy but that the policy does not manage (now): released. */
export interface OrphanSnapshot extends Omit<TargetSnapshot, 'clb' | 'ownership'> {
  ownership: RecordOwnership;
  /** The object the record was made for is gone (deleted, or replaced by another of the same name): only forgotten. */
  stale?: boolean;
  /** Ingresses: the CLB as read (what TKE has restored). */
  clb?: ClbObservation;
}

/** An EnvoyProxy a record names, as it is now. */
export interface RecordedEnvoyProxy {
  ref: EnvoyProxyRef;
  annotations: Readonly<Record<string, string>>;
}

/** A Service or Ingress on a shared CLB or naming a shared TkeServiceConfig. */
export interface SharedUser {
  facts: TargetFacts;
  /** `<namespace>/<name>` of the policy that manages it, if one selects it. */
  policy?: string;
  /** Opted out of loopguard (`loopguard.dev/skip`) or of TKE's controller (`mode: skip`). */
  optedOut: boolean;
  /** Its prevent-loopback is loopguard's (its LoopbackRecord holds the original): a binding loopguard can give back. */
  annotatedByLoopguard?: boolean;
}

export interface SharedView {
  /** CLB id → every Service and Ingress bound to it (any namespace), the targets themselves included. */
  clbs: ReadonlyMap<string, readonly SharedUser[]>;
  /**
   * `<namespace>/<name>` of a TkeServiceConfig → every Ingress it governs; `EnvoyProxy/<namespace>/<name>` → every
   * Gateway whose Service it reaches (envoyProxyKey); the targets themselves included.
   */
  configs: ReadonlyMap<string, readonly SharedUser[]>;
}

export interface Snapshot {
  /** `<namespace>/<name>` of the policy the plan is made for (the records' owner). */
  owner: string;
  spec: ResolvedPolicySpec;
  profile: ClusterProfile;
  /** What CLB refusals taught about the account (mitigation/capabilities.ts); none for the CLI. */
  capabilities: AccountCapabilities;
  /**
   * Whether TkeServiceConfigs could be read. Until they can, an absent config means "not known yet", not "gone": no
   * L7 step is planned (a release that took it for gone would drop originals it never restored).
   */
  configsKnown: boolean;
  now: Date;
  /** How long TKE gets to act on what it was asked (a TkeServiceConfig, pass-to-target, prevent-loopback's switch). */
  graceMs: number;
  targets: readonly TargetSnapshot[];
  orphans: readonly OrphanSnapshot[];
  shared: SharedView;
  /** A cluster policy's `skipAnnotation: Ignore` (docs/cluster-policy.md §6). */
  ignoreSkipAnnotation?: boolean;
}

export const NO_SHARING: SharedView = { clbs: new Map(), configs: new Map() };

/** A TkeServiceConfig as listed (the informer cache or a read of the cluster). */
export interface ConfigObject {
  metadata?: { name?: string; namespace?: string };
  spec?: unknown;
}

/** The key of a TkeServiceConfig in SharedView.configs. */
export function configKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Finds a TkeServiceConfig by namespace and name (an informer cache's get, or an index of a listing). */
export type ConfigLookup = (namespace: string, name: string) => ConfigObject | undefined;

/** A lookup over a listing: one index, so a round over thousands of targets does not scan the list per target. */
export function configLookupOf(configs: readonly ConfigObject[]): ConfigLookup {
  const byKey = new Map(configs.map((c) => [configKey(c.metadata?.namespace ?? '', c.metadata?.name ?? ''), c]));
  return (namespace, name) => byKey.get(configKey(namespace, name));
}

/** The TkeServiceConfig that governs an Ingress. */
export function configViewOf(t: TargetFacts, lookup: ConfigLookup): ConfigView | undefined {
  if (t.kind !== 'Ingress') return undefined;
  const name = governingConfigName(t.name, t.annotations);
  if (!name) return undefined;
  const found = lookup(t.namespace, name);
  return found ? { name, spec: found.spec, exists: true } : { name, exists: false };
}

/** Target keys, among those on `clbs`, whose prevent-loopback loopguard set: their records hold its original. */
export function loopguardAnnotated(records: readonly LoopbackRecord[], candidates: readonly TargetFacts[], clbs: ReadonlySet<string>): Set<string> {
  const onClbs = new Map(candidates.filter((t) => t.kind === 'Service' && t.loadBalancerId && clbs.has(t.loadBalancerId)).map((t) => [targetKey(t), t]));
  const out = new Set<string>();
  for (const r of records) {
    const t = r.spec?.target;
    if (!t || t.kind !== 'Service') continue;
    const key = targetKey(t);
    const facts = onClbs.get(key);
    if (facts && madeFor(r, facts) && annotatedByLoopguard(readRecord(r, facts).originals, ServiceAnnotation.PreventLoopback)) out.add(key);
  }
  return out;
}

/**
 * Who shares what with `targets`: every candidate (all Services and Ingresses loopguard can see) on one of their
 * CLBs, and every Ingress naming one of their governing TkeServiceConfigs. `policyOf` says which policy manages a
 * candidate, if any.
 */
export function sharedView(
  targets: readonly TargetFacts[],
  candidates: readonly TargetFacts[],
  policyOf: (t: TargetRef) => string | undefined,
  /** A cluster policy with `skipAnnotation: Ignore`: loopguard.dev/skip opts none of its own targets out. */
  ignoreSkipOf?: string,
  /** Target keys whose prevent-loopback loopguard set (their records hold the original). */
  loopguardAnnotated: ReadonlySet<string> = new Set(),
): SharedView {
  const clbIds = new Set(targets.flatMap((t) => (t.loadBalancerId ? [t.loadBalancerId] : [])));
  // An Ingress's governing TkeServiceConfig; every EnvoyProxy whose annotations reach a Gateway's Service.
  const configsOf = (t: TargetFacts): string[] => {
    if (t.kind === 'Gateway') return envoyProxiesOf(t).map(envoyProxyKey);
    const name = t.kind === 'Ingress' ? governingConfigName(t.name, t.annotations) : undefined;
    return name ? [configKey(t.namespace, name)] : [];
  };
  const configKeys = new Set(targets.flatMap(configsOf));
  const clbs = new Map<string, SharedUser[]>();
  const configs = new Map<string, SharedUser[]>();
  const seen = new Set<string>();
  for (const c of [...targets, ...candidates]) {
    const key = targetKey(c);
    if (seen.has(key)) continue;
    seen.add(key);
    const lb = c.loadBalancerId && clbIds.has(c.loadBalancerId) ? c.loadBalancerId : undefined;
    const inConfigs = configsOf(c).filter((k) => configKeys.has(k));
    if (!lb && inConfigs.length === 0) continue;
    const policy = policyOf(c);
    const ignoreOwn = ignoreSkipOf !== undefined && policy === ignoreSkipOf;
    const user: SharedUser = {
      facts: c,
      ...(policy ? { policy } : {}),
      optedOut: readSkip(c.annotations, c.kind, { ignoreOwn }).skipped !== undefined,
      ...(loopguardAnnotated.has(key) ? { annotatedByLoopguard: true } : {}),
    };
    if (lb) clbs.set(lb, [...(clbs.get(lb) ?? []), user]);
    for (const k of inConfigs) configs.set(k, [...(configs.get(k) ?? []), user]);
  }
  return { clbs, configs };
}
