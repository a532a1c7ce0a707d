// The targets a policy manages, read from the informer caches: selection, conflicts with other policies (of the
// namespace, and the cluster policies covering it; docs/cluster-policy.md §5), and the CLB each one is bound to.
import type { V1Service } from '@kubernetes/client-node';
import { involvedObject, withSpecDefaults, type PolicyMode } from '../../api/loopbackpolicy.js';
import { withClusterSpecDefaults, type ClusterLoopbackPolicy, type ResolvedClusterPolicySpec } from '../../api/clusterloopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { holderOf, madeFor, ownerOf, readRecord, type OwnerKey } from '../../model/record-registry.js';
import { loopguardAnnotated, sharedView, type RecordedEnvoyProxy, type SharedView } from '../../plan/snapshot.js';
import type { Orphan, PolicyCaches } from './deps.js';
import { conflictAssessment, handoverAssessment, type Assessment } from '../../model/assessment.js';
import { clusterPolicyIdentity, lossOf, policyIdentity, resolveConflicts, samePolicy, type Claim, type ClaimResolution, type PolicyIdentity } from '../../model/conflicts.js';
import { coverageOf, coveredNamespaces, namespaceMode, type Coverage } from '../../model/namespace-coverage.js';
import { envoyProxiesOf, envoyProxyKey, targetKey, type GatewayFacts, type ServiceFacts, type TargetFacts, type TargetRef } from '../../model/facts.js';
import { ENVOY_GATEWAY_NAMESPACE } from '../../model/gateway-service.js';
import { selects } from '../../model/selection.js';
import { gatewayFacts, ingressFacts, serviceFacts } from '../../model/target-facts.js';
import { asksForDns, clusterSubjectOf, liveSubject, subjectOf, type PolicySubject } from './subject.js';
import type { ProbeSelection } from '../../probe/plan-builder.js';
import { chooseDnsNames, type DnsName } from '../../model/dns-names.js';
import type { TargetOutcome } from '../../model/status.js';
import type { ReportTarget } from '../../model/namespace-report.js';

/** A cluster policy covering a namespace: who it is and what it selects there. */
export interface ClusterClaimant {
  identity: PolicyIdentity;
  spec: ResolvedClusterPolicySpec;
  /** Its mode in this namespace. */
  mode: PolicyMode;
}

export interface NamespaceView {
  candidates: TargetFacts[];
  claims: Map<string, ClaimResolution>;
}

const resolvedClusterPolicy = (p: ClusterLoopbackPolicy): Omit<ClusterClaimant, 'mode'> => ({ identity: clusterPolicyIdentity(p), spec: withClusterSpecDefaults(p.spec) });

/** The cluster policies covering `namespace` now, each with its mode there; `policies`: the cluster policies, resolved. */
export function coveringClusterPolicies(caches: Pick<PolicyCaches, 'namespace' | 'clusterPolicies' | 'ownNamespace'>, namespace: string, policies?: readonly Omit<ClusterClaimant, 'mode'>[]): ClusterClaimant[] {
  const ns = caches.namespace(namespace);
  // A namespace not cached (yet): none, without resolving every cluster policy (the router asks on every target event).
  if (!ns) return [];
  return (policies ?? caches.clusterPolicies().map(resolvedClusterPolicy)).flatMap((c) => {
    const covered = coverageOf(c.spec, ns, caches.ownNamespace);
    return covered === undefined || covered === 'excluded' ? [] : [{ ...c, mode: covered }];
  });
}

/**
 * Each namespace's view, worked out once per reconcile and only for the namespaces asked for (a policy's own, the
 * ones a cluster policy covers, and those sharing a CLB with its targets).
 */
export class ClaimsIndex {
  private readonly views = new Map<string, NamespaceView>();
  private clusterCache: Omit<ClusterClaimant, 'mode'>[] | undefined;
  /** The Services of EG's namespace, as facts: where the Services of every namespace's Gateways are. */
  private generated: ServiceFacts[] | undefined;

  constructor(private readonly caches: PolicyCaches) {}

  /** Every Service, Ingress and Gateway of the namespace as facts, and who owns each among the policies that select it. */
  view(namespace: string): NamespaceView {
    const known = this.views.get(namespace);
    if (known) return known;
    const services = this.caches.services(namespace);
    const candidates: TargetFacts[] = [...services.map(serviceFacts), ...this.caches.ingresses(namespace).map(ingressFacts), ...this.gateways(namespace, services)].filter((t) => t.namespace === namespace);
    const claims: Claim[] = [];
    for (const p of this.caches.policies(namespace)) {
      if (p.metadata.namespace !== namespace) continue;
      const scope = { namespace, spec: withSpecDefaults(p.spec) };
      for (const t of candidates.filter((c) => selects(scope, c))) claims.push({ policy: policyIdentity(p), target: t, mode: scope.spec.mode });
    }
    for (const c of coveringClusterPolicies(this.caches, namespace, (this.clusterCache ??= this.caches.clusterPolicies().map(resolvedClusterPolicy)))) {
      for (const t of candidates.filter((t) => selects({ namespace, spec: c.spec }, t))) claims.push({ policy: c.identity, target: t, mode: c.mode });
    }
    const view = { candidates, claims: resolveConflicts(claims) };
    this.views.set(namespace, view);
    return view;
  }

  /** The namespace's Gateways, each with the Service EG generated for it (in EG's namespace or this one). */
  private gateways(namespace: string, services: readonly V1Service[]): GatewayFacts[] {
    const gateways = this.caches.gateways(namespace);
    if (gateways.length === 0) return [];
    const eg = this.caches.envoyGatewayNamespace ?? ENVOY_GATEWAY_NAMESPACE;
    this.generated ??= this.caches.services(eg).map(serviceFacts);
    const candidates = namespace === eg ? this.generated : [...this.generated, ...services.map(serviceFacts)];
    return gateways.map((g) => gatewayFacts(g, candidates, eg, this.caches));
  }
}

/** A target a policy manages, and the mode it is managed in (a cluster policy's namespaces differ). */
export interface ManagedFacts {
  facts: TargetFacts;
  mode: PolicyMode;
}

/** What a policy manages, what it loses to another policy, and what it must release. */
export interface PolicyTargets {
  index: ClaimsIndex;
  mine: ManagedFacts[];
  /** Targets it selects that another policy manages (PolicyConflict / PolicyPrecedence), or that wait for a handover. */
  conflicts: Assessment[];
  /** With the mode their release follows. */
  orphans: (Orphan & { mode: PolicyMode })[];
  /** Covered namespaces and their modes (a LoopbackPolicy: its own). */
  namespaces: ReadonlyMap<string, PolicyMode>;
  /** System namespaces a cluster policy's selector matched but left out. */
  excluded: string[];
}

/** The namespaces a policy covers and their modes (a LoopbackPolicy: its own), among `namespaces`. */
function coverage(subject: PolicySubject, caches: PolicyCaches, namespaces = caches.namespaces()): Coverage {
  return subject.namespace !== undefined ? { modes: new Map([[subject.namespace, subject.spec.mode]]), excluded: [] } : coveredNamespaces(subject.cluster!, namespaces, caches.ownNamespace);
}

/** What the policy manages in one namespace it covers, and the targets it loses there or waits for (added to `mine`, `conflicts`). */
function namespaceTargets(subject: PolicySubject, namespace: string, mode: PolicyMode, index: ClaimsIndex, caches: PolicyCaches, mine: ManagedFacts[] = [], conflicts: Assessment[] = []) {
  const view = index.view(namespace);
  for (const target of view.candidates) {
    const claim = view.claims.get(targetKey(target));
    if (!claim) continue;
    if (samePolicy(claim.winner, subject.identity)) {
      // Another live policy holds the record (it lost the target, no longer selects it, or is being deleted): it
      // gives the originals back first, so the two never write the same CLB at once; then this policy applies its
      // plan. In Audit nothing is written, so nothing waits.
      const held = holderOf(caches.record(target));
      const giving = mode === 'Enforce' && held !== undefined && held !== subject.owner ? liveSubject(caches, held)?.identity : undefined;
      if (giving) conflicts.push(handoverAssessment(target, giving));
      else mine.push({ facts: target, mode });
    } else {
      const lost = lossOf(claim, subject.identity);
      if (lost) conflicts.push(conflictAssessment(target, claim, lost));
    }
  }
  return { mine, conflicts };
}

/** The targets of either kind of policy (subject.ts). */
export function policyTargets(subject: PolicySubject, caches: PolicyCaches, index = new ClaimsIndex(caches)): PolicyTargets {
  const covered = coverage(subject, caches);
  const mine: ManagedFacts[] = [];
  const conflicts: Assessment[] = [];
  for (const [namespace, mode] of covered.modes) namespaceTargets(subject, namespace, mode, index, caches, mine, conflicts);
  const managed = new Set(mine.map((m) => targetKey(m.facts)));
  const records = subject.namespace !== undefined ? caches.records(subject.namespace) : caches.records();
  // A namespace that left a cluster policy releases by the mode its labels give now (§4); a deleted one's records are stale.
  // A target another policy now enforces waits for this release (the handover above): it is released in any mode.
  const modeOf = (o: Orphan): PolicyMode => {
    const taker = index.view(o.facts.namespace).claims.get(targetKey(o.facts));
    if (taker && !samePolicy(taker.winner, subject.identity) && taker.winnerMode === 'Enforce') return 'Enforce';
    const ns = o.facts.namespace;
    // A LoopbackPolicy's orphans are in its namespace, whose mode is its spec's (coverage).
    const known = covered.modes.get(ns);
    if (known) return known;
    const facts = caches.namespace(ns);
    return facts ? namespaceMode(subject.cluster!, facts.labels) : 'Enforce';
  };
  // Orphans are looked for in the covered namespaces and in those the records name (a namespace that left the policy).
  const orphanCandidates = [...new Set([...covered.modes.keys(), ...records.map((r) => r.spec.target.namespace)])].flatMap((ns) => index.view(ns).candidates);
  const orphans = orphansOf(records, subject.owner, managed, orphanCandidates, caches).map((o) => ({ ...o, mode: modeOf(o) }));
  return { index, mine, conflicts, orphans, namespaces: covered.modes, excluded: [...covered.excluded] };
}

/** Every policy, of either kind (with `namespace`: the LoopbackPolicies of that namespace only). */
const policiesOf = (caches: PolicyCaches, namespace?: string): PolicySubject[] => [...caches.policies(namespace).map(subjectOf), ...caches.clusterPolicies().map(clusterSubjectOf)];

/**
 * What each live policy that `wanted` picks manages now, from the caches alone (the probe plan's and the DNS rules'
 * input): the same targets its rounds plan, without waiting for them, with one ClaimsIndex for all.
 */
export function liveSelections(caches: PolicyCaches, wanted: (s: PolicySubject) => boolean): { subject: PolicySubject; mine: ManagedFacts[] }[] {
  const index = new ClaimsIndex(caches);
  return policiesOf(caches).flatMap((subject) => (!subject.metadata.deletionTimestamp && wanted(subject) ? [{ subject, mine: policyTargets(subject, caches, index).mine }] : []));
}

/** What each live policy that probes manages now (docs/probe.md §11). */
export function probeSelections(caches: PolicyCaches): Map<OwnerKey, ProbeSelection> {
  return new Map(liveSelections(caches, (s) => s.spec.probe.enabled).map(({ subject: s, mine }) => [s.owner, { probe: s.spec.probe, targets: mine.map((m) => m.facts) }]));
}

/**
 * What every live cluster policy asking for Managed asks for now (the DNS rules' input, docs/dns.md §4): its targets as the caches show them, each judged by
 * its round's last outcome (PolicyController.outcomes). Undefined while one has none (not planned since a restart):
 * a file written without its names would drop them for a while.
 */
export function managedDnsNames(caches: PolicyCaches, outcomes: (owner: OwnerKey) => ReadonlyMap<string, TargetOutcome> | undefined, enforce: boolean): Map<OwnerKey, DnsName[]> | undefined {
  const out = new Map<OwnerKey, DnsName[]>();
  const service = (ns: string, name: string) => caches.services(ns).flatMap((s) => (s.metadata?.name === name ? [serviceFacts(s)] : []))[0];
  for (const { subject, mine } of liveSelections(caches, asksForDns)) {
    const last = outcomes(subject.owner);
    if (!last) return undefined;
    const judged = mine.flatMap(({ facts, mode }) => {
      const o = last.get(targetKey(facts));
      return o ? [{ facts, verdict: o.assessment.verdict, rootCause: o.assessment.rootCause.id, plan: o.plan ?? o.assessment.changes.map((c) => c.action), enforcing: enforce && mode === 'Enforce' }] : [];
    });
    out.set(subject.owner, chooseDnsNames(judged, service));
  }
  return out;
}

/** A conflict the policy lost is reported by the one that manages the target (docs/reports.md), never by the loser. */
const LOST_CONFLICTS = new Set(['PolicyConflict', 'PolicyPrecedence']);

/**
 * Of `policies`, those the namespaces' reports show (docs/reports.md), each with its last outcomes: every live one, and
 * one being deleted until its deletion forgets them. Undefined while a live one has none yet (not planned since a
 * restart, or new): a report then would lack its part, a prune would remove one it covers.
 */
function reportingPolicies(policies: readonly PolicySubject[], outcomes: (owner: OwnerKey) => ReadonlyMap<string, TargetOutcome> | undefined) {
  const out: { subject: PolicySubject; last: ReadonlyMap<string, TargetOutcome> }[] = [];
  for (const subject of policies) {
    const last = outcomes(subject.owner);
    if (last) out.push({ subject, last });
    else if (!subject.metadata.deletionTimestamp) return undefined;
  }
  return out;
}

/** Every namespace a policy the reports show covers (what the prune keeps); undefined: see reportingPolicies. */
export function reportedNamespaces(caches: PolicyCaches, outcomes: (owner: OwnerKey) => ReadonlyMap<string, TargetOutcome> | undefined): Set<string> | undefined {
  const policies = reportingPolicies(policiesOf(caches), outcomes);
  return policies && new Set(policies.flatMap(({ subject }) => [...coverage(subject, caches).modes.keys()]));
}

/**
 * A namespace's report, per policy covering it ([] when it has no target there; an empty map when none covers it):
 * each target it manages there as the caches show it, with its round's last outcome (PolicyController.outcomes, the
 * probe's figures included), and the handovers it waits on. Undefined: see reportingPolicies.
 */
export function namespaceResults(caches: PolicyCaches, outcomes: (owner: OwnerKey) => ReadonlyMap<string, TargetOutcome> | undefined, namespace: string): Map<OwnerKey, ReportTarget[]> | undefined {
  const facts = caches.namespace(namespace);
  const modeIn = (s: PolicySubject) => coverage(s, caches, facts ? [facts] : []).modes.get(namespace);
  const covering = policiesOf(caches, namespace).filter((s) => modeIn(s) !== undefined);
  const policies = reportingPolicies(covering, outcomes);
  if (!policies) return undefined;
  const index = new ClaimsIndex(caches);
  const out = new Map<OwnerKey, ReportTarget[]>();
  for (const { subject, last } of policies) {
    const mode = modeIn(subject)!;
    const policy = subject.namespace === undefined ? subject.owner : `LoopbackPolicy/${subject.name}`;
    const result = ({ assessment: a, plan, measured }: TargetOutcome, uid?: string): ReportTarget => {
      const t = a.target;
      return { apiVersion: involvedObject(t).apiVersion, kind: t.kind, name: t.name, ...(uid ? { uid } : {}), verdict: a.verdict, rootCause: a.rootCause.id, message: a.rootCause.message, mode, policy, plan: plan ?? [], ...(a.loadBalancerId ? { loadBalancerId: a.loadBalancerId } : {}), ...(measured ? { measured } : {}) };
    };
    const { mine, conflicts } = namespaceTargets(subject, namespace, mode, index, caches);
    const managed = mine.flatMap(({ facts: t }) => [last.get(targetKey(t))].flatMap((o) => (o ? [result(o, t.uid)] : [])));
    out.set(subject.owner, [...managed, ...conflicts.filter((a) => !LOST_CONFLICTS.has(a.rootCause.id)).map((assessment) => result({ assessment }))]);
  }
  return out;
}

/**
 * Who shares the policy's targets' CLBs (any namespace) and TkeServiceConfigs (see SharedView). Which policy
 * manages a target of another namespace is that namespace's claim, worked out only for namespaces that share.
 */
export function sharedWith(
  targets: readonly TargetFacts[],
  caches: Pick<PolicyCaches, 'services' | 'ingresses' | 'records' | 'gateways' | 'envoyProxy' | 'gatewayClass'>,
  own: ReadonlySet<string>,
  index: Pick<ClaimsIndex, 'view'>,
  ignoreSkipOf?: OwnerKey,
): SharedView {
  const clbs = new Set(targets.flatMap((t) => (t.loadBalancerId ? [t.loadBalancerId] : [])));
  // Only a namespace's own Ingresses can name its TkeServiceConfigs; CLBs are shared across namespaces, and so is a
  // GatewayClass's EnvoyProxy (every Gateway of the class, in any namespace).
  const elsewhere = (o: { metadata?: { namespace?: string } }) => !own.has(o.metadata?.namespace ?? '');
  const proxies = new Set(targets.flatMap((t) => (t.kind === 'Gateway' ? envoyProxiesOf(t).map(envoyProxyKey) : [])));
  const gateways = proxies.size === 0 ? [] : caches.gateways().filter(elsewhere).map((g) => gatewayFacts(g, [], undefined, caches)).filter((g) => envoyProxiesOf(g).some((ep) => proxies.has(envoyProxyKey(ep))));
  const others: TargetFacts[] = [...caches.services().filter(elsewhere).map(serviceFacts), ...caches.ingresses().filter(elsewhere).map(ingressFacts)].filter((t) => t.loadBalancerId && clbs.has(t.loadBalancerId));
  others.push(...gateways);
  const policyOf = (t: TargetRef): string | undefined => {
    const winner = index.view(t.namespace).claims.get(targetKey(t))?.winner;
    return winner ? ownerOf(winner) : undefined;
  };
  const candidates = [...[...own].flatMap((ns) => index.view(ns).candidates), ...others];
  return sharedView(targets, candidates, policyOf, ignoreSkipOf, loopguardAnnotated(caches.records(), [...targets, ...candidates], clbs));
}

/**
 * The targets whose records belong to `owner` but that it does not manage (now): released. A record whose object
 * is gone (deleted, or replaced by another of the same name) is stale: it is only forgotten.
 */
export function orphansOf(
  records: readonly LoopbackRecord[],
  owner: OwnerKey,
  managed: ReadonlySet<string>,
  candidates: readonly TargetFacts[],
  caches: Pick<PolicyCaches, 'records' | 'gateways' | 'envoyProxy'>,
): Orphan[] {
  const byKey = new Map(candidates.map((t) => [targetKey(t), t]));
  const orphans = records.flatMap((entry): Orphan[] => {
    if (holderOf(entry) !== owner) return [];
    const t = entry.spec.target;
    // A managed target ignores a stale record (its next recording replaces it); releasing it here as well could
    // forget originals that round just recorded.
    if (managed.has(targetKey(t))) return [];
    const live = byKey.get(targetKey(t));
    const stale = !live || !madeFor(entry, live);
    const facts = live ?? ({ kind: t.kind, namespace: t.namespace, name: t.name, ...(t.kind === 'Service' ? { type: 'LoadBalancer', ports: [] } : { rules: [], tls: false }) } as TargetFacts);
    return [{ facts, entry, ...(stale ? { stale: true } : {}) }];
  });
  // A Gateway's annotations go back to the EnvoyProxy its record names, never to the one in force now (the Gateway
  // may have moved to another, which holds its own values). The records released together do not hold it for each other.
  const releasing = new Set(orphans.map((o) => recordKey(o.entry)));
  return orphans.map((o) => {
    const envoyProxy = o.entry.spec.target.kind === 'Gateway' ? recordedEnvoyProxy(o.entry, caches, releasing) : undefined;
    return envoyProxy ? { ...o, envoyProxy } : o;
  });
}

const recordKey = (r: LoopbackRecord): string => targetKey(r.spec.target);

/**
 * The EnvoyProxy a Gateway's record wrote loopguard's key into, as it is now; undefined when it is gone, or when the
 * record of another Gateway that still exists and is not released with it names it too (a class's EnvoyProxy: the key
 * stays for that Gateway, whose own release gives it back).
 */
export function recordedEnvoyProxy(entry: LoopbackRecord, caches: Pick<PolicyCaches, 'records' | 'gateways' | 'envoyProxy'>, releasing: ReadonlySet<string>): RecordedEnvoyProxy | undefined {
  const ref = readRecord(entry).originals?.envoyProxy;
  if (!ref) return undefined;
  const ep = caches.envoyProxy(ref.namespace, ref.name);
  if (!ep) return undefined;
  // By key, not by object: the deletion lists the records afresh, the cache holds its own copies.
  const same = (r: LoopbackRecord) => !releasing.has(recordKey(r)) && r.spec.target.kind === 'Gateway' && r.spec.originals?.envoyProxy?.namespace === ref.namespace && r.spec.originals.envoyProxy.name === ref.name;
  const live = (r: LoopbackRecord) => caches.gateways(r.spec.target.namespace).some((g) => g.metadata?.name === r.spec.target.name && madeFor(r, { ...(g.metadata?.uid ? { uid: g.metadata.uid } : {}) }));
  if (caches.records().some((r) => same(r) && live(r))) return undefined;
  return { ref: { ...ref }, annotations: { ...ep.spec?.provider?.kubernetes?.envoyService?.annotations } };
}
