// Pure: the doctor's report from what it read. Every selected Service and Ingress becomes facts (the operator's
// serviceFacts/ingressFacts), is assessed with the spec of the policy that manages it (or the defaults) and the CLB
// as read, and gets the plan that policy's Enforce would carry out, from its LoopbackRecord and TkeServiceConfig:
// the same inputs a policy round has, so the verdicts and plans are the ones Audit prints.
// Across the targets: the account's default health-check source as their listeners show it (account-default.ts).
import type { LoopbackRecord } from '../api/loopbackrecord.js';
import { recordName } from '../api/loopbackrecord.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import { targetKey, type ClbObservation, type TargetFacts } from '../model/facts.js';
import { gatewayFacts, ingressFacts, serviceFacts, type EnvoyProxyLookup } from '../model/target-facts.js';
import { configLookupOf, configViewOf, sharedView } from '../plan/snapshot.js';
import { TKE_GRACE_MS } from '../model/tke-timing.js';
import { readRecord, type RecordOwnership } from '../model/record-registry.js';
import { judgeAccountDefault } from '../model/account-default.js';
import { accountReport, targetAccountNote } from './account-advice.js';
import { analyzeTarget, NO_POLICY } from './analysis.js';
import type { ClusterSnapshot } from './cluster-reads.js';
import { choosePolicies, coverageResolved, DEFAULT_CHOICE, NO_CLUSTER_POLICIES, type ClusterPolicyInput } from './policy-spec.js';
import { buildReport, targetReport, type Report } from './report.js';

export interface ScanInput {
  /** Without `clusterPolicies`: none (what a cluster without the ClusterLoopbackPolicy CRD has). */
  snapshot: Pick<ClusterSnapshot, 'services' | 'ingresses' | 'tkeServiceConfigs' | 'records' | 'policies' | 'notes'> & Partial<Pick<ClusterSnapshot, 'clusterPolicies' | 'namespaces' | 'gateways'>>;
  profile: ClusterProfile;
  observations: ReadonlyMap<string, ClbObservation>;
  observedAt: ReadonlyMap<string, number>;
  now: Date;
}

/** The targets of a snapshot as the assessment's facts; each Gateway with its Service as the operator finds it. */
export function snapshotTargets(snapshot: Pick<ClusterSnapshot, 'services' | 'ingresses' | 'gateways'>): TargetFacts[] {
  const services = snapshot.services.map(serviceFacts);
  const g = snapshot.gateways;
  const lookup: EnvoyProxyLookup = {
    envoyProxy: (ns, name) => g?.envoyProxies.find((e) => e.metadata?.namespace === ns && e.metadata.name === name),
    gatewayClass: (name) => g?.classes.find((c) => c.metadata?.name === name),
  };
  const gateways = g
    ? g.items.map((gw) => {
        const ns = gw.metadata?.namespace;
        const candidates = [...g.generated.map(serviceFacts), ...services.filter((s) => s.namespace === ns && s.namespace !== g.controllerNamespace)];
        return gatewayFacts(gw, candidates, g.controllerNamespace, lookup);
      })
    : [];
  return [...services, ...snapshot.ingresses.map(ingressFacts), ...gateways];
}

export function scanReport(input: ScanInput): Report {
  const { snapshot } = input;
  const targets = snapshotTargets(snapshot);
  const records = new Map<string, LoopbackRecord>(snapshot.records.map((r) => [r.metadata?.name ?? '', r]));
  const notes = [...snapshot.notes];
  const recordOf = (t: TargetFacts): RecordOwnership => {
    const o = readRecord(records.get(recordName(t)), t);
    if (o.problem) notes.push(`ignoring an invalid record of ${targetKey(t)}: ${o.problem}`);
    return o;
  };
  const cluster: ClusterPolicyInput = snapshot.clusterPolicies ? { policies: snapshot.clusterPolicies, namespaces: snapshot.namespaces } : NO_CLUSTER_POLICIES;
  const choices = choosePolicies(targets, snapshot.policies, cluster);
  const resolved = coverageResolved(cluster);
  // The doctor reads every namespace it is allowed to: who shares a CLB or a TkeServiceConfig is among its targets.
  // Targets no policy selects are planned as one default policy's (NO_POLICY), as analyzeTarget does.
  const shared = sharedView(targets, targets, (t) => choices.get(targetKey(t))?.owner ?? NO_POLICY);
  const configs = snapshot.tkeServiceConfigs ? configLookupOf(snapshot.tkeServiceConfigs) : undefined;
  const clbOf = (facts: TargetFacts): ClbObservation => (facts.loadBalancerId ? (input.observations.get(facts.loadBalancerId) ?? { state: 'NotObserved' }) : { state: 'NotObserved' });
  const account = judgeAccountDefault(targets.map((facts) => ({ facts, clb: clbOf(facts), recorded: records.has(recordName(facts)) })));
  const reports = targets.map((facts) => {
    const choice = choices.get(targetKey(facts)) ?? DEFAULT_CHOICE;
    const id = facts.loadBalancerId;
    const clb = clbOf(facts);
    const observedAt = id ? input.observedAt.get(id) : undefined;
    const config = configs ? configViewOf(facts, configs) : undefined;
    const analysis = analyzeTarget({
      facts,
      spec: choice.spec,
      ...(choice.owner ? { owner: choice.owner } : {}),
      ...(choice.ignoreSkipAnnotation ? { ignoreSkipAnnotation: true } : {}),
      profile: input.profile,
      clb,
      ...(observedAt !== undefined ? { observedAt } : {}),
      ownership: recordOf(facts),
      ...(config ? { config } : {}),
      configsKnown: snapshot.tkeServiceConfigs !== undefined,
      shared,
      now: input.now,
      graceMs: TKE_GRACE_MS,
    });
    // Uncovered only when that is known: with cluster policies unresolved, one of them may cover it.
    const uncovered = resolved && !choice.owner && analysis.assessment.verdict === 'AtRisk';
    const report = targetReport(analysis, { ...(choice.policy ? { policy: choice.policy } : {}), ...(uncovered ? { uncovered } : {}) });
    const note = targetAccountNote(account, targetKey(facts));
    return note ? { ...report, advice: [...report.advice, note] } : report;
  });
  const report = { ...buildReport('DoctorReport', input.profile, reports, notes, input.now), account: accountReport(account) };
  return resolved ? { ...report, uncovered: reports.filter((r) => r.uncovered).length } : report;
}
