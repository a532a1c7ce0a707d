// The per-namespace OpenReports Report (docs/reports.md): mapping of each verdict, the rules Policy Reporter reads
// (resources' namespace, scored, scope, passes listed), ordering, the result cap, bounds on text and its sanitizing,
// timestamps carried over from loopguard's previous report, and "unchanged → no write" through sameReport, which
// compares the whole object.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Verdict } from '../../../src/api/loopbackpolicy.js';
import {
  MAX_REPORT_RESULTS,
  MAX_RESULT_MESSAGE,
  MAX_RESULT_PLAN,
  namespaceReport,
  sameReport,
  type Report,
  type ReportTarget,
} from '../../../src/model/namespace-report.js';
import { REPO_ROOT } from '../../controlplane/crds.js';

const t0 = new Date('2026-11-26T04:00:00.250Z');
const t1 = new Date('2026-11-26T04:05:00Z');
const ts = (d: Date) => ({ seconds: Math.floor(d.getTime() / 1000), nanos: 0 });

function target(name: string, verdict: Verdict, rootCause: string, extra: Partial<ReportTarget> = {}): ReportTarget {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    name,
    uid: `uid-${name}`,
    verdict,
    rootCause,
    message: `${rootCause} message`,
    mode: 'Audit',
    policy: 'ClusterLoopbackPolicy/platform',
    plan: [],
    ...extra,
  };
}

/** Round-trips through JSON, as the stored report comes back from the apiserver. */
const stored = (r: Report): Report => JSON.parse(JSON.stringify({ ...r, metadata: { ...r.metadata, resourceVersion: '42', uid: 'x' } })) as Report;

describe('namespaceReport: the mapping of each verdict (docs/reports.md table)', () => {
  it.each<[Verdict, string, { result: string; severity?: string; scored: boolean } | undefined, keyof NonNullable<Report['summary']>]>([
    ['AtRisk', 'PodSourceNotMasqueraded', { result: 'fail', severity: 'high', scored: true }, 'fail'],
    // "warn: the policy requirements are not met and the policy is not scored" (the API's Result doc).
    ['Unsupported', 'Ipv6Clb', { result: 'warn', severity: 'medium', scored: false }, 'warn'],
    ['Conflict', 'ForeignClb', { result: 'warn', severity: 'medium', scored: false }, 'warn'],
    ['Conflict', 'SharedConfig', { result: 'warn', severity: 'medium', scored: false }, 'warn'],
    ['Pending', 'ClbNotObserved', { result: 'error', severity: 'low', scored: true }, 'error'],
    ['Mitigated', 'LoopbackPrevented', { result: 'pass', scored: true }, 'pass'],
    ['NotApplicable', 'PublicClb', { result: 'pass', scored: true }, 'pass'],
    ['Skipped', 'SkipAnnotation', undefined, 'skip'],
  ])('%s (%s) → %j, counted as %s', (verdict, rootCause, listed, counted) => {
    const r = namespaceReport('shop', [target('web', verdict, rootCause)], undefined, t0);
    expect(r.summary).toEqual({ pass: 0, fail: 0, warn: 0, error: 0, skip: 0, [counted]: 1 });
    if (!listed) {
      expect(r.results).toEqual([]);
      return;
    }
    expect(r.results).toEqual([
      {
        policy: 'ClusterLoopbackPolicy/platform',
        rule: rootCause,
        category: 'CLB loopback',
        ...(listed.severity ? { severity: listed.severity } : {}),
        result: listed.result,
        scored: listed.scored,
        timestamp: ts(t0),
        // Its namespace: Policy Reporter files a resource without one under cluster-scoped resources.
        resources: [{ apiVersion: 'v1', kind: 'Service', name: 'web', namespace: 'shop', uid: 'uid-web' }],
        message: `${rootCause} message`,
        properties: { verdict, rootCause, mode: 'Audit' },
      },
    ]);
  });

  it('has the report-level fields: name, labels, source, scope (the namespace), the limits contract', () => {
    const r = namespaceReport('shop', [], undefined, t0);
    expect(r).toEqual({
      apiVersion: 'openreports.io/v1alpha1',
      kind: 'Report',
      metadata: { name: 'loopguard', namespace: 'shop', labels: { 'app.kubernetes.io/managed-by': 'loopguard', 'app.kubernetes.io/part-of': 'loopguard' } },
      source: 'loopguard',
      scope: { apiVersion: 'v1', kind: 'Namespace', name: 'shop' },
      configuration: { limits: { maxResults: 100, statusFilter: ['fail', 'warn', 'error', 'pass'] } },
      summary: { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 },
      results: [],
    });
  });

  it('numbers and joins the plan, keeps an Ingress apiVersion, the mode, the CLB id, and leaves out a missing uid', () => {
    const ing = target('store', 'AtRisk', 'L7Loopback', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      mode: 'Enforce',
      policy: 'LoopbackPolicy/web',
      plan: ['set the source', 'annotate'],
      loadBalancerId: 'lb-8m2ecfxk',
    });
    delete ing.uid;
    const [res] = namespaceReport('shop', [ing], undefined, t0).results ?? [];
    expect(res?.policy).toBe('LoopbackPolicy/web');
    expect(res?.resources).toEqual([{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'store', namespace: 'shop' }]);
    expect(res?.properties).toEqual({
      verdict: 'AtRisk',
      rootCause: 'L7Loopback',
      mode: 'Enforce',
      plan: '1. set the source; 2. annotate',
      loadBalancerId: 'lb-8m2ecfxk',
    });
  });

  it('bounds message (1,024) and plan (2,048) and makes control characters visible', () => {
    const long = target('web', 'AtRisk', 'PodSourceNotMasqueraded', { message: `a\u001b[31m${'x'.repeat(5000)}`, plan: Array.from({ length: 40 }, () => 'y'.repeat(200)) });
    const [res] = namespaceReport('shop', [long], undefined, t0).results ?? [];
    expect([...(res?.message ?? '')]).toHaveLength(MAX_RESULT_MESSAGE);
    expect(res?.message?.startsWith('a\ufffd[31m')).toBe(true);
    expect(res?.message?.endsWith('...')).toBe(true);
    expect(res?.properties?.['plan']).toHaveLength(MAX_RESULT_PLAN);
    expect(res?.properties?.['plan']?.startsWith('1. yyy')).toBe(true);
  });

  // The characters status and Events already replace (src/api/text.ts): a quoted annotation value must not reorder or
  // hide what the report says around it.
  it.each([
    ['a right-to-left override', '\u202e'],
    ['a left-to-right isolate', '\u2066'],
    ['a zero-width space', '\u200b'],
    ['a zero-width joiner', '\u200d'],
    ['a byte order mark', '\ufeff'],
    ['a line separator', '\u2028'],
    ['an escape', '\u001b'],
  ])('replaces %s in message, plan and CLB id, as status and Events do', (_name, ch) => {
    const bad = target('web', 'AtRisk', 'PodSourceNotMasqueraded', { message: `value ${ch}gpj.exe`, plan: [`annotate ${ch}x`], loadBalancerId: `lb-${ch}1` });
    const [res] = namespaceReport('shop', [bad], undefined, t0).results ?? [];
    expect({ message: res?.message, plan: res?.properties?.['plan'], lb: res?.properties?.['loadBalancerId'] }).toEqual({
      message: 'value \ufffdgpj.exe',
      plan: '1. annotate \ufffdx',
      lb: 'lb-\ufffd1',
    });
  });
});

describe('namespaceReport: order and cap', () => {
  it('lists the most severe first (AtRisk, Unsupported, Conflict, Pending, then the passes), then kind and name', () => {
    const r = namespaceReport(
      'shop',
      [
        target('p', 'Pending', 'ClbNotObserved'),
        target('c', 'Conflict', 'ForeignClb'),
        target('b', 'AtRisk', 'PodSourceNotMasqueraded'),
        target('u', 'Unsupported', 'Ipv6Clb'),
        target('a', 'AtRisk', 'PodSourceNotMasqueraded', { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' }),
        target('m', 'Mitigated', 'LoopbackPrevented'),
        target('s', 'Skipped', 'SkipAnnotation'),
        target('n', 'NotApplicable', 'PublicClb'),
        target('a', 'AtRisk', 'PodSourceNotMasqueraded'),
      ],
      undefined,
      t0,
    );
    expect(r.results?.map((x) => `${x.properties?.['verdict']}:${x.resources?.[0]?.kind}/${x.resources?.[0]?.name}`)).toEqual([
      'AtRisk:Ingress/a',
      'AtRisk:Service/a',
      'AtRisk:Service/b',
      'Unsupported:Service/u',
      'Conflict:Service/c',
      'Pending:Service/p',
      'Mitigated:Service/m',
      'NotApplicable:Service/n',
    ]);
  });

  it('lists at most 100 results, the most severe kept (passes only in what problems leave), and counts every target in summary', () => {
    const targets = [
      ...Array.from({ length: 30 }, (_, i) => target(`pend-${i}`, 'Pending', 'ClbNotObserved')),
      ...Array.from({ length: 90 }, (_, i) => target(`risk-${String(i).padStart(2, '0')}`, 'AtRisk', 'PodSourceNotMasqueraded')),
      ...Array.from({ length: 20 }, (_, i) => target(`ok-${i}`, 'Mitigated', 'LoopbackPrevented')),
      ...Array.from({ length: 5 }, (_, i) => target(`skip-${i}`, 'Skipped', 'SkipAnnotation')),
    ];
    const r = namespaceReport('shop', targets, undefined, t0);
    expect(r.results).toHaveLength(MAX_REPORT_RESULTS);
    expect(r.results?.filter((x) => x.result === 'fail')).toHaveLength(90);
    expect(r.results?.filter((x) => x.result === 'error')).toHaveLength(10);
    expect(r.summary).toEqual({ pass: 20, fail: 90, warn: 0, error: 30, skip: 5 });
    expect(r.configuration?.limits.maxResults).toBe(MAX_REPORT_RESULTS);
  });

  it.each([
    ['all pass', 250, 0, { pass: 100, fail: 0 }],
    ['a few problems', 250, 3, { pass: 97, fail: 3 }],
    ['problems fill the report', 5, 120, { pass: 0, fail: 100 }],
    ['one target, passing', 1, 0, { pass: 1, fail: 0 }],
  ])('a namespace where %s still lists results, at most 100 (%i passing, %i at risk)', (_case, passing, failing, listed) => {
    const targets = [
      ...Array.from({ length: passing }, (_, i) => target(`ok-${String(i).padStart(3, '0')}`, 'Mitigated', 'LoopbackPrevented')),
      ...Array.from({ length: failing }, (_, i) => target(`risk-${String(i).padStart(3, '0')}`, 'AtRisk', 'PodSourceNotMasqueraded')),
    ];
    const r = namespaceReport('shop', targets, undefined, t0);
    expect({ pass: r.results?.filter((x) => x.result === 'pass').length, fail: r.results?.filter((x) => x.result === 'fail').length }).toEqual(listed);
    expect(r.summary).toEqual({ pass: passing, fail: failing, warn: 0, error: 0, skip: 0 });
  });
});

describe('namespaceReport: timestamps and sameReport', () => {
  const before = [target('a', 'AtRisk', 'PodSourceNotMasqueraded'), target('p', 'Pending', 'ClbNotObserved'), target('m', 'Mitigated', 'LoopbackPrevented')];

  it('an unchanged namespace keeps every timestamp, and sameReport says nothing needs writing', () => {
    const first = stored(namespaceReport('shop', before, undefined, t0));
    const again = namespaceReport('shop', before, first, t1);
    expect(again.results?.map((r) => r.timestamp)).toEqual([ts(t0), ts(t0), ts(t0)]);
    expect(sameReport(first, again)).toBe(true);
  });

  it.each<[string, ReportTarget[], Record<string, Date>]>([
    ['a verdict changes', [target('a', 'Unsupported', 'Ipv6Clb'), before[1]!, before[2]!], { a: t1, p: t0, m: t0 }],
    ['a root cause changes (same verdict)', [target('a', 'AtRisk', 'L7Loopback'), before[1]!, before[2]!], { a: t1, p: t0, m: t0 }],
    ['a target is deleted and created again (new uid)', [target('a', 'AtRisk', 'PodSourceNotMasqueraded', { uid: 'uid-new' }), before[1]!, before[2]!], { a: t1, p: t0, m: t0 }],
    ['a new target at risk appears', [...before, target('b', 'AtRisk', 'PodSourceNotMasqueraded')], { a: t0, b: t1, p: t0, m: t0 }],
    ['only the message changes (its timestamp stays)', [target('a', 'AtRisk', 'PodSourceNotMasqueraded', { message: 'new words' }), before[1]!, before[2]!], { a: t0, p: t0, m: t0 }],
    ['only the mode changes', [target('a', 'AtRisk', 'PodSourceNotMasqueraded', { mode: 'Enforce' }), before[1]!, before[2]!], { a: t0, p: t0, m: t0 }],
    ['a passing target is added', [...before, target('m2', 'Mitigated', 'LoopbackPrevented')], { a: t0, p: t0, m: t0, m2: t1 }],
    ['a target is mitigated', [target('a', 'Mitigated', 'LoopbackPrevented'), before[1]!, before[2]!], { a: t1, p: t0, m: t0 }],
  ])('when %s, the report differs and timestamps are new only where verdict or root cause are', (_case, targets, expected) => {
    const first = stored(namespaceReport('shop', before, undefined, t0));
    const next = namespaceReport('shop', targets, first, t1);
    expect(sameReport(first, next)).toBe(false);
    expect(Object.fromEntries((next.results ?? []).map((r) => [r.resources?.[0]?.name, r.timestamp]))).toEqual(Object.fromEntries(Object.entries(expected).map(([k, d]) => [k, ts(d)])));
  });

  it('a target that comes back with its old verdict after a change gets a new timestamp', () => {
    const first = stored(namespaceReport('shop', before, undefined, t0));
    const changed = stored(namespaceReport('shop', [target('a', 'Pending', 'ClbNotObserved'), before[1]!], first, t1));
    const back = namespaceReport('shop', before, changed, new Date('2026-11-26T05:00:00Z'));
    expect(back.results?.find((r) => r.resources?.[0]?.name === 'a')?.timestamp).toEqual({ seconds: Date.parse('2026-11-26T05:00:00Z') / 1000, nanos: 0 });
  });

  it('sameReport: the same object in another key order, with the apiserver\'s own metadata, is the same', () => {
    const desired = namespaceReport('shop', before, undefined, t0);
    expect(sameReport(undefined, desired)).toBe(false);
    const reordered = stored(desired);
    const shuffled = {
      results: reordered.results?.map((r) => Object.fromEntries(Object.entries(r).reverse())),
      summary: Object.fromEntries(Object.entries(reordered.summary ?? {}).reverse()),
      scope: reordered.scope,
      configuration: reordered.configuration,
      source: reordered.source,
      metadata: { ...reordered.metadata, generation: 1, creationTimestamp: '2026-11-26T04:00:00Z', managedFields: [{ manager: 'loopguard' }] },
      kind: reordered.kind,
      apiVersion: reordered.apiVersion,
    } as Report;
    expect(sameReport(shuffled, desired)).toBe(true);
  });

  // Whatever another writer added or changed is not loopguard's: the stored report differs, and the write replaces it.
  it.each<[string, (r: Report & Record<string, unknown>) => void]>([
    ['a scope naming another namespace', (r) => (r.scope = { apiVersion: 'v1', kind: 'Namespace', name: 'payments' })],
    ['no scope', (r) => delete r.scope],
    ['an extra label', (r) => (r.metadata.labels = { ...r.metadata.labels, team: 'evil' })],
    ['a label missing', (r) => delete r.metadata.labels?.['app.kubernetes.io/managed-by']],
    ['an annotation', (r) => (r.metadata['annotations'] = { note: 'x' })],
    ['a finalizer', (r) => (r.metadata['finalizers'] = ['example.com/keep'])],
    ['an owner reference', (r) => (r.metadata['ownerReferences'] = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u' }])],
    ['an extra result', (r) => r.results?.push({ policy: 'ClusterLoopbackPolicy/forged', result: 'pass', resources: [{ kind: 'Service', name: 'ghost', namespace: 'shop' }] })],
    ['a field of a result', (r) => (r.results![0]!.source = 'kyverno')],
    ['a changed timestamp', (r) => (r.results![0]!.timestamp = { seconds: 1, nanos: 0 })],
    ['a scopeSelector', (r) => (r['scopeSelector'] = { matchLabels: { a: 'b' } })],
    ['an empty results list left out', (r) => delete r.results],
  ])('sameReport: %s makes the stored report differ', (_case, edit) => {
    const desired = namespaceReport('shop', before, undefined, t0);
    const other = stored(desired) as Report & Record<string, unknown>;
    edit(other);
    expect(sameReport(other, desired)).toBe(false);
  });
});

describe('the documented example', () => {
  it('is what namespaceReport writes for its targets (test/fixtures/openreports/loopguard-report.example.yaml)', () => {
    const [doc] = parseAllDocuments(readFileSync(join(REPO_ROOT, 'test/fixtures/openreports/loopguard-report.example.yaml'), 'utf8'));
    const example = doc?.toJS() as Report;
    const at = (s: number) => new Date(s * 1000);
    const targets: ReportTarget[] = Array.from({ length: 2 }, (_, i) => target(`skip-${i}`, 'Skipped', 'SkipAnnotation'));
    for (const r of example.results ?? []) {
      const ref = r.resources?.[0];
      const p = r.properties ?? {};
      targets.push({
        apiVersion: ref?.apiVersion ?? '',
        kind: ref?.kind as 'Service' | 'Ingress',
        name: ref?.name ?? '',
        ...(ref?.uid ? { uid: ref.uid } : {}),
        verdict: p['verdict'] as Verdict,
        rootCause: p['rootCause'] ?? '',
        message: r.message ?? '',
        mode: p['mode'] as 'Audit' | 'Enforce',
        policy: r.policy,
        plan: p['plan'] ? p['plan'].split('; ').map((s) => s.replace(/^\d+\. /, '')) : [],
        ...(p['loadBalancerId'] ? { loadBalancerId: p['loadBalancerId'] } : {}),
      });
    }
    // Written for namespace shop (the test that applies it picks its own namespace). Its timestamps are those of a
    // report loopguard wrote before: carried over, the rebuilt report is the example, whole.
    const built = namespaceReport('shop', targets, example, at(1795660000));
    expect(sameReport({ ...example, metadata: { ...example.metadata, namespace: 'shop' } }, built)).toBe(true);
  });
});
