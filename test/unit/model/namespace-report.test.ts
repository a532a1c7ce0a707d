// The per-namespace OpenReports Report (docs/cluster-policy.md §8): mapping of each verdict, ordering, the result cap,
// bounds on text, timestamps carried over from the stored report, and "unchanged → no write" through sameReport.
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

describe('namespaceReport: the mapping of each verdict (§8 table)', () => {
  it.each<[Verdict, string, { result: string; severity?: string } | undefined, keyof NonNullable<Report['summary']>]>([
    ['AtRisk', 'PodSourceNotMasqueraded', { result: 'fail', severity: 'high' }, 'fail'],
    ['Unsupported', 'Ipv6Clb', { result: 'warn', severity: 'medium' }, 'warn'],
    ['Conflict', 'ForeignClb', { result: 'warn', severity: 'medium' }, 'warn'],
    ['Conflict', 'SharedConfig', { result: 'warn', severity: 'medium' }, 'warn'],
    ['Pending', 'ClbNotObserved', { result: 'error', severity: 'low' }, 'error'],
    ['Mitigated', 'LoopbackPrevented', undefined, 'pass'],
    ['NotApplicable', 'PublicClb', undefined, 'pass'],
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
        severity: listed.severity,
        result: listed.result,
        scored: true,
        timestamp: ts(t0),
        resources: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-web' }],
        message: `${rootCause} message`,
        properties: { verdict, rootCause, mode: 'Audit' },
      },
    ]);
  });

  it('has the report-level fields: name, labels, source, the limits contract', () => {
    const r = namespaceReport('shop', [], undefined, t0);
    expect(r).toEqual({
      apiVersion: 'openreports.io/v1alpha1',
      kind: 'Report',
      metadata: { name: 'loopguard', namespace: 'shop', labels: { 'app.kubernetes.io/managed-by': 'loopguard', 'app.kubernetes.io/part-of': 'loopguard' } },
      source: 'loopguard',
      configuration: { limits: { maxResults: 100, statusFilter: ['fail', 'warn', 'error'] } },
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
    expect(res?.resources).toEqual([{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'store' }]);
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

  it("drops a losing policy's PolicyConflict entry when the holder reports the target, keeps it otherwise", () => {
    const holder = target('web', 'Mitigated', 'LoopbackPrevented', { policy: 'ClusterLoopbackPolicy/platform' });
    const loser = target('web', 'Conflict', 'PolicyConflict', { policy: 'LoopbackPolicy/team' });
    const both = namespaceReport('shop', [loser, holder], undefined, t0);
    expect(both.summary).toEqual({ pass: 1, fail: 0, warn: 0, error: 0, skip: 0 });
    expect(both.results).toEqual([]);
    const alone = namespaceReport('shop', [loser], undefined, t0);
    expect(alone.summary?.warn).toBe(1);
    expect(alone.results?.map((r) => r.rule)).toEqual(['PolicyConflict']);
  });
});

describe('namespaceReport: order and cap', () => {
  it('lists the most severe first (AtRisk, Unsupported, Conflict, Pending), then kind and name', () => {
    const r = namespaceReport(
      'shop',
      [
        target('p', 'Pending', 'ClbNotObserved'),
        target('c', 'Conflict', 'ForeignClb'),
        target('b', 'AtRisk', 'PodSourceNotMasqueraded'),
        target('u', 'Unsupported', 'Ipv6Clb'),
        target('a', 'AtRisk', 'PodSourceNotMasqueraded', { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' }),
        target('m', 'Mitigated', 'LoopbackPrevented'),
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
    ]);
  });

  it('lists at most 100 results, the most severe kept, and counts every target in summary', () => {
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
});

describe('namespaceReport: timestamps and sameReport', () => {
  const before = [target('a', 'AtRisk', 'PodSourceNotMasqueraded'), target('p', 'Pending', 'ClbNotObserved'), target('m', 'Mitigated', 'LoopbackPrevented')];

  it('an unchanged namespace keeps every timestamp, and sameReport says nothing needs writing', () => {
    const first = stored(namespaceReport('shop', before, undefined, t0));
    const again = namespaceReport('shop', before, first, t1);
    expect(again.results?.map((r) => r.timestamp)).toEqual([ts(t0), ts(t0)]);
    expect(sameReport(first, again)).toBe(true);
  });

  it.each<[string, ReportTarget[], Record<string, Date>]>([
    ['a verdict changes', [target('a', 'Unsupported', 'Ipv6Clb'), before[1]!, before[2]!], { a: t1, p: t0 }],
    ['a root cause changes (same verdict)', [target('a', 'AtRisk', 'L7Loopback'), before[1]!, before[2]!], { a: t1, p: t0 }],
    ['a target is deleted and created again (new uid)', [target('a', 'AtRisk', 'PodSourceNotMasqueraded', { uid: 'uid-new' }), before[1]!, before[2]!], { a: t1, p: t0 }],
    ['a new target at risk appears', [...before, target('b', 'AtRisk', 'PodSourceNotMasqueraded')], { a: t0, b: t1, p: t0 }],
    ['only the message changes (its timestamp stays)', [target('a', 'AtRisk', 'PodSourceNotMasqueraded', { message: 'new words' }), before[1]!, before[2]!], { a: t0, p: t0 }],
    ['only the mode changes', [target('a', 'AtRisk', 'PodSourceNotMasqueraded', { mode: 'Enforce' }), before[1]!, before[2]!], { a: t0, p: t0 }],
    ['a passing target is added (only summary changes)', [...before, target('m2', 'Mitigated', 'LoopbackPrevented')], { a: t0, p: t0 }],
    ['a target is mitigated', [target('a', 'Mitigated', 'LoopbackPrevented'), before[1]!, before[2]!], { p: t0 }],
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

  it('sameReport: no stored report, missing labels, or fields in another order', () => {
    const desired = namespaceReport('shop', before, undefined, t0);
    expect(sameReport(undefined, desired)).toBe(false);
    const unlabelled = stored(desired);
    delete unlabelled.metadata.labels;
    expect(sameReport(unlabelled, desired)).toBe(false);
    // The apiserver returns its own key order and metadata; another manager's extra field is not loopguard's to compare.
    const reordered = stored(desired);
    const shuffled = {
      results: reordered.results?.map((r) => Object.fromEntries(Object.entries(r).reverse())),
      summary: Object.fromEntries(Object.entries(reordered.summary ?? {}).reverse()),
      scope: { apiVersion: 'v1', kind: 'Namespace', name: 'shop' },
      configuration: reordered.configuration,
      source: reordered.source,
      metadata: { ...reordered.metadata, labels: { ...reordered.metadata.labels, extra: 'yes' }, managedFields: [] },
      kind: reordered.kind,
      apiVersion: reordered.apiVersion,
    } as Report;
    expect(sameReport(shuffled, desired)).toBe(true);
    // An empty results list the apiserver left out is the same as none.
    const empty = namespaceReport('shop', [before[2]!], undefined, t0);
    const withoutResults = stored(empty);
    delete withoutResults.results;
    expect(sameReport(withoutResults, empty)).toBe(true);
  });
});

describe('the documented example', () => {
  it('is what namespaceReport writes for its targets (test/fixtures/openreports/loopguard-report.example.yaml)', () => {
    const [doc] = parseAllDocuments(readFileSync(join(REPO_ROOT, 'test/fixtures/openreports/loopguard-report.example.yaml'), 'utf8'));
    const example = doc?.toJS() as Report;
    const at = (s: number) => new Date(s * 1000);
    const targets: ReportTarget[] = [
      ...Array.from({ length: 12 }, (_, i) => target(`ok-${i}`, 'Mitigated', 'LoopbackPrevented')),
      ...Array.from({ length: 2 }, (_, i) => target(`skip-${i}`, 'Skipped', 'SkipAnnotation')),
    ];
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
    // The example's timestamps are the stored report's: carried over, the rebuilt report equals it.
    const built = namespaceReport(example.metadata.namespace ?? 'shop', targets, example, at(1795660000));
    expect(sameReport(example, built)).toBe(true);
    expect(built.metadata.labels).toEqual(example.metadata.labels);
  });
});
