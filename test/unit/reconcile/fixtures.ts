// Snapshots for the reconcile-level tables: a pass of the pure pipeline (planPolicy) over in-memory worlds.
import { withSpecDefaults, type LoopbackPolicySpec } from '../../../src/api/loopbackpolicy.js';
import type { ClbFacts, ListenerFacts, TargetFacts, TargetRef } from '../../../src/model/facts.js';
import { NO_SHARING, sharedView, type Snapshot, type TargetSnapshot } from '../../../src/plan/snapshot.js';
import { clb, ingress, listener, PROFILES } from '../model/fixtures.js';

export const OWNER = 'shop/p';
export const NOW = new Date('2026-11-22T10:00:00Z');
export const VIP = '10.0.0.9';
export const NAMED_CONFIG = 'ingress.cloud.tencent.com/tke-service-config';
export const SKIP = 'loopguard.dev/skip';
export const L7_SPEC: LoopbackPolicySpec = { mode: 'Enforce', l7: { keepalive: true, healthCheckSource: 'Range100_64' } };

/** An HTTP listener on :80 whose rule health-checks from `source`, keepalive `keepalive`. */
export function http(keepalive: 0 | 1, source: 0 | 1, lb = 'lb-ing'): ListenerFacts {
  return listener(`lbl-80-${lb}`, 'HTTP', 80, { keepaliveEnable: keepalive, rules: [{ locationId: `loc-${lb}`, domain: 'shop.example.com', url: '/', healthCheck: { sourceIpType: source } }] });
}

export function l7Clb(lb: string, keepalive: 0 | 1 = 0, source: 0 | 1 = 0): ClbFacts {
  return clb({ loadBalancerId: lb, vips: [VIP], listeners: [http(keepalive, source, lb)] });
}

/** An Ingress on its own CLB naming `config` (a hand-made TkeServiceConfig). */
export function namedIngress(name: string, lb: string, config: string, annotations: Record<string, string> = {}): TargetFacts {
  return ingress({ name, loadBalancerIps: [VIP] }, { 'kubernetes.io/ingress.qcloud-loadbalance-id': lb, [NAMED_CONFIG]: config, ...annotations });
}

/** A hand-made config with the listener and rule loopguard would edit, none of loopguard's fields declared. */
export const HAND_MADE = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } };

export function gathered(facts: TargetFacts, found: ClbFacts, extra: Partial<TargetSnapshot> = {}): TargetSnapshot {
  return { facts, clb: { state: 'Found', clb: found }, observedAt: NOW.getTime() - 1000, ownership: {}, ...extra };
}

/**
 * A snapshot of `targets` managed by OWNER. `others` are Services/Ingresses the caches hold besides them, with
 * the policy managing each (`policies`, by name; OWNER for the targets).
 */
export function snapshot(targets: TargetSnapshot[], opts: { spec?: LoopbackPolicySpec; others?: TargetFacts[]; policies?: Record<string, string | undefined>; loopguardAnnotated?: string[]; extra?: Partial<Snapshot> } = {}): Snapshot {
  const facts = targets.map((t) => t.facts);
  const policyOf = (t: TargetRef): string | undefined => (opts.policies && t.name in opts.policies ? opts.policies[t.name] : OWNER);
  return {
    owner: OWNER,
    spec: withSpecDefaults(opts.spec ?? L7_SPEC),
    profile: PROFILES.ipvsNew,
    capabilities: {},
    configsKnown: true,
    now: NOW,
    graceMs: 10_000,
    targets,
    orphans: [],
    shared: opts.others || opts.policies ? sharedView(facts, [...facts, ...(opts.others ?? [])], policyOf, undefined, new Set(opts.loopguardAnnotated ?? [])) : NO_SHARING,
    ...opts.extra,
  };
}
