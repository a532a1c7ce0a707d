// Which policy covers each target in `loopguard doctor` (src/cli/policy-spec.ts, src/cli/scan.ts): LoopbackPolicies
// and ClusterLoopbackPolicies resolved with the operator's pieces (coverageOf, resolveConflicts), and at-risk targets
// no policy covers marked uncovered — but only when the cluster policies could be resolved.
import { describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import type { ClusterLoopbackPolicy, ClusterLoopbackPolicySpec } from '../../../src/api/clusterloopbackpolicy.js';
import type { LoopbackPolicy, LoopbackPolicySpec } from '../../../src/api/loopbackpolicy.js';
import { renderMarkdown } from '../../../src/cli/output/markdown.js';
import { renderSarif } from '../../../src/cli/output/sarif.js';
import { renderTable } from '../../../src/cli/output/table.js';
import { choosePolicies, coverageResolved, operatorNamespace, type ClusterPolicyInput } from '../../../src/cli/policy-spec.js';
import { scanReport } from '../../../src/cli/scan.js';
import type { TargetFacts } from '../../../src/model/facts.js';
import type { NamespaceFacts } from '../../../src/model/namespace-coverage.js';
import { clb, l4Listener, PROFILES } from '../model/fixtures.js';

const svc = (namespace: string, name: string, labels: Record<string, string> = {}): TargetFacts => ({ kind: 'Service', namespace, name, labels, type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP' }] });
const ing = (namespace: string, name: string): TargetFacts => ({ kind: 'Ingress', namespace, name, rules: [], tls: false });

function lp(namespace: string, name: string, created: string, spec: LoopbackPolicySpec = { mode: 'Audit' }): LoopbackPolicy {
  return { apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { namespace, name, uid: `uid-${name}`, creationTimestamp: created as unknown as Date }, spec };
}

function clp(name: string, created: string, spec: Partial<ClusterLoopbackPolicySpec> = {}, excludedNamespaces?: string[]): ClusterLoopbackPolicy {
  return {
    apiVersion: 'loopguard.dev/v1alpha1',
    kind: 'ClusterLoopbackPolicy',
    metadata: { name, uid: `uid-${name}`, creationTimestamp: created as unknown as Date },
    spec: { mode: 'Audit', ...spec },
    ...(excludedNamespaces ? { status: { excludedNamespaces } } : {}),
  };
}

const NAMESPACES: NamespaceFacts[] = [
  { name: 'shop', labels: { team: 'shop', rollout: 'early' } },
  { name: 'bare' },
  { name: 'kube-system', labels: { 'kubernetes.io/metadata.name': 'kube-system' } },
  { name: 'loopguard-system' },
];
const OLD = '2026-01-01T00:00:00Z';
const NEW = '2026-06-01T00:00:00Z';
const SHOP = { namespaceSelector: { matchLabels: { team: 'shop' } } };

interface Row {
  name: string;
  targets: TargetFacts[];
  policies?: LoopbackPolicy[];
  cluster?: ClusterLoopbackPolicy[];
  namespaces?: NamespaceFacts[] | 'forbidden';
  /** target key → the covering policy as the report names it (undefined: none), and its mode when covered. */
  want: Record<string, [string | undefined, ('Audit' | 'Enforce')?]>;
}

const ROWS: Row[] = [
  { name: 'a LoopbackPolicy of its namespace', targets: [svc('shop', 'web')], policies: [lp('shop', 'audit', OLD)], want: { 'Service/shop/web': ['LoopbackPolicy shop/audit', 'Audit'] } },
  { name: 'a LoopbackPolicy of another namespace covers nothing', targets: [svc('bare', 'web')], policies: [lp('shop', 'audit', OLD)], want: { 'Service/bare/web': [undefined] } },
  {
    name: 'a cluster policy covers the labelled namespace only',
    targets: [svc('shop', 'web'), svc('bare', 'web')],
    cluster: [clp('platform', OLD, SHOP)],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/platform', 'Audit'], 'Service/bare/web': [undefined] },
  },
  {
    name: 'NamespacedFirst (the default): the LoopbackPolicy wins, even when younger',
    targets: [svc('shop', 'web')],
    policies: [lp('shop', 'team', NEW)],
    cluster: [clp('platform', OLD, SHOP)],
    want: { 'Service/shop/web': ['LoopbackPolicy shop/team'] },
  },
  {
    name: 'ClusterFirst: the cluster policy wins, even when younger',
    targets: [svc('shop', 'web')],
    policies: [lp('shop', 'team', OLD)],
    cluster: [clp('platform', NEW, { ...SHOP, precedence: 'ClusterFirst' })],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/platform'] },
  },
  {
    name: 'ClusterFirst where the cluster policy does not select the kind: the LoopbackPolicy keeps it',
    targets: [ing('shop', 'api')],
    policies: [lp('shop', 'team', OLD)],
    cluster: [clp('platform', OLD, { ...SHOP, precedence: 'ClusterFirst', targets: ['Service'] })],
    want: { 'Ingress/shop/api': ['LoopbackPolicy shop/team'] },
  },
  {
    name: 'two cluster policies: the oldest (a record changes nothing: doctor reads none for this)',
    targets: [svc('shop', 'web'), svc('shop', 'cart')],
    cluster: [clp('young', NEW, SHOP), clp('old', OLD)],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/old'], 'Service/shop/cart': ['ClusterLoopbackPolicy/old'] },
  },
  {
    name: 'NamespacedFirst, the cluster policy in Enforce and the LoopbackPolicy in Audit: the one that enforces',
    targets: [svc('shop', 'web')],
    policies: [lp('shop', 'team', NEW, { mode: 'Audit' })],
    cluster: [clp('platform', OLD, { ...SHOP, mode: 'Enforce' })],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/platform', 'Enforce'] },
  },
  {
    name: 'an older Audit cluster policy and a younger Enforce one: the one that enforces',
    targets: [svc('shop', 'web')],
    cluster: [clp('watch', OLD, SHOP), clp('fix', NEW, { ...SHOP, mode: 'Enforce' })],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/fix', 'Enforce'] },
  },
  {
    name: 'an empty namespaceSelector covers every namespace but the system ones',
    targets: [svc('bare', 'web'), svc('kube-system', 'dns')],
    cluster: [clp('all', OLD)],
    want: { 'Service/bare/web': ['ClusterLoopbackPolicy/all', 'Audit'], 'Service/kube-system/dns': [undefined] },
  },
  {
    name: "loopguard's own namespace, learnt from the status, is excluded as the operator excludes it",
    targets: [svc('loopguard-system', 'metrics'), svc('bare', 'web')],
    cluster: [clp('all', OLD, {}, ['kube-system', 'loopguard-system'])],
    want: { 'Service/loopguard-system/metrics': [undefined], 'Service/bare/web': ['ClusterLoopbackPolicy/all'] },
  },
  {
    name: 'systemNamespaces: Include with a selector covers kube-system',
    targets: [svc('kube-system', 'dns')],
    cluster: [clp('sys', OLD, { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['kube-system'] }] }, systemNamespaces: 'Include' })],
    want: { 'Service/kube-system/dns': ['ClusterLoopbackPolicy/sys'] },
  },
  {
    name: "a modeOverride gives the namespace's mode",
    targets: [svc('shop', 'web'), svc('bare', 'web')],
    cluster: [clp('staged', OLD, { mode: 'Audit', modeOverrides: [{ mode: 'Enforce', namespaceSelector: { matchLabels: { rollout: 'early' } } }] })],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/staged', 'Enforce'], 'Service/bare/web': ['ClusterLoopbackPolicy/staged', 'Audit'] },
  },
  {
    name: "the cluster policy's target selector applies in covered namespaces",
    targets: [svc('shop', 'web', { tier: 'front' }), svc('shop', 'db')],
    cluster: [clp('front', OLD, { ...SHOP, selector: { matchLabels: { tier: 'front' } } })],
    want: { 'Service/shop/web': ['ClusterLoopbackPolicy/front'], 'Service/shop/db': [undefined] },
  },
  {
    name: 'namespaces forbidden: cluster policies unresolved, LoopbackPolicies still apply',
    targets: [svc('shop', 'web'), svc('bare', 'web')],
    policies: [lp('bare', 'team', OLD)],
    cluster: [clp('platform', OLD, { precedence: 'ClusterFirst' })],
    namespaces: 'forbidden',
    want: { 'Service/shop/web': [undefined], 'Service/bare/web': ['LoopbackPolicy bare/team'] },
  },
];

describe('which policy covers a target (choosePolicies)', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const cluster: ClusterPolicyInput = { policies: row.cluster ?? [], namespaces: row.namespaces === 'forbidden' ? undefined : (row.namespaces ?? NAMESPACES) };
    const choices = choosePolicies(row.targets, row.policies ?? [], cluster);
    for (const [key, [policy, mode]] of Object.entries(row.want)) {
      const choice = choices.get(key);
      expect([key, choice?.policy]).toEqual([key, policy]);
      if (mode) expect([key, choice?.spec.mode]).toEqual([key, mode]);
      // The plan's owner is the policy's owner key, which records carry (record-registry.ts).
      if (policy) expect(choice?.owner).toBe(policy.replace(/^LoopbackPolicy /, ''));
    }
    expect(coverageResolved(cluster)).toBe(row.namespaces !== 'forbidden');
  });

  it('carries skipAnnotation: Ignore to the plan, and learns no operator namespace from system ones', () => {
    const [choice] = choosePolicies([svc('shop', 'web')], [], { policies: [clp('strict', OLD, { ...SHOP, skipAnnotation: 'Ignore' })], namespaces: NAMESPACES }).values();
    expect(choice).toMatchObject({ policy: 'ClusterLoopbackPolicy/strict', ignoreSkipAnnotation: true });
    expect(operatorNamespace([clp('a', OLD, {}, ['kube-system', 'kube-public'])])).toBeUndefined();
    expect(coverageResolved({ policies: [], namespaces: undefined })).toBe(true);
  });
});

// An IPVS cluster whose kube-proxy supports prevent-loopback: a Local Service keeps pod sources (at risk), a Cluster
// one is masqueraded (not applicable). Both on CLBs read as they are.
function service(namespace: string, name: string, etp: 'Local' | 'Cluster'): V1Service {
  return {
    metadata: { namespace, name, uid: `uid-${namespace}-${name}`, annotations: { 'service.kubernetes.io/loadbalance-id': `lb-${name}` } },
    spec: { type: 'LoadBalancer', externalTrafficPolicy: etp, ports: [{ port: 80, protocol: 'TCP' }] },
    status: { loadBalancer: { ingress: [{ ip: '10.0.0.10' }] } },
  };
}

function scan(cluster: ClusterLoopbackPolicy[], namespaces: NamespaceFacts[] | undefined) {
  const services = [service('shop', 'orders', 'Local'), service('bare', 'orders', 'Local'), service('bare', 'calm', 'Cluster')];
  const ids = ['lb-orders', 'lb-calm'];
  return scanReport({
    snapshot: { services, ingresses: [], tkeServiceConfigs: [], records: [], policies: [], clusterPolicies: cluster, ...(namespaces ? { namespaces } : {}), notes: [] },
    profile: PROFILES.ipvsNew,
    observations: new Map(ids.map((id) => [id, { state: 'Found' as const, clb: clb({ loadBalancerId: id, listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0)] }) }])),
    observedAt: new Map(ids.map((id) => [id, 0])),
    now: new Date(0),
  });
}

describe('doctor: covered and uncovered targets (scanReport and the formats)', () => {
  const report = scan([clp('platform', OLD, SHOP)], NAMESPACES);
  const byKey = new Map(report.targets.map((t) => [`${t.namespace}/${t.name}`, t]));

  it('names the cluster policy for its namespace, marks the at-risk target it leaves out uncovered, and counts it', () => {
    expect(byKey.get('shop/orders')).toMatchObject({ verdict: 'AtRisk', policy: 'ClusterLoopbackPolicy/platform' });
    expect(byKey.get('shop/orders')?.uncovered).toBeUndefined();
    expect(byKey.get('bare/orders')).toMatchObject({ verdict: 'AtRisk', uncovered: true });
    expect(byKey.get('bare/orders')?.policy).toBeUndefined();
    // Not at risk: nothing to cover.
    expect(byKey.get('bare/calm')).toMatchObject({ verdict: 'NotApplicable' });
    expect(byKey.get('bare/calm')?.uncovered).toBeUndefined();
    expect(report.uncovered).toBe(1);
  });

  it('unresolved cluster policies: no target is reported uncovered, and no count', () => {
    const unresolved = scan([clp('platform', OLD, SHOP)], undefined);
    expect(unresolved.targets.filter((t) => t.uncovered)).toEqual([]);
    expect(unresolved.targets.every((t) => t.policy === undefined)).toBe(true);
    expect(unresolved.uncovered).toBeUndefined();
    // Without cluster policies coverage is known: the namespaced-only view is complete.
    expect(scan([], undefined).uncovered).toBe(2);
  });

  it('table, markdown and SARIF carry the covering policy and the uncovered marker', () => {
    const text = renderTable(report, false);
    expect(text).toMatch(/\nshop\s+Service\s+orders\s+lb-orders\s+AtRisk\s+PodSourceNotMasqueraded\s+\d steps?\s+ClusterLoopbackPolicy\/platform\n/);
    expect(text).toMatch(/\nbare\s+Service\s+orders\s+lb-orders\s+AtRisk\s+PodSourceNotMasqueraded\s+\d steps?\s+UNCOVERED\n/);
    expect(text).toContain('  Covered by: ClusterLoopbackPolicy/platform');
    expect(text).toContain('  Uncovered: no LoopbackPolicy or ClusterLoopbackPolicy selects it');
    expect(text).toMatch(/; 1 at risk and uncovered \(no LoopbackPolicy or ClusterLoopbackPolicy selects it\)\n/);
    const md = renderMarkdown(report);
    expect(md).toContain('| Target | CLB | Verdict | Root cause | Plan | Policy |');
    expect(md).toMatch(/\| `Service shop\/orders` \| .* \| `ClusterLoopbackPolicy\/platform` \|\n/);
    expect(md).toMatch(/\| `Service bare\/orders` \| .* \| \*\*uncovered\*\* \|\n/);
    const sarif = JSON.parse(renderSarif(report, '0.1.0')) as { runs: { properties: { uncovered?: number }; results: { properties: Record<string, unknown>; message: { text: string } }[] }[] };
    const [run] = sarif.runs;
    expect(run?.properties.uncovered).toBe(1);
    const results = run?.results ?? [];
    expect(results.find((r) => r.properties['policy'] === 'ClusterLoopbackPolicy/platform')?.message.text).toContain('Covered by: ClusterLoopbackPolicy/platform.');
    expect(results.find((r) => r.properties['uncovered'] === true)?.message.text).toContain('Service bare/orders');
  });
});
