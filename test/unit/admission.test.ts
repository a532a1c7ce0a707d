// Issue 25, the pure side of the admission warning: config/components/admission-warnings and the chart template are what
// `npm run gen:admission` writes from src/admission (the messages are the model's texts); the parameters the operator
// writes follow the cluster profile and the Enforce policies; the shapes at risk are the ones `loopguard plan` finds
// at risk with no condition. The real apiserver's side is test/integration/admission-warnings.test.ts.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION, KIND, type LoopbackPolicy, type LoopbackPolicySpec } from '../../src/api/loopbackpolicy.js';
import type { ClusterLoopbackPolicy } from '../../src/api/clusterloopbackpolicy.js';
import type { NamespaceFacts } from '../../src/model/namespace-coverage.js';
import { FIXES, warningText } from '../../src/admission/messages.js';
import { buildAdmissionParams, enforcedNamespaces, sameData } from '../../src/admission/params.js';
import { celTemplate } from '../../src/admission/policy.js';
import { generatedFiles } from '../../src/admission/render.js';
import { riskyShapes, shapesOf } from '../../src/admission/shapes.js';
import { planReport } from '../../src/cli/offline.js';
import { profileFrom, type ProfileFlags } from '../../src/model/cluster-profile.js';
import type { RootCauseId } from '../../src/model/root-causes.js';
import { ADMISSION_CASES } from '../support/admission-cases.js';
import { REPO_ROOT } from '../controlplane/crds.js';

const profile = (flags: ProfileFlags) => profileFrom({}, flags);
const IPVS_NEW = { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.20.6-tke.12' };

function policy(namespace: string, name: string, spec: LoopbackPolicySpec, deleting = false): LoopbackPolicy {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { namespace, name, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, spec };
}

describe('generated files', () => {
  it.each(Object.keys(generatedFiles()))('%s is what npm run gen:admission writes', (path) => {
    expect(readFileSync(join(REPO_ROOT, path), 'utf8')).toBe(generatedFiles()[path]);
  });

  // Issue 37: config/default must apply on Kubernetes 1.28 (TKE still runs it), which serves no
  // admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy; the warnings are a component users add from 1.30.
  it('config/default leaves the admission policy out; config/components/admission-warnings is a component with both files', () => {
    const kustomization = readFileSync(join(REPO_ROOT, 'config/default/kustomization.yaml'), 'utf8');
    expect(kustomization).toMatch(/^resources:$/m);
    expect(kustomization).not.toMatch(/^ {2}- .*admission/m);
    expect(kustomization).not.toMatch(/^components:/m);
    const component = readFileSync(join(REPO_ROOT, 'config/components/admission-warnings/kustomization.yaml'), 'utf8');
    expect(component).toMatch(/^kind: Component$/m);
    expect(component).toMatch(/^ {2}- validating_admission_policy\.yaml$/m);
    expect(component).toMatch(/^ {2}- validating_admission_policy_binding\.yaml$/m);
  });
});

describe('the shapes at risk, from the model', () => {
  it.each<[string, ProfileFlags, Record<string, RootCauseId>]>([
    [
      'IPVS, TKE kube-proxy with prevent-loopback: ETP Local or direct-access, unless annotated',
      IPVS_NEW,
      { 'Service.etpLocal': 'PodSourceNotMasqueraded', 'Service.directAccess': 'DirectAccessSameNode', 'Service.etpLocal.directAccess': 'DirectAccessSameNode', Ingress: 'L7Loopback' },
    ],
    [
      'IPVS, TKE kube-proxy too old: the annotation does not help',
      { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.18.4-tke.1' },
      {
        'Service.etpLocal': 'KubeProxyTooOld',
        'Service.directAccess': 'KubeProxyTooOld',
        'Service.etpLocal.directAccess': 'KubeProxyTooOld',
        'Service.etpLocal.preventLoopback': 'KubeProxyTooOld',
        'Service.directAccess.preventLoopback': 'KubeProxyTooOld',
        'Service.etpLocal.directAccess.preventLoopback': 'KubeProxyTooOld',
        Ingress: 'L7Loopback',
      },
    ],
    ['iptables answers the VIP locally: only L7', { kubeProxyMode: 'iptables' }, { Ingress: 'L7Loopback' }],
    ['upstream IPVS binds every VIP: it depends on the health-check source, so no warning', { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.30.2' }, { Ingress: 'L7Loopback' }],
  ])('%s', (_why, flags, expected) => {
    expect(Object.fromEntries(riskyShapes(profile(flags)))).toEqual(expected);
  });

  it('every root cause the parameters can name has a fix of its own', () => {
    const profiles: ProfileFlags[] = [IPVS_NEW, { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.18.4-tke.1' }, { kubeProxyMode: 'ipvs' }, {}, { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.21.1-tke.1' }, { kubeProxyMode: 'nftables' }, { kubeProxyMode: 'none' }];
    const causes = new Set(profiles.flatMap((f) => [...riskyShapes(profile(f)).values()]));
    expect([...causes].sort()).toEqual(['DirectAccessSameNode', 'KubeProxyModeUnknown', 'KubeProxyTooOld', 'KubeProxyVersionUnknown', 'L7Loopback', 'PodSourceNotMasqueraded']);
    for (const cause of causes) expect({ cause, fix: FIXES[cause] !== undefined }).toEqual({ cause, fix: true });
  });

  it('has one shape per subset of the bits, keyed in the CEL order', () => {
    expect(shapesOf('Service').map((s) => s.key)).toEqual([
      'Service',
      'Service.etpLocal',
      'Service.directAccess',
      'Service.etpLocal.directAccess',
      'Service.preventLoopback',
      'Service.etpLocal.preventLoopback',
      'Service.directAccess.preventLoopback',
      'Service.etpLocal.directAccess.preventLoopback',
    ]);
    expect(shapesOf('Ingress').map((s) => [s.key, s.manifests.length])).toEqual([
      ['Ingress', 1],
      ['Ingress.keepaliveConfig', 2],
    ]);
  });

  it('the shared table of cases agrees with loopguard plan (the same check the integration test makes on the apiserver)', () => {
    const set = {
      services: ADMISSION_CASES.filter((c) => c.manifest['kind'] === 'Service').map((c) => ({ object: { ...c.manifest, metadata: { ...(c.manifest['metadata'] as object), namespace: 'ns' } }, source: { file: 'cases', line: 1 } })),
      ingresses: ADMISSION_CASES.filter((c) => c.manifest['kind'] === 'Ingress').map((c) => ({ object: { ...c.manifest, metadata: { ...(c.manifest['metadata'] as object), namespace: 'ns' } }, source: { file: 'cases', line: 1 } })),
      tkeServiceConfigs: [],
      policies: [],
      skipped: 0,
    };
    const report = planReport(set as Parameters<typeof planReport>[0], { profile: profile(IPVS_NEW), pinned: {}, now: new Date(0) });
    const risky = riskyShapes(profile(IPVS_NEW));
    for (const c of ADMISSION_CASES) {
      const t = report.targets.find((x) => x.name === c.name);
      const certain = t?.verdict === 'AtRisk' && t.condition === undefined ? t.rootCause : undefined;
      // Covered cases are at risk in the model; the policy leaves them to the Enforce policy.
      expect({ name: c.name, warn: c.covered ? undefined : certain }).toEqual({ name: c.name, warn: c.warn });
      if (c.warn) expect([...risky.values()]).toContain(c.warn);
    }
  });
});

describe('buildAdmissionParams', () => {
  it('names the profile and the shapes at risk', () => {
    expect(buildAdmissionParams({ profile: profile({ kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.18.4-tke.1' }), policies: [], enforcing: true })).toMatchObject({
      kubeProxy: 'kube-proxy ipvs v1.18.4-tke.1',
      kubeProxyMode: 'ipvs',
      kubeProxyVersion: 'v1.18.4-tke.1',
      preventLoopbackSupported: 'False',
      upgradeTo: 'v1.18.4-tke.20',
      'risk.Service.etpLocal': 'KubeProxyTooOld',
    });
    const unknown = buildAdmissionParams({ profile: profile({}), policies: [], enforcing: true });
    expect(unknown).toMatchObject({ kubeProxy: 'kube-proxy unknown', upgradeTo: 'a TKE build that supports prevent-loopback' });
    expect(unknown).not.toHaveProperty('kubeProxyVersion');
  });

  it('covers the namespaces where a live Enforce policy wins, per kind they target, naming the winner', () => {
    const policies = [
      policy('a', 'zeta', { mode: 'Enforce' }),
      // No mode: Audit since issue 37, so it covers nothing (safe by default).
      policy('e', 'bare', {}),
      policy('a', 'alpha', { mode: 'Enforce', selector: { matchLabels: { tier: 'web' } } }),
      policy('b', 'l4', { mode: 'Enforce', targets: ['Service'] }),
      policy('c', 'audit', { mode: 'Audit' }),
      policy('d', 'going', { mode: 'Enforce' }, true),
    ];
    const data = buildAdmissionParams({ profile: profile(IPVS_NEW), policies, enforcing: true });
    expect(Object.entries(data).filter(([k]) => k.startsWith('enforce.'))).toEqual([
      ['enforce.Ingress.a', 'alpha'],
      ['enforce.Service.a', 'alpha'],
      ['enforce.Service.b', 'l4'],
    ]);
    expect(enforcedNamespaces(policies, 'Ingress')).toEqual(new Map([['a', ['alpha']]]));
    // An operator that does not carry out Enforce policies covers nothing.
    expect(Object.keys(buildAdmissionParams({ profile: profile(IPVS_NEW), policies, enforcing: false })).filter((k) => k.startsWith('enforce.'))).toEqual([]);
  });

  it('an Enforce cluster policy over 8,000 namespaces (24-character names) fits the AdmissionParams schema (maxProperties, the 1.5 MiB request limit)', () => {
    const crd = readFileSync(join(REPO_ROOT, 'crds/loopguard.dev_admissionparams.yaml'), 'utf8');
    const maxProperties = Number(/maxProperties: (\d+)/.exec(crd)?.[1]);
    const clusterPolicies: ClusterLoopbackPolicy[] = [{ apiVersion: API_VERSION, kind: 'ClusterLoopbackPolicy' as const, metadata: { name: 'everywhere' }, spec: { mode: 'Enforce' as const } }];
    const namespaces: NamespaceFacts[] = Array.from({ length: 8000 }, (_, i) => ({ name: `team-${String(i).padStart(5, '0')}-payments-prod`, labels: {} }));
    const data = buildAdmissionParams({ profile: profile(IPVS_NEW), policies: [], clusterPolicies, namespaces, ownNamespace: 'loopguard-system', enforcing: true });
    expect(Object.keys(data).filter((k) => k.startsWith('enforce.'))).toHaveLength(16_000);
    expect(Object.keys(data).length).toBeLessThanOrEqual(maxProperties);
    expect(Buffer.byteLength(JSON.stringify({ data }))).toBeLessThan(1.5 * 1024 * 1024);
  });

  it('a cluster policy counts in each namespace it enforces (modeOverrides), never in the ones it audits or leaves out', () => {
    const clusterPolicies: ClusterLoopbackPolicy[] = [
      {
        apiVersion: API_VERSION,
        kind: 'ClusterLoopbackPolicy' as const,
        metadata: { name: 'platform' },
        spec: { mode: 'Audit' as const, targets: ['Service' as const], modeOverrides: [{ mode: 'Enforce' as const, namespaceSelector: { matchLabels: { 'loopguard.dev/enforce': 'true' } } }] },
      },
    ];
    const namespaces: NamespaceFacts[] = [
      { name: 'shop', labels: { 'loopguard.dev/enforce': 'true' } },
      { name: 'blog', labels: {} },
      { name: 'kube-system', labels: { 'loopguard.dev/enforce': 'true' } },
    ];
    const data = buildAdmissionParams({ profile: profile(IPVS_NEW), policies: [policy('shop', 'own', { mode: 'Enforce', targets: ['Service'] })], clusterPolicies, namespaces, ownNamespace: 'loopguard-system', enforcing: true });
    expect(Object.entries(data).filter(([k]) => k.startsWith('enforce.'))).toEqual([['enforce.Service.shop', 'own']]);
  });

  // Issue 38 #2: "covered" is the operator's resolution (model/conflicts.ts): the winner and its mode.
  describe('overlapping policies of both kinds: covered where the winner enforces', () => {
    const OLD = '2026-01-01T00:00:00Z';
    const NEW = '2026-06-01T00:00:00Z';
    const SHOP: NamespaceFacts[] = [{ name: 'shop', labels: { team: 'shop' } }];
    const cluster = (name: string, created: string, spec: ClusterLoopbackPolicy['spec'], deleting = false): ClusterLoopbackPolicy => ({
      apiVersion: API_VERSION,
      kind: 'ClusterLoopbackPolicy',
      metadata: { name, uid: `uid-${name}`, creationTimestamp: created as unknown as Date, ...(deleting ? { deletionTimestamp: NEW as unknown as Date } : {}) },
      spec: { namespaceSelector: { matchLabels: { team: 'shop' } }, targets: ['Service'], ...spec },
    });
    const local = (name: string, created: string, mode: 'Audit' | 'Enforce'): LoopbackPolicy => ({ ...policy('shop', name, { mode, targets: ['Service'] }), metadata: { namespace: 'shop', name, uid: `uid-${name}`, creationTimestamp: created as unknown as Date } });
    it.each<[string, ClusterLoopbackPolicy[], LoopbackPolicy[], string | undefined]>([
      ['NamespacedFirst Enforce cluster policy + Audit LoopbackPolicy: the cluster policy enforces', [cluster('platform', OLD, { mode: 'Enforce' })], [local('own', NEW, 'Audit')], 'ClusterLoopbackPolicy/platform'],
      ['NamespacedFirst Enforce cluster policy + Enforce LoopbackPolicy: the namespace policy', [cluster('platform', OLD, { mode: 'Enforce' })], [local('own', NEW, 'Enforce')], 'own'],
      ['ClusterFirst Audit cluster policy + Enforce LoopbackPolicy: the namespace policy enforces', [cluster('platform', OLD, { mode: 'Audit', precedence: 'ClusterFirst' })], [local('own', NEW, 'Enforce')], 'own'],
      ['ClusterFirst Audit cluster policy + Audit LoopbackPolicy: nothing enforces', [cluster('platform', OLD, { mode: 'Audit', precedence: 'ClusterFirst' })], [local('own', NEW, 'Audit')], undefined],
      ['an older Audit cluster policy + a younger Enforce one: the Enforce one', [cluster('watch', OLD, { mode: 'Audit' }), cluster('fix', NEW, { mode: 'Enforce' })], [], 'ClusterLoopbackPolicy/fix'],
      ['disagreeing Enforce cluster policies + an Enforce LoopbackPolicy: the oldest decides (ClusterFirst)', [cluster('young', NEW, { mode: 'Enforce' }), cluster('old', OLD, { mode: 'Enforce', precedence: 'ClusterFirst' })], [local('own', NEW, 'Enforce')], 'ClusterLoopbackPolicy/old'],
      ['an Enforce cluster policy being deleted + an Audit LoopbackPolicy: nothing enforces', [cluster('platform', OLD, { mode: 'Enforce' }, true)], [local('own', NEW, 'Audit')], undefined],
    ])('%s', (_name, clusterPolicies, policies, covered) => {
      for (const order of [clusterPolicies, [...clusterPolicies].reverse()]) {
        const data = buildAdmissionParams({ profile: profile(IPVS_NEW), policies, clusterPolicies: order, namespaces: SHOP, enforcing: true });
        expect(data['enforce.Service.shop']).toBe(covered);
        expect(data['enforce.Ingress.shop']).toBeUndefined();
      }
    });
  });

  it('is stable: the same inputs give data the writer finds unchanged', () => {
    const a = buildAdmissionParams({ profile: profile(IPVS_NEW), policies: [policy('a', 'p', {})], enforcing: true });
    const b = buildAdmissionParams({ profile: profile(IPVS_NEW), policies: [policy('a', 'p', {})], enforcing: true });
    expect(sameData(a, b)).toBe(true);
    expect(sameData(a, { ...b, extra: 'x' })).toBe(false);
    expect(sameData(undefined, b)).toBe(false);
    expect(sameData({ ...a, kubeProxyMode: 'iptables' }, b)).toBe(false);
  });
});

describe('messages', () => {
  it('builds CEL string concatenations from the templates', () => {
    expect(celTemplate('use {dns} or ask {upgradeTo}')).toBe('"use " + (variables.name + "." + request.namespace + ".svc.cluster.local") + " or ask " + (variables.upgradeTo)');
    expect(celTemplate('say "hi"')).toBe('"say \\"hi\\""');
  });

  it('says the risk in this cluster, the fix for this object and where to read more, on one line', () => {
    const text = warningText({ kind: 'Service', namespace: 'shop', name: 'api', rootCause: 'KubeProxyTooOld', kubeProxy: 'kube-proxy ipvs v1.18.4-tke.1', upgradeTo: 'v1.18.4-tke.20' });
    expect(text).toBe(
      'loopguard: Service shop/api is at risk of CLB loopback in this cluster (kube-proxy ipvs v1.18.4-tke.1): loopback possible; kube-proxy is too old to bind the VIP (prevent-loopback) [KubeProxyTooOld]. ' +
        'Fix: upgrade the kube-system/kube-proxy DaemonSet image to v1.18.4-tke.20 or later, then set service.cloud.tencent.com/prevent-loopback: "true" (a LoopbackPolicy in Enforce mode does it); until then in-cluster callers can use api.shop.svc.cluster.local instead of the CLB address. ' +
        'More: loopguard doctor -n shop; docs/diagnosis.md',
    );
    expect(text).not.toContain('\n');
  });
});
