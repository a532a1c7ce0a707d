// Issue 38 #1: which policy manages a target, as the controller sees it (policyTargets over loopguard's own caches
// interface), over {cluster, namespaced} × {Audit, Enforce} × {NamespacedFirst, ClusterFirst} × {held by either, not
// held} × both creation orders. The manager is the resolution's winner whatever holds the record; the record only
// decides whether the winner waits for a handover (Enforce) and who releases (docs/cluster-policy.md §5).
import { describe, expect, it } from '@jest/globals';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import type { ClusterLoopbackPolicy } from '../../../src/api/clusterloopbackpolicy.js';
import type { LoopbackPolicy } from '../../../src/api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import type { PolicyCaches } from '../../../src/controllers/policy/deps.js';
import { clusterSubjectOf, subjectOf, type PolicySubject } from '../../../src/controllers/policy/subject.js';
import { managedDnsNames, namespaceResults, policyTargets, probeSelections, reportedNamespaces } from '../../../src/controllers/policy/targets.js';
import { recordFor } from '../../../src/model/record-registry.js';
import type { TargetOutcome } from '../../../src/model/status.js';

type Mode = 'Audit' | 'Enforce';
type Precedence = 'NamespacedFirst' | 'ClusterFirst';
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (i: number) => new Date(T0 + i * 1000).toISOString() as unknown as Date;

const web: V1Service = {
  metadata: { namespace: 'shop', name: 'web', uid: 'uid-web', annotations: { 'service.kubernetes.io/loadbalance-id': 'lb-web' } },
  spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }] },
};

function caches(policy: LoopbackPolicy, cluster: ClusterLoopbackPolicy | ClusterLoopbackPolicy[], records: LoopbackRecord[]): PolicyCaches {
  const ns = { name: 'shop', labels: { team: 'shop' } };
  const clusters = [cluster].flat();
  return {
    records: () => records,
    record: (t) => records.find((r) => r.spec.target.name === t.name && r.spec.target.namespace === t.namespace),
    policy: (namespace, name) => (namespace === 'shop' && name === policy.metadata.name ? policy : undefined),
    policies: (namespace) => (namespace === undefined || namespace === 'shop' ? [policy] : []),
    clusterPolicy: (name) => clusters.find((c) => c.metadata.name === name),
    clusterPolicies: () => clusters,
    namespace: (name) => (name === 'shop' ? ns : undefined),
    namespaces: () => [ns],
    ownNamespace: 'loopguard-system',
    services: (namespace) => (namespace === undefined || namespace === 'shop' ? [web] : []),
    ingresses: () => [],
    gateways: () => [],
    envoyProxy: () => undefined,
    gatewayClass: () => undefined,
  };
}

/** What one policy does with web: manages it, waits for the holder, reports a conflict, releases it, or nothing. */
function roleOf(subject: PolicySubject, c: PolicyCaches): string[] {
  const t = policyTargets(subject, c);
  return [
    ...t.mine.filter((m) => m.facts.name === 'web').map((m) => `manages:${m.mode}`),
    ...t.conflicts.filter((a) => a.target.name === 'web').map((a) => `${a.verdict}:${a.rootCause.id}`),
    ...t.orphans.filter((o) => o.facts.name === 'web').map((o) => `releases:${o.mode}`),
  ];
}

describe('policyTargets: the manager is the same whoever holds the record', () => {
  const rows: [Mode, Mode, Precedence][] = [];
  for (const local of ['Audit', 'Enforce'] as const) for (const cluster of ['Audit', 'Enforce'] as const) for (const precedence of ['NamespacedFirst', 'ClusterFirst'] as const) rows.push([local, cluster, precedence]);

  it.each(rows)('LoopbackPolicy in %s, ClusterLoopbackPolicy in %s, %s', (localMode, clusterMode, precedence) => {
    // Who should manage web: Enforce first, then precedence between the kinds.
    const clusterWins = localMode === clusterMode ? precedence === 'ClusterFirst' : clusterMode === 'Enforce';
    const winnerMode = clusterWins ? clusterMode : localMode;
    for (const localFirst of [true, false]) {
      const policy: LoopbackPolicy = { apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { namespace: 'shop', name: 'own', uid: 'uid-own', creationTimestamp: at(localFirst ? 0 : 1) }, spec: { mode: localMode } };
      const cluster: ClusterLoopbackPolicy = {
        apiVersion: 'loopguard.dev/v1alpha1',
        kind: 'ClusterLoopbackPolicy',
        metadata: { name: 'platform', uid: 'uid-platform', creationTimestamp: at(localFirst ? 1 : 0) },
        spec: { mode: clusterMode, precedence, namespaceSelector: { matchLabels: { team: 'shop' } } },
      };
      const local = subjectOf(policy);
      const platform = clusterSubjectOf(cluster);
      for (const held of [undefined, local, platform]) {
        const records = held ? [recordFor({ kind: 'Service', namespace: 'shop', name: 'web', uid: 'uid-web' }, held.owner, { v: 1 } as never)] : [];
        const c = caches(policy, cluster, records);
        const [winner, loser] = clusterWins ? [platform, local] : [local, platform];
        // Between kinds the loser always lost by mode or precedence.
        const why = 'Conflict:PolicyPrecedence';
        const context = `created ${localFirst ? 'LoopbackPolicy' : 'cluster policy'} first, held by ${held?.owner ?? 'none'}`;
        // The winner manages it, or (Enforce, the loser holding the record) waits for the loser's release.
        const waits = winnerMode === 'Enforce' && held === loser;
        expect([context, roleOf(winner, c)]).toEqual([context, waits ? ['Pending:PolicyHandover'] : [`manages:${winnerMode}`]]);
        // The loser reports the conflict; holding the record, it releases web — in Enforce when the winner enforces
        // (the handover), else in Audit, where nothing is released and the record stays.
        expect([context, roleOf(loser, c)]).toEqual([context, [why, ...(held === loser ? [`releases:${winnerMode === 'Enforce' ? 'Enforce' : loser.spec.mode}`] : [])]]);
      }
    }
  });
});

// Issue 37 #5: two cluster policies of different precedence over a namespace with its own policy, all in Enforce.
describe('policyTargets: disagreeing cluster policies, whoever holds the record', () => {
  const clp = (name: string, i: number, precedence: Precedence): ClusterLoopbackPolicy => ({
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'ClusterLoopbackPolicy',
    metadata: { name, uid: `uid-${name}`, creationTimestamp: at(i) },
    spec: { mode: 'Enforce', precedence, namespaceSelector: { matchLabels: { team: 'shop' } } },
  });
  const policy: LoopbackPolicy = { apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { namespace: 'shop', name: 'own', uid: 'uid-own', creationTimestamp: at(2) }, spec: { mode: 'Enforce' } };
  it.each<[string, ClusterLoopbackPolicy[], 'own' | 'old']>([
    ['the older NamespacedFirst decides: the LoopbackPolicy', [clp('old', 0, 'NamespacedFirst'), clp('young', 1, 'ClusterFirst')], 'own'],
    ['the older ClusterFirst decides: the older cluster policy', [clp('old', 0, 'ClusterFirst'), clp('young', 1, 'NamespacedFirst')], 'old'],
  ])('%s', (_name, clusters, manager) => {
    const subjects = [subjectOf(policy), ...clusters.map(clusterSubjectOf)];
    const winner = subjects.find((s) => s.name === manager)!;
    for (const held of [undefined, ...subjects]) {
      const records = held ? [recordFor({ kind: 'Service', namespace: 'shop', name: 'web', uid: 'uid-web' }, held.owner, { v: 1 } as never)] : [];
      const c = caches(policy, clusters, records);
      const context = `held by ${held?.owner ?? 'none'}`;
      expect([context, roleOf(winner, c)]).toEqual([context, held && held !== winner ? ['Pending:PolicyHandover'] : ['manages:Enforce']]);
      for (const loser of subjects.filter((s) => s !== winner)) {
        expect([context, loser.name, roleOf(loser, c)]).toEqual([context, loser.name, [expect.stringMatching(/^Conflict:Policy(Precedence|Conflict)$/), ...(held === loser ? ['releases:Enforce'] : [])]]);
      }
    }
  });
});

// The probe plan's input (docs/probe.md §11): what each live probing policy manages, read from the caches as a round
// would, so the plan waits for no round.
describe('probeSelections', () => {
  const probing = (mode: Mode, deleting = false): LoopbackPolicy => ({
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'LoopbackPolicy',
    metadata: { namespace: 'shop', name: 'own', uid: 'uid-own', creationTimestamp: at(0), ...(deleting ? { deletionTimestamp: at(5) } : {}) },
    spec: { mode, probe: { enabled: true } },
  });
  const cluster = (mode: Mode, probe: boolean): ClusterLoopbackPolicy => ({
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'ClusterLoopbackPolicy',
    metadata: { name: 'platform', uid: 'uid-platform', creationTimestamp: at(1) },
    spec: { mode, precedence: 'NamespacedFirst', namespaceSelector: { matchLabels: { team: 'shop' } }, probe: { enabled: probe } },
  });
  const selected = (policy: LoopbackPolicy, clp: ClusterLoopbackPolicy) =>
    Object.fromEntries([...probeSelections(caches(policy, clp, []))].map(([owner, s]) => [owner, s.targets.map((t) => t.name)]));
  it.each<[string, LoopbackPolicy, ClusterLoopbackPolicy, Record<string, string[]>]>([
    ['the probing policy that manages web selects it; one that does not probe hands nothing over', probing('Audit'), cluster('Audit', false), { 'shop/own': ['web'] }],
    ['a probing policy that lost web (Enforce first) selects nothing', probing('Audit'), cluster('Enforce', true), { 'shop/own': [], 'ClusterLoopbackPolicy/platform': ['web'] }],
    ['a policy being deleted hands nothing over', probing('Enforce', true), cluster('Audit', false), {}],
  ])('%s', (_name, policy, clp, expected) => {
    expect(selected(policy, clp)).toEqual(expected);
  });
});

// The DNS rules' input (docs/dns.md §4): each live cluster policy asking for Managed, its targets as the caches show
// them judged by its round's last outcome; nothing until every one of them has outcomes (the file must not drop its names).
describe('managedDnsNames', () => {
  const site: V1Ingress = {
    metadata: { namespace: 'shop', name: 'site', uid: 'uid-site' },
    spec: { rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    status: { loadBalancer: { ingress: [{ ip: '10.0.0.10' }] } },
  };
  const managed = (deleting = false): ClusterLoopbackPolicy => ({
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'ClusterLoopbackPolicy',
    metadata: { name: 'platform', uid: 'uid-platform', creationTimestamp: at(1), ...(deleting ? { deletionTimestamp: at(5) } : {}) },
    spec: { mode: 'Enforce', namespaceSelector: { matchLabels: { team: 'shop' } }, l7: { inClusterDNS: 'Managed' } },
  });
  const atRisk = { assessment: { target: { kind: 'Ingress', namespace: 'shop', name: 'site' }, verdict: 'AtRisk', rootCause: { id: 'KeepaliveCapabilityMissing' }, changes: [] }, plan: [] } as unknown as TargetOutcome;
  const names = (clp: ClusterLoopbackPolicy, planned: boolean, enforce = true) => {
    const c: PolicyCaches = { ...caches(probingNone, clp, []), policies: () => [], policy: () => undefined, ingresses: (ns) => (ns === undefined || ns === 'shop' ? [site] : []) };
    const got = managedDnsNames(c, () => (planned ? new Map([['Ingress/shop/site', atRisk]]) : undefined), enforce);
    return got && Object.fromEntries([...got].map(([owner, choice]) => [owner, choice.flatMap((x) => ('reason' in x ? [] : [`${x.host}→${x.namespace}/${x.service}`]))]));
  };
  const probingNone = { metadata: { namespace: 'shop', name: 'none' }, spec: {} } as LoopbackPolicy;
  it.each<[string, ClusterLoopbackPolicy, boolean, boolean, Record<string, string[]> | undefined]>([
    ['not planned yet: nothing (the pass holds)', managed(), false, true, undefined],
    ['planned: its AtRisk Ingress asks for its host, to the one Service of its paths', managed(), true, true, { 'ClusterLoopbackPolicy/platform': ['shop.example.com→shop/web'] }],
    ['without an executor (Enforce only diagnoses): asks for nothing', managed(), true, false, { 'ClusterLoopbackPolicy/platform': [] }],
    ['being deleted: not asking, even unplanned', managed(true), false, true, {}],
  ])('%s', (_name, clp, planned, enforce, expected) => {
    expect(names(clp, planned, enforce)).toEqual(expected);
  });
});

// The namespaces' reports' input (docs/reports.md): per policy covering the namespace, what it manages there as the
// caches show it, with its round's last outcome (the probe's figures included) and the handovers it waits on; a
// loser's conflict never (the manager reports the target); nothing while a live covering policy has no outcomes yet.
describe('namespaceResults and reportedNamespaces', () => {
  const local = (deleting = false): LoopbackPolicy => ({
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'LoopbackPolicy',
    metadata: { namespace: 'shop', name: 'own', uid: 'uid-own', creationTimestamp: at(0), ...(deleting ? { deletionTimestamp: at(5) } : {}) },
    spec: { mode: 'Audit' },
  });
  const platform: ClusterLoopbackPolicy = {
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'ClusterLoopbackPolicy',
    metadata: { name: 'platform', uid: 'uid-platform', creationTimestamp: at(1) },
    spec: { mode: 'Enforce', namespaceSelector: { matchLabels: { team: 'shop' } } },
  };
  const webAtRisk = { assessment: { target: { kind: 'Service', namespace: 'shop', name: 'web' }, verdict: 'AtRisk', rootCause: { id: 'PodSourceNotMasqueraded', message: 'm' }, loadBalancerId: 'lb-web', changes: [] }, plan: ['step'], measured: '0 of 30 failed' } as unknown as TargetOutcome;
  const results = (policy: LoopbackPolicy, planned: string[], o: { held?: string; namespace?: string; outcome?: TargetOutcome } = {}) => {
    const records = o.held ? [recordFor({ kind: 'Service', namespace: 'shop', name: 'web', uid: 'uid-web' }, o.held, { v: 1 } as never)] : [];
    const c = caches(policy, platform, records);
    const outcomes = (owner: string) => (planned.includes(owner) ? new Map(o.outcome ? [['Service/shop/web', o.outcome]] : []) : undefined);
    const got = namespaceResults(c, outcomes, o.namespace ?? 'shop');
    return { got: got && Object.fromEntries([...got].map(([owner, ts]) => [owner, ts.map((x) => ({ ...x }))])), covered: reportedNamespaces(c, outcomes) };
  };
  const both = ['shop/own', 'ClusterLoopbackPolicy/platform'];

  it("the manager's remembered outcome, with the uid, mode, plan and measured figures; the loser's conflict stays out", () => {
    expect(results(local(), both, { outcome: webAtRisk })).toEqual({
      got: {
        'shop/own': [],
        'ClusterLoopbackPolicy/platform': [
          { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-web', verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded', message: 'm', mode: 'Enforce', policy: 'ClusterLoopbackPolicy/platform', plan: ['step'], loadBalancerId: 'lb-web', measured: '0 of 30 failed' },
        ],
      },
      covered: new Set(['shop']),
    });
  });

  it('a target its manager has not planned yet is left out until it has', () => {
    expect(results(local(), both).got).toEqual({ 'shop/own': [], 'ClusterLoopbackPolicy/platform': [] });
  });

  it('the manager waiting for the holder to give the target back reports the handover', () => {
    const { got } = results(local(), both, { held: 'shop/own' });
    expect(got?.['ClusterLoopbackPolicy/platform']?.map((x) => [x.rootCause, x.verdict, x.uid])).toEqual([['PolicyHandover', 'Pending', undefined]]);
  });

  it('a live covering policy without outcomes holds the namespace and the prune; one being deleted does not', () => {
    expect(results(local(), ['ClusterLoopbackPolicy/platform'], { outcome: webAtRisk })).toEqual({ got: undefined, covered: undefined });
    expect(results(local(true), ['ClusterLoopbackPolicy/platform']).got).toEqual({ 'ClusterLoopbackPolicy/platform': [] });
  });

  it('a namespace no policy covers: an empty map (its report is pruned)', () => {
    expect(results(local(), both, { namespace: 'blog' }).got).toEqual({});
  });
});
