// The seal that tells loopguard's Reports from look-alikes after a restart (src/kube/report-seal.ts, docs/reports.md
// §3): valid on what loopguard sealed, refused on a forged or edited one, on a copy moved to another namespace, and
// with another key.
import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { REPORT_SEAL_ANNOTATION, sealedByLoopguard, sealReport } from '../../../src/kube/report-seal.js';
import { namespaceReport, sameReport, type Report, type ReportTarget } from '../../../src/model/namespace-report.js';

const KEY = Buffer.alloc(32, 7);
const T0 = new Date('2026-11-26T04:00:00Z');
const TARGETS: ReportTarget[] = [
  { apiVersion: 'v1', kind: 'Service', name: 'checkout', uid: 'uid-checkout', verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded', message: 'at risk', mode: 'Audit', policy: 'ClusterLoopbackPolicy/platform', plan: ['fix it'] },
  { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-web', verdict: 'Mitigated', rootCause: 'LoopbackPrevented', message: 'fine', mode: 'Enforce', policy: 'LoopbackPolicy/web', plan: [] },
];
const sealed = (ns = 'team-a', key = KEY) => sealReport(key, namespaceReport(ns, TARGETS, undefined, T0));
const seal = (r: Report) => (r.metadata['annotations'] as Record<string, string>)[REPORT_SEAL_ANNOTATION] as string;
/** As the apiserver returns it: its own metadata added. */
const asStored = (r: Report): Report => ({ ...r, metadata: { ...r.metadata, uid: 'u-1', resourceVersion: '42', creationTimestamp: '2026-11-26T04:00:00Z', managedFields: [] } });

describe('report seal', () => {
  it('verifies what loopguard sealed, as the apiserver stores it; deterministic, so an unchanged report compares equal', () => {
    expect(sealedByLoopguard(KEY, asStored(sealed()))).toBe(true);
    expect(sameReport(asStored(sealed()), sealed())).toBe(true);
    expect(seal(sealed())).toMatch(/^[A-Za-z0-9+/]{43}=$/); // 32 bytes
  });

  it('sealing a sealed report gives it back unchanged (the old seal is not sealed over)', () => {
    const once = sealed();
    expect(sealReport(KEY, once)).toEqual(once);
  });

  const forged: [string, (r: Report) => Report][] = [
    ['no seal (a look-alike with copied name and labels)', (r) => ({ ...r, metadata: { ...r.metadata, annotations: {} } })],
    ['a made-up seal', (r) => ({ ...r, metadata: { ...r.metadata, annotations: { [REPORT_SEAL_ANNOTATION]: Buffer.alloc(32, 1).toString('base64') } } })],
    ['a seal cut short', (r) => ({ ...r, metadata: { ...r.metadata, annotations: { [REPORT_SEAL_ANNOTATION]: seal(r).slice(0, 20) } } })],
    ['a seal that is not a string', (r) => ({ ...r, metadata: { ...r.metadata, annotations: { [REPORT_SEAL_ANNOTATION]: 42 as unknown as string } } })],
    // The seal of team-a's report, copied onto the report loopguard would write in team-b.
    ['a valid seal copied to another namespace', (r) => ({ ...namespaceReport('team-b', TARGETS, undefined, T0), metadata: { ...namespaceReport('team-b', TARGETS, undefined, T0).metadata, annotations: { [REPORT_SEAL_ANNOTATION]: seal(r) } } })],
    ['the whole sealed object moved to another namespace', (r) => ({ ...r, metadata: { ...r.metadata, namespace: 'team-b' } })],
    ['a timestamp set back', (r) => ({ ...r, results: r.results?.map((x) => ({ ...x, timestamp: { seconds: 946684800, nanos: 0 } })) })],
    ['a result added', (r) => ({ ...r, results: [...(r.results ?? []), { policy: 'ClusterLoopbackPolicy/forged', result: 'pass' }] })],
    ['a label added', (r) => ({ ...r, metadata: { ...r.metadata, labels: { ...r.metadata.labels, team: 'x' } } })],
    ['another annotation added', (r) => ({ ...r, metadata: { ...r.metadata, annotations: { ...(r.metadata['annotations'] as object), 'example.com/n': 'x' } } })],
    ['sealed with another key', () => sealed('team-a', randomBytes(32))],
  ];
  it.each(forged)('refuses %s', (_name, edit) => {
    expect(sealedByLoopguard(KEY, asStored(edit(sealed())))).toBe(false);
  });

  it('refuses with a key shorter than the checkpoint key', () => {
    expect(sealedByLoopguard(Buffer.alloc(8, 7), sealReport(Buffer.alloc(8, 7), namespaceReport('team-a', TARGETS, undefined, T0)))).toBe(false);
  });
});
