// Per-target gauges must follow the latest report exactly: prom-client removes only full label sets, so a
// verdict that changed must not leave its old series behind (an AtRisk alert would never clear).
import { describe, expect, it } from '@jest/globals';
import { Metrics } from '../../src/runtime/metrics.js';
import { TARGET_GAUGES } from '../../src/runtime/target-series.js';

async function series(m: Metrics, name: string): Promise<string[]> {
  const text = await m.render();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .sort();
}

describe('per-target metrics', () => {
  it('replaces a policy’s series on every report and keeps other policies’ series', async () => {
    const m = new Metrics({ processMetrics: false });
    m.reportTargets('ns', 'p', [
      { kind: 'Service', name: 'a', verdict: 'AtRisk', error: 'PermissionDenied' },
      { kind: 'Ingress', name: 'web', verdict: 'AtRisk' },
    ]);
    m.reportTargets('ns', 'other', [{ kind: 'Service', name: 'z', verdict: 'Pending' }]);
    expect(await series(m, 'loopguard_target_errors')).toEqual([
      'loopguard_target_errors{namespace="ns",policy="p",kind="Service",name="a",reason="PermissionDenied"} 1',
    ]);

    m.reportTargets('ns', 'p', [
      { kind: 'Service', name: 'a', verdict: 'Mitigated' },
      { kind: 'Ingress', name: 'web', verdict: 'AtRisk', error: 'KeepaliveCapabilityMissing' },
    ]);
    expect(await series(m, 'loopguard_target_risk')).toEqual([
      'loopguard_target_risk{namespace="ns",policy="other",kind="Service",name="z",verdict="Pending"} 1',
      'loopguard_target_risk{namespace="ns",policy="p",kind="Ingress",name="web",verdict="AtRisk"} 1',
      'loopguard_target_risk{namespace="ns",policy="p",kind="Service",name="a",verdict="Mitigated"} 1',
    ]);
    expect(await series(m, 'loopguard_target_errors')).toEqual([
      'loopguard_target_errors{namespace="ns",policy="p",kind="Ingress",name="web",reason="KeepaliveCapabilityMissing"} 1',
    ]);
  });

  // Table: each case is a sequence of reports of policy ns/p, and the series after the last one.
  const row = (name: string, verdict: string, error?: string, extra: { kind?: string; namespace?: string } = {}) => ({ kind: extra.kind ?? 'Service', name, verdict, ...(error ? { error } : {}), ...(extra.namespace ? { namespace: extra.namespace } : {}) });
  const risk = (name: string, verdict: string, kind = 'Service', ns = 'ns') => `loopguard_target_risk{namespace="${ns}",policy="p",kind="${kind}",name="${name}",verdict="${verdict}"} 1`;
  const err = (name: string, reason: string) => `loopguard_target_errors{namespace="ns",policy="p",kind="Service",name="${name}",reason="${reason}"} 1`;
  it.each([
    { what: 'a target the next report does not name is dropped', reports: [[row('a', 'AtRisk'), row('b', 'AtRisk')], [row('b', 'AtRisk')]], risk: [risk('b', 'AtRisk')], errors: [] },
    { what: 'an unchanged report keeps every series', reports: [[row('a', 'AtRisk', 'X')], [row('a', 'AtRisk', 'X')]], risk: [risk('a', 'AtRisk')], errors: [err('a', 'X')] },
    { what: 'an error that clears drops its series only', reports: [[row('a', 'AtRisk', 'X')], [row('a', 'AtRisk')]], risk: [risk('a', 'AtRisk')], errors: [] },
    { what: 'an error that changes reason replaces its series', reports: [[row('a', 'AtRisk', 'X')], [row('a', 'AtRisk', 'Y')]], risk: [risk('a', 'AtRisk')], errors: [err('a', 'Y')] },
    { what: 'a dropped target comes back', reports: [[row('a', 'AtRisk')], [], [row('a', 'Mitigated')]], risk: [risk('a', 'Mitigated')], errors: [] },
    {
      what: 'the same name as another kind or in another namespace is another series',
      reports: [[row('a', 'AtRisk'), row('a', 'Pending', undefined, { kind: 'Ingress' }), row('a', 'Mitigated', undefined, { namespace: 'other' })], [row('a', 'Pending', undefined, { kind: 'Ingress' }), row('a', 'Mitigated', undefined, { namespace: 'other' })]],
      risk: [risk('a', 'Pending', 'Ingress'), risk('a', 'Mitigated', 'Service', 'other')],
      errors: [],
    },
  ])('$what', async ({ reports, risk: wantRisk, errors }) => {
    const m = new Metrics({ processMetrics: false });
    for (const r of reports) m.reportTargets('ns', 'p', r);
    expect(await series(m, 'loopguard_target_risk')).toEqual([...wantRisk].sort());
    expect(await series(m, 'loopguard_target_errors')).toEqual([...errors].sort());
  });

  it('forgets every series of a deleted policy', async () => {
    const m = new Metrics({ processMetrics: false });
    m.reportTargets('ns', 'p', [{ kind: 'Service', name: 'a', verdict: 'AtRisk', error: 'InvalidRequest' }]);
    m.reportTargets('ns', 'q', [{ kind: 'Service', name: 'b', verdict: 'Mitigated' }]);
    m.forgetTargets('ns', 'p');
    m.forgetTargets('ns', 'never-reported');
    expect(await series(m, 'loopguard_target_risk')).toEqual(['loopguard_target_risk{namespace="ns",policy="q",kind="Service",name="b",verdict="Mitigated"} 1']);
    expect(await series(m, 'loopguard_target_errors')).toEqual([]);
  });
});

describe('per-target series as served', () => {
  it('escapes label values as the text exposition format asks, and names a cluster policy target’s own namespace', async () => {
    const m = new Metrics({ processMetrics: false });
    m.reportTargets('', 'all', [{ namespace: 'team-a', kind: 'Service', name: 'a', verdict: 'AtRisk', error: 'say "no"\\\nnow' }]);
    expect(await series(m, 'loopguard_target_errors')).toEqual([
      'loopguard_target_errors{namespace="team-a",policy="all",kind="Service",name="a",reason="say \\"no\\"\\\\\\nnow"} 1',
    ]);
  });

  it('renders the label names the alert and dashboard checks know (TARGET_GAUGES), in that order', async () => {
    const m = new Metrics({ processMetrics: false });
    m.reportTargets('ns', 'p', [{ kind: 'Service', name: 'a', verdict: 'AtRisk', error: 'InvalidRequest' }]);
    for (const g of TARGET_GAUGES) {
      const [line] = await series(m, g.name);
      expect([...(line ?? '').matchAll(/([a-z_]+)="/g)].map((x) => x[1])).toEqual(g.labelNames);
    }
  });

  it('has HELP and TYPE for both gauges, once, even with no series', async () => {
    const m = new Metrics({ processMetrics: false });
    const empty = await m.render();
    m.reportTargets('ns', 'p', [{ kind: 'Service', name: 'a', verdict: 'AtRisk' }]);
    m.reportTargets('ns', 'q', [{ kind: 'Service', name: 'b', verdict: 'AtRisk' }]);
    for (const text of [empty, await m.render()]) {
      for (const name of ['loopguard_target_risk', 'loopguard_target_errors']) {
        expect(text.split('\n').filter((l) => l === `# TYPE ${name} gauge`)).toHaveLength(1);
        expect(text.split('\n').filter((l) => l.startsWith(`# HELP ${name} `))).toHaveLength(1);
      }
    }
    // The series follow their gauge's TYPE line, and no line is empty between them (a scraper reads them as one family).
    const lines = (await m.render()).split('\n');
    const at = lines.indexOf('# TYPE loopguard_target_risk gauge');
    expect(lines.slice(at + 1, at + 3).sort()).toEqual([
      'loopguard_target_risk{namespace="ns",policy="p",kind="Service",name="a",verdict="AtRisk"} 1',
      'loopguard_target_risk{namespace="ns",policy="q",kind="Service",name="b",verdict="AtRisk"} 1',
    ]);
  });
});

describe('loopguard_cloud_rate_limit', () => {
  it('reads the CLB client’s current rate per action at scrape time', async () => {
    const m = new Metrics({ processMetrics: false });
    expect(await series(m, 'loopguard_cloud_rate_limit')).toEqual([]);
    let rates: Record<string, number> = { ModifyListener: 10 };
    m.watchCloudRate(() => rates);
    expect(await series(m, 'loopguard_cloud_rate_limit')).toEqual(['loopguard_cloud_rate_limit{action="ModifyListener"} 10']);
    rates = { ModifyListener: 4.9, DescribeListeners: 10 };
    expect(await series(m, 'loopguard_cloud_rate_limit')).toEqual([
      'loopguard_cloud_rate_limit{action="DescribeListeners"} 10',
      'loopguard_cloud_rate_limit{action="ModifyListener"} 4.9',
    ]);
  });
});
