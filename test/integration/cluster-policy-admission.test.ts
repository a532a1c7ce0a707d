// Admission of ClusterLoopbackPolicy (issue 24) through a real kube-apiserver, as a user meets it: the CRD applied
// with kubectl, policies sent with `kubectl apply -f -`. Valid cluster policies are accepted and defaulted; each invalid
// one is refused with the message crds/loopguard.dev_clusterloopbackpolicies.yaml gives it (one row per CEL rule and
// enum; the label-selector rules once for each of the three selectors). `kubectl get clbp` shows the printer columns,
// `kubectl wait --for=condition=Ready` works on a status written through the status subresource. The report shape of
// docs/reports.md is checked against the upstream OpenReports CRD (test/fixtures/openreports/).
// config/samples/cluster-policy.yaml (and every sample policy) is sent as written. The operator's ClusterRole
// (config/rbac) is checked as the loopguard ServiceAccount: what the controller does to the new kind, its namespaces
// and reports is allowed, and nothing more. No operator runs here: nothing waits on loopguard.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { API_VERSION, GROUP, VERSION } from '../../src/api/loopbackpolicy.js';
import { CLUSTER_KIND, CLUSTER_PLURAL } from '../../src/api/clusterloopbackpolicy.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { createNamespace, deleteNamespace, kubeConfig, kubectl, waitFor, type CommandResult } from '../support/kube.js';
import { operatorAccountKubeconfig } from '../support/operator.js';
import { refusalTable } from '../support/refusals.js';

const CRD_FILE = join(REPO_ROOT, 'crds', 'loopguard.dev_clusterloopbackpolicies.yaml');
const OPENREPORTS_CRD = join(REPO_ROOT, 'test', 'fixtures', 'openreports', 'openreports.io_reports.yaml');
const EXAMPLE_REPORT = join(REPO_ROOT, 'test', 'fixtures', 'openreports', 'loopguard-report.example.yaml');
const SAMPLE = join(REPO_ROOT, 'config', 'samples', 'cluster-policy.yaml');
/** Cluster-scoped objects are shared by every suite of the run: ours carry this prefix and are deleted after. */
const PREFIX = `clbp-adm-${process.pid}`;
const MiB = 1 << 20;
const longPrefix = Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.'); // valid DNS labels, 304 chars

const manifest = (name: string, spec: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: API_VERSION,
  kind: CLUSTER_KIND,
  metadata: { name },
  ...(spec === undefined ? {} : { spec }),
  ...extra,
});
/** A kubeconfig of the operator's ServiceAccount under config/rbac, once its rules reach the authorizer (moments). */
let operatorKubeconfig: Promise<string> | undefined;
const asOperator = (): Promise<string> =>
  (operatorKubeconfig ??= (async () => {
    const kubeconfig = await operatorAccountKubeconfig();
    const can = async () => (await kubectl(['auth', 'can-i', 'watch', 'clusterloopbackpolicies.loopguard.dev'], { kubeconfig })).stdout.trim();
    await waitFor('config/rbac reaches the authorizer', async () => ((await can()) === 'yes' ? true : undefined), { timeoutMs: 30_000 });
    return kubeconfig;
  })());
const apply = (name: string, spec: unknown, extra?: Record<string, unknown>): Promise<CommandResult> =>
  kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest(name, spec, extra)) });
type Stored = { metadata: { finalizers?: string[]; resourceVersion: string }; spec: Record<string, unknown>; status?: unknown };
async function stored(name: string): Promise<Stored> {
  const r = await kubectl(['get', 'clbp', name, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl get clbp ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Stored;
}

/** A selector case: the selector sent, and the fragments the refusal must contain (`@` stands for the field path). */
type SelectorCase = [string, unknown, string[], { create?: boolean }?];
const SELECTOR_CASES: SelectorCase[] = [
  ['matchLabels key with a space', { matchLabels: { 'bad key!': 'x' } }, ['@.matchLabels', 'matchLabels key "bad key!" is not a valid label key']],
  ['matchLabels value with a space', { matchLabels: { team: 'has space' } }, ['matchLabels value "has space" (key "team") is not a valid label value']],
  ['matchLabels key of 1 MiB', { matchLabels: { ['k'.repeat(MiB)]: 'v' } }, ['@.matchLabels', 'matchLabels keys must be at most 317 characters'], { create: true }],
  ['key missing', { matchExpressions: [{ operator: 'Exists' }] }, ['@.matchExpressions[0].key', 'Required value', 'the label key to test']],
  ['operator missing', { matchExpressions: [{ key: 'team' }] }, ['@.matchExpressions[0].operator', 'Required value', 'one of In or NotIn (with values), Exists or DoesNotExist']],
  ['key with two slashes', { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] }, ['key "a/b/c" is not a valid label key']],
  ['key prefix longer than 253', { matchExpressions: [{ key: `${longPrefix}/team`, operator: 'Exists' }] }, ['the prefix of a label key (before "/") must be at most 253 characters']],
  ['In without values', { matchExpressions: [{ key: 'team', operator: 'In' }] }, ['operator In needs at least one entry in values']],
  ['Exists with values', { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] }, ['operator Exists must not have values; remove values or use In/NotIn']],
  ['a value with a space', { matchExpressions: [{ key: 'team', operator: 'In', values: ['ok', 'not ok'] }] }, ['value "not ok" is not a valid label value']],
  ['operator in lower case (enum)', { matchExpressions: [{ key: 'team', operator: 'in', values: ['a'] }] }, ['@.matchExpressions[0].operator', 'Unsupported value: "in"', '"DoesNotExist"']],
];

/** Where a selector sits, and how to put one there. */
const SELECTORS: [string, (selector: unknown) => unknown][] = [
  ['spec.selector', (selector) => ({ selector })],
  ['spec.namespaceSelector', (namespaceSelector) => ({ namespaceSelector })],
  ['spec.modeOverrides[0].namespaceSelector', (namespaceSelector) => ({ modeOverrides: [{ mode: 'Enforce', namespaceSelector }] })],
];

const enforceWhereOptedIn = { mode: 'Enforce', namespaceSelector: { matchLabels: { 'loopguard.dev/enforce': 'true' } } };

// [case, spec, fragments the stderr must contain, how it is sent]
const invalid: [string, unknown, string[], { create?: boolean }?][] = [
  // --- the fields only the cluster kind has: enums
  ['systemNamespaces in lower case', { systemNamespaces: 'include' }, ['spec.systemNamespaces', 'Unsupported value: "include"', '"Exclude", "Include"']],
  ['precedence without its suffix', { precedence: 'Cluster' }, ['spec.precedence', 'Unsupported value: "Cluster"', '"NamespacedFirst", "ClusterFirst"']],
  ['skipAnnotation in British spelling', { skipAnnotation: 'Honour' }, ['spec.skipAnnotation', 'Unsupported value: "Honour"', '"Honor", "Ignore"']],
  ['modeOverrides mode in lower case', { modeOverrides: [{ ...enforceWhereOptedIn, mode: 'enforce' }] }, ['spec.modeOverrides[0].mode', 'Unsupported value: "enforce"', '"Enforce", "Audit"']],
  ['namespaceSelector as a string', { namespaceSelector: 'team=web' }, ['spec.namespaceSelector', 'must be of type object']],
  ['modeOverrides as a string', { modeOverrides: 'Enforce' }, ['spec.modeOverrides', 'must be of type array']],
  ['modeOverrides as a map', { modeOverrides: { Enforce: {} } }, ['unknown field "spec.modeOverrides.Enforce"']],
  // --- the fields only the cluster kind has: CEL
  [
    'systemNamespaces Include with every namespace',
    { systemNamespaces: 'Include' },
    ['spec.systemNamespaces', 'systemNamespaces: Include needs a namespaceSelector that names the namespaces', 'kube-system'],
  ],
  [
    'systemNamespaces Include with an empty namespaceSelector',
    { systemNamespaces: 'Include', namespaceSelector: { matchLabels: {} } },
    ['systemNamespaces: Include needs a namespaceSelector', 'or leave systemNamespaces out'],
  ],
  ['modeOverrides entry without mode', { modeOverrides: [{ namespaceSelector: enforceWhereOptedIn.namespaceSelector }] }, ['spec.modeOverrides[0].mode', 'Required value', 'mode: Enforce or Audit']],
  ['modeOverrides entry without namespaceSelector', { modeOverrides: [{ mode: 'Enforce' }] }, ['spec.modeOverrides[0].namespaceSelector', 'Required value', 'matchLabels: {loopguard.dev/enforce: "true"}']],
  [
    'modeOverrides entry with an empty namespaceSelector',
    { modeOverrides: [{ mode: 'Enforce', namespaceSelector: {} }] },
    ['spec.modeOverrides[0].namespaceSelector', 'an empty namespaceSelector in modeOverrides matches every namespace: set spec.mode instead'],
  ],
  [
    'two modeOverrides entries with the same namespaceSelector',
    { mode: 'Audit', modeOverrides: [enforceWhereOptedIn, { ...enforceWhereOptedIn, mode: 'Audit' }] },
    ['spec.modeOverrides', 'two modeOverrides entries have the same namespaceSelector', 'the later one never applies'],
  ],
  [
    'nine modeOverrides',
    { modeOverrides: Array.from({ length: 9 }, (_, i) => ({ mode: 'Enforce', namespaceSelector: { matchLabels: { stage: `s${i}` } } })) },
    ['spec.modeOverrides', 'must have at most 8 items'],
  ],
  // --- the LoopbackPolicy fields: the same rules and messages as the namespaced kind
  ['mode in lower case', { mode: 'audit' }, ['spec.mode', 'Unsupported value: "audit"', '"Enforce", "Audit"']],
  ['targets empty', { targets: [] }, ['spec.targets', 'list one or more of Service, Ingress, Gateway; leave targets out to select Services and Ingresses']],
  ['targets with an unknown kind', { targets: ['Pod'] }, ['spec.targets[0]', 'Unsupported value: "Pod"']],
  ['l4.healthCheckSource written as the CIDR', { l4: { healthCheckSource: '100.64.0.0/10' } }, ['spec.l4.healthCheckSource', 'Unsupported value: "100.64.0.0/10"']],
  ['l4.preventLoopback in lower case', { l4: { preventLoopback: 'always' } }, ['spec.l4.preventLoopback', 'Unsupported value: "always"']],
  ['l4.sourceSwitch as a person says it', { l4: { sourceSwitch: 'TKE first' } }, ['spec.l4.sourceSwitch', 'Unsupported value: "TKE first"']],
  ['l7.healthCheckSource in lower case', { l7: { healthCheckSource: 'vip' } }, ['spec.l7.healthCheckSource', 'Unsupported value: "vip"']],
  ['VIP source with preventLoopback Auto', { l4: { healthCheckSource: 'VIP' } }, ['l4.preventLoopback: Auto needs l4.healthCheckSource: Range100_64', 'set l4.preventLoopback: Never']],
  ['allowCLBTrafficByDefault without keepalive', { l7: { keepalive: false, allowCLBTrafficByDefault: true } }, ['l7.allowCLBTrafficByDefault: true only has an effect with l7.keepalive: true']],
  ['l7.inClusterDNS in lower case', { l7: { inClusterDNS: 'managed' } }, ['spec.l7.inClusterDNS', 'Unsupported value: "managed"', '"Unmanaged", "Managed"']],
  [
    'allowCLBTrafficByDefault without Ingress targets',
    { targets: ['Service'], l7: { allowCLBTrafficByDefault: true } },
    ['spec.l7.allowCLBTrafficByDefault', 'has no effect unless spec.targets includes Ingress'],
  ],
  ['preventLoopback Always without Service targets', { targets: ['Ingress'], l4: { preventLoopback: 'Always' } }, ['spec.l4.preventLoopback', 'has no effect unless spec.targets includes Service']],
  ['misspelt field', { namespaceSelectors: {} }, ['unknown field "spec.namespaceSelectors"']],
  // --- every label-selector rule, in each of the three selectors
  ...SELECTORS.flatMap(([path, place]) =>
    SELECTOR_CASES.map(([name, selector, fragments, sent]): [string, unknown, string[], { create?: boolean }?] => [
      `${path}: ${name}`,
      place(selector),
      fragments.map((f) => f.replace('@', path)),
      sent,
    ]),
  ),
];

beforeAll(async () => {
  // As a user installs it (the file config/crd and the chart's crds/ carry; the harness applied it already).
  const applied = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=loopguard-tests', '-f', CRD_FILE]);
  expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
  const established = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/clusterloopbackpolicies.loopguard.dev']);
  expect(established.code).toBe(0);
});

afterAll(async () => {
  const names = await kubectl(['get', 'clbp', '-o', 'name']);
  const ours = names.stdout.split('\n').filter((n) => n.includes(`/${PREFIX}-`));
  if (ours.length > 0) await kubectl(['delete', '--wait=false', ...ours]);
});

describe('ClusterLoopbackPolicy admission', () => {
  it('has one distinct row per case', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(55);
    expect(new Set(invalid.map(([name]) => name)).size).toBe(invalid.length);
    expect(new Set(invalid.map(([, spec]) => JSON.stringify(spec))).size).toBe(invalid.length);
  });

  // The rows sent with `kubectl apply` go to the apiserver as one file (test/support/refusals.ts); a 1 MiB key is sent
  // with `kubectl create`. Each row is judged on its own refusal.
  const expectRefused = refusalTable(() => invalid.map(([, spec, , sent], i) => ({ manifest: manifest(`${PREFIX}-invalid-${i}`, spec), create: sent?.create })));
  it.each(invalid.map(([name, , fragments], i) => [name, i, fragments] as const))('rejects: %s', (_name, i, fragments) => expectRefused(i, fragments));

  it('stored none of the invalid policies', async () => {
    const r = await kubectl(['get', 'clbp', '-o', 'name']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(`${PREFIX}-invalid-`);
  });

  it('accepts an empty spec and fills in every default, the cluster fields included (Audit: no cluster-wide change by omission)', async () => {
    const r = await apply(`${PREFIX}-defaults`, {});
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await stored(`${PREFIX}-defaults`)).spec).toEqual({
      mode: 'Audit',
      targets: ['Service', 'Ingress'],
      l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto', sourceSwitch: 'Direct' },
      l7: { keepalive: true, healthCheckSource: 'Range100_64', allowCLBTrafficByDefault: false, inClusterDNS: 'Unmanaged' },
      revertOnDelete: true,
      probe: { enabled: false, path: '/' },
      systemNamespaces: 'Exclude',
      precedence: 'NamespacedFirst',
      skipAnnotation: 'Honor',
    });
  });

  it('accepts a staged rollout with a pause before the opt-in: Audit everywhere, Enforce where namespaces opt in', async () => {
    const spec = {
      mode: 'Audit',
      namespaceSelector: { matchExpressions: [{ key: 'loopguard.dev/exclude', operator: 'DoesNotExist' }] },
      modeOverrides: [
        { mode: 'Audit', namespaceSelector: { matchLabels: { 'loopguard.dev/enforce': 'paused' } } },
        enforceWhereOptedIn,
      ],
    };
    const r = await apply(`${PREFIX}-staged`, spec);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await stored(`${PREFIX}-staged`)).spec).toMatchObject(spec);
  });

  it('accepts system namespaces named explicitly, the platform switch and ignoring loopguard.dev/skip', async () => {
    const spec = {
      systemNamespaces: 'Include',
      namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['kube-system', 'ingress'] }] },
      precedence: 'ClusterFirst',
      skipAnnotation: 'Ignore',
      targets: ['Service'],
      l4: { healthCheckSource: 'VIP', preventLoopback: 'Never' },
    };
    const r = await apply(`${PREFIX}-platform`, spec);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await stored(`${PREFIX}-platform`)).spec).toMatchObject(spec);
  });

  it('accepts l7.inClusterDNS: Managed, the field the namespaced kind refuses (docs/dns.md §4)', async () => {
    const spec = { mode: 'Enforce', targets: ['Ingress', 'Gateway'], l7: { inClusterDNS: 'Managed' } };
    const r = await apply(`${PREFIX}-dns`, spec);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await stored(`${PREFIX}-dns`)).spec).toMatchObject(spec);
  });

  it('validates updates too, and keeps the stored policy when refused', async () => {
    expect((await apply(`${PREFIX}-update`, { mode: 'Audit', modeOverrides: [enforceWhereOptedIn] })).code).toBe(0);
    const r = await apply(`${PREFIX}-update`, { mode: 'Audit', modeOverrides: [enforceWhereOptedIn, enforceWhereOptedIn] });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('two modeOverrides entries have the same namespaceSelector');
    expect((await stored(`${PREFIX}-update`)).spec['modeOverrides']).toEqual([enforceWhereOptedIn]);
  });

  it('is cluster-scoped: kubectl ignores a namespace for it, and the object has none', async () => {
    const r = await kubectl(['apply', '-n', 'default', '-f', '-'], { input: JSON.stringify(manifest(`${PREFIX}-scoped`, {})) });
    expect(r.code).toBe(0);
    const got = JSON.parse((await kubectl(['get', 'clbp', `${PREFIX}-scoped`, '-o', 'json'])).stdout) as { metadata: { namespace?: string } };
    expect(got.metadata.namespace).toBeUndefined();
  });

  it('ignores status sent with the main resource (status subresource)', async () => {
    const r = await apply(`${PREFIX}-with-status`, {}, { status: { namespaces: { selected: 3 } } });
    expect(r.code).toBe(0);
    expect((await stored(`${PREFIX}-with-status`)).status).toBeUndefined();
  });

  it('prints the agreed columns with kubectl get clbp, and kubectl wait reads its Ready condition', async () => {
    const name = `${PREFIX}-columns`;
    expect((await apply(name, { mode: 'Audit', modeOverrides: [enforceWhereOptedIn] })).code).toBe(0);
    // What the controller will write (docs/cluster-policy.md "Status"), through the status subresource.
    const status = {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1, lastTransitionTime: '2026-11-26T00:00:00Z', reason: 'Evaluated', message: 'all covered' }],
      namespaces: { selected: 7, enforce: 2, audit: 5, excluded: 3 },
      counts: { atRisk: 4, mitigated: 11, notApplicable: 20, unsupported: 0, pending: 1, skipped: 2, conflict: 1, total: 39 },
      byNamespace: [{ namespace: 'shop', mode: 'Enforce', counts: { atRisk: 4, mitigated: 2, notApplicable: 0, unsupported: 0, pending: 0, skipped: 0, conflict: 0, total: 6 }, report: 'loopguard' }],
      excludedNamespaces: ['kube-node-lease', 'kube-public', 'kube-system'],
      targets: [{ kind: 'Service', namespace: 'shop', name: 'checkout', verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded' }],
    };
    const patched = await kubectl(['patch', 'clbp', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
    expect({ code: patched.code, stderr: patched.stderr }).toEqual({ code: 0, stderr: '' });
    const waited = await kubectl(['wait', '--for=condition=Ready', '--timeout=30s', `clbp/${name}`]);
    expect({ code: waited.code, stderr: waited.stderr }).toEqual({ code: 0, stderr: '' });

    const r = await kubectl(['get', 'clbp', name]);
    expect(r.code).toBe(0);
    const [header = '', row = ''] = r.stdout.split('\n');
    expect(header.trim().split(/\s{2,}/)).toEqual(['NAME', 'MODE', 'NAMESPACES', 'TARGETS', 'MITIGATED', 'AT RISK', 'READY', 'AGE']);
    expect(row.trim().split(/\s+/).slice(0, 7)).toEqual([name, 'Audit', '7', '39', '11', '4', 'True']);
    const wide = await kubectl(['get', 'clusterloopbackpolicy', name, '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]?.trim().split(/\s{2,}/)).toEqual(
      ['NAME', 'MODE', 'NAMESPACES', 'TARGETS', 'MITIGATED', 'AT RISK', 'READY', 'REASON', 'ENFORCED', 'PRECEDENCE', 'KUBE-PROXY', 'AGE'],
    );
    expect(wide.stdout).toMatch(/\bEvaluated\s+2\s+NamespacedFirst\b/);
  });

  it('explains its fields with kubectl explain', async () => {
    const r = await kubectl(['explain', 'clbp.spec.modeOverrides']);
    expect(r.code).toBe(0);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('For each namespace the first entry whose namespaceSelector matches it gives the mode');
  });
});

describe("the per-namespace report's shape against the upstream OpenReports CRD", () => {
  let ns: string;

  beforeAll(async () => {
    ns = await createNamespace('clbp-report');
    const applied = await kubectl(['apply', '--server-side', '--field-manager=loopguard-tests', '-f', OPENREPORTS_CRD]);
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/reports.openreports.io'])).code).toBe(0);
  });

  afterAll(async () => {
    // Other suites share the apiserver and must meet a cluster without OpenReports unless they install it.
    await kubectl(['delete', 'crd', 'reports.openreports.io', '--wait=false']);
    if (ns) await deleteNamespace(ns);
  });

  it('accepts the documented example with strict validation (no field the schema lacks)', async () => {
    const r = await kubectl(['apply', '--validate=strict', '-n', ns, '-f', EXAMPLE_REPORT]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const got = await kubectl(['get', 'reps', '-n', ns, 'loopguard']);
    expect(got.stdout.split('\n')[0]?.trim().split(/\s{2,}/)).toEqual(['NAME', 'PASS', 'FAIL', 'WARN', 'ERROR', 'SKIP', 'AGE']);
    expect(got.stdout.split('\n')[1]?.trim().split(/\s+/).slice(0, 6)).toEqual(['loopguard', '2', '1', '1', '1', '2']);
  });

  it("the operator's ClusterRole creates, reads, lists, replaces whole and deletes a report, and cannot patch or watch them", async () => {
    const kubeconfig = await asOperator();
    const example = parse(readFileSync(EXAMPLE_REPORT, 'utf8')) as { metadata: { name: string; resourceVersion?: string }; summary: { pass: number } };
    example.metadata.name = 'loopguard-operator';
    const as = (args: string[], input?: string) => kubectl(args, { kubeconfig, ...(input === undefined ? {} : { input }) });
    let r = await as(['create', '--field-manager=loopguard', '--validate=strict', '-n', ns, '-f', '-'], JSON.stringify(example));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    r = await as(['get', 'reps', '-n', ns, 'loopguard-operator', '-o', 'jsonpath={.metadata.resourceVersion}']);
    expect(r.code).toBe(0);
    // As report-writer.ts writes: the whole object, with the resourceVersion read.
    example.summary.pass = 13;
    example.metadata.resourceVersion = r.stdout;
    r = await as(['replace', '--field-manager=loopguard', '--validate=strict', '-n', ns, '-f', '-'], JSON.stringify(example));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    r = await as(['get', 'reps', '-n', ns, 'loopguard-operator', '-o', 'jsonpath={.summary.pass}']);
    expect({ code: r.code, out: r.stdout }).toEqual({ code: 0, out: '13' });
    r = await as(['patch', 'reps', '-n', ns, 'loopguard-operator', '--type=merge', '-p', '{"summary":{"pass":1}}']);
    expect({ code: r.code, forbidden: /forbidden/i.test(r.stderr) }).toEqual({ code: 1, forbidden: true });
    // list: a new process adopts the reports it sealed (docs/reports.md §3), across namespaces; watch: no.
    r = await as(['get', 'reps', '-A', '--field-selector=metadata.name=loopguard-operator', '-o', 'name']);
    expect({ code: r.code, out: r.stdout.trim(), stderr: r.stderr }).toEqual({ code: 0, out: 'report.openreports.io/loopguard-operator', stderr: '' });
    r = await as(['auth', 'can-i', 'watch', 'reports.openreports.io', '-A']);
    expect(r.stdout.trim()).toBe('no');
    r = await as(['delete', 'reps', '-n', ns, 'loopguard-operator']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('refuses a result value outside its enum, so the mapping of verdicts to results is checked by the schema', async () => {
    const example = parse(readFileSync(EXAMPLE_REPORT, 'utf8')) as { metadata: { name: string }; results: { result: string }[] };
    example.metadata.name = 'loopguard-bad';
    example.results[0]!.result = 'AtRisk';
    const r = await kubectl(['apply', '--validate=strict', '-n', ns, '-f', '-'], { input: JSON.stringify(example) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Unsupported value: "AtRisk"');
  });
});

describe('config/samples on the apiserver', () => {
  it('config/samples/cluster-policy.yaml as written: Audit in every namespace but the system ones, Enforce where loopguard.dev/enforce=true', async () => {
    const r = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', SAMPLE, '-o', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const got = JSON.parse(r.stdout) as { kind: string; metadata: { namespace?: string }; spec: Record<string, unknown> };
    expect(got.kind).toBe(CLUSTER_KIND);
    expect(got.metadata.namespace).toBeUndefined();
    // As the apiserver stores it, defaults filled in: no namespaceSelector (every namespace), system ones left out.
    expect(got.spec).toEqual({
      mode: 'Audit',
      systemNamespaces: 'Exclude',
      modeOverrides: [enforceWhereOptedIn],
      targets: ['Service', 'Ingress'],
      l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto', sourceSwitch: 'Direct' },
      l7: { keepalive: true, healthCheckSource: 'Range100_64', allowCLBTrafficByDefault: false, inClusterDNS: 'Unmanaged' },
      revertOnDelete: true,
      probe: { enabled: false, path: '/' },
      precedence: 'NamespacedFirst',
      skipAnnotation: 'Honor',
    });
  });

  it('every policy of kubectl kustomize config/samples is accepted with strict validation', async () => {
    const rendered = await kubectl(['kustomize', join(REPO_ROOT, 'config', 'samples')]);
    expect(rendered.code).toBe(0);
    // A server dry run changes nothing, so the shared `default` namespace serves the namespaced ones.
    const r = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-n', 'default', '-f', '-', '-o', 'name'], { input: rendered.stdout });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout.trim().split('\n').sort()).toEqual([
      'clusterloopbackpolicy.loopguard.dev/staged-rollout',
      'loopbackpolicy.loopguard.dev/audit-all',
      'loopbackpolicy.loopguard.dev/protect',
    ]);
  });
});

describe("the operator's ClusterRole (config/rbac) on the cluster kind, as the loopguard ServiceAccount", () => {
  let kubeconfig = '';
  beforeAll(async () => {
    kubeconfig = await asOperator();
  });
  const CLBP = 'clusterloopbackpolicies.loopguard.dev';
  // [verb, resource, more kubectl args, answer]: the rules of docs/cluster-policy.md §9 and nothing more.
  const cases: [string, string, string[], 'yes' | 'no'][] = [
    ...['get', 'list', 'watch', 'patch'].map((v): [string, string, string[], 'yes'] => [v, CLBP, [], 'yes']), // patch: metadata.finalizers
    ...['create', 'update', 'delete', 'deletecollection'].map((v): [string, string, string[], 'no'] => [v, CLBP, [], 'no']),
    ...['update', 'patch'].map((v): [string, string, string[], 'yes'] => [v, CLBP, ['--subresource=status'], 'yes']),
    ...['update', 'patch'].map((v): [string, string, string[], 'yes'] => [v, CLBP, ['--subresource=finalizers'], 'yes']),
    ...['get', 'list', 'watch'].map((v): [string, string, string[], 'yes'] => [v, 'namespaces', [], 'yes']),
    ...['create', 'update', 'patch', 'delete'].map((v): [string, string, string[], 'no'] => [v, 'namespaces', [], 'no']),
    // reports.openreports.io: kubectl can-i needs the CRD served to name the group, so they are written for real
    // in the report suite above, where it is installed.
  ];

  it.each(cases)('can-i %s %s %j: %s', async (verb, resource, more, answer) => {
    const r = await kubectl(['auth', 'can-i', verb, resource, ...more], { kubeconfig });
    expect(r.stdout.trim()).toBe(answer);
  });

  it('does what the controller does to a cluster policy: adds and removes a finalizer, applies the status; creates none', async () => {
    const name = `${PREFIX}-operator`;
    expect((await apply(name, { mode: 'Audit' })).code).toBe(0);
    // The writes as src/kube/writer.ts and status-writer.ts make them for LoopbackPolicy, through the same client.
    const api = kubeConfig(kubeconfig).makeApiClient(CustomObjectsApi);
    const target = { group: GROUP, version: VERSION, plural: CLUSTER_PLURAL, name, fieldManager: 'loopguard' };
    const setFinalizers = async (finalizers: string[]) =>
      api.patchClusterCustomObject({ ...target, body: { metadata: { finalizers, resourceVersion: (await stored(name)).metadata.resourceVersion } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await setFinalizers(['loopguard.dev/revert']);
    expect((await stored(name)).metadata.finalizers).toEqual(['loopguard.dev/revert']);
    const status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1, lastTransitionTime: '2026-11-26T00:00:00Z', reason: 'AuditComplete', message: 'nothing at risk' }] };
    await api.patchClusterCustomObjectStatus({ ...target, force: true, body: { apiVersion: API_VERSION, kind: CLUSTER_KIND, metadata: { name }, status } }, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply));
    let r = await kubectl(['wait', '--for=condition=Ready', '--timeout=30s', `clbp/${name}`], { kubeconfig });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    await setFinalizers([]);
    expect((await stored(name)).metadata.finalizers).toBeUndefined();
    // Cluster policies are the cluster admins': the operator cannot create one, nor label a namespace.
    r = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest(`${PREFIX}-by-operator`, {})), kubeconfig });
    expect({ code: r.code, forbidden: /forbidden/i.test(r.stderr) }).toEqual({ code: 1, forbidden: true });
    r = await kubectl(['label', 'namespace', 'default', 'loopguard.dev/enforce=true'], { kubeconfig });
    expect({ code: r.code, forbidden: /forbidden/i.test(r.stderr) }).toEqual({ code: 1, forbidden: true });
  });
});
