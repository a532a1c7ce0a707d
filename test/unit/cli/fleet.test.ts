// The fleet view (`doctor --context a --context b` / `--all-contexts`) on reports built by hand: the roll-up per
// cluster, the exit code of the fleet, a failed context in its row next to the others, and the cluster in every
// result of every format (SARIF validated against the 2.1.0 schema).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import type { Log } from 'sarif';
import { buildFleetReport, fleetExitCode, rollupOf, type FleetReport } from '../../../src/cli/fleet-report.js';
import { renderFleet } from '../../../src/cli/output/fleet.js';
import { buildReport, type TargetReport } from '../../../src/cli/report.js';
import { detectClusterProfile } from '../../../src/model/cluster-profile.js';
import { REPO_ROOT } from '../../controlplane/crds.js';

const profile = detectClusterProfile({ flags: { kubeProxyMode: 'ipvs', kubeProxyVersion: 'v1.20.6-tke.12' } });

function target(extra: Partial<TargetReport>): TargetReport {
  return { namespace: 'shop', kind: 'Service', name: 'web', verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp', message: 'm', mitigations: [], plan: [], alternatives: [], advice: [], warnings: [], ...extra };
}
// As the scan reports them (src/cli/scan.ts): at risk with no policy covering it is `uncovered`.
const atRisk = (name: string, policy?: string) =>
  target({ name, verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded', loadBalancerId: `lb-${name}`, plan: ['switch the source'], ...(policy ? { policy } : { uncovered: true }) });

const east = buildReport('DoctorReport', profile, [atRisk('orders'), atRisk('cart', 'LoopbackPolicy shop/audit'), target({ name: 'ok', verdict: 'Mitigated' }), target({})], [], new Date(0));
// west's doctor judged its account's default source (src/cli/account-advice.ts).
const west = { ...buildReport('DoctorReport', profile, [target({ name: 'calm' })], [], new Date(0)), account: { source: 'Range100_64' as const, listeners: { range100_64: 2, vip: 0 }, advice: ['new listeners get the 100.64.0.0/10 health-check source'] } };
const fleet: FleetReport = buildFleetReport(
  [
    { cluster: 'east', server: 'https://127.0.0.1:1', report: east },
    { cluster: 'gone', server: 'https://127.0.0.1:2', error: 'cannot reach the Kubernetes API at https://127.0.0.1:2: connect ECONNREFUSED' },
    { cluster: 'west', report: west },
  ],
  new Date(0),
);

describe('fleet report', () => {
  it('rolls up each cluster: targets, at risk, mitigated, and uncovered (at risk with no policy)', () => {
    expect(rollupOf(east.targets)).toEqual({ targets: 4, atRisk: 2, mitigated: 1, uncovered: 1 });
    expect(fleet.clusters.map((c) => [c.cluster, c.status, c.rollup, c.error])).toEqual([
      ['east', 'Scanned', { targets: 4, atRisk: 2, mitigated: 1, uncovered: 1 }, undefined],
      ['gone', 'Failed', undefined, expect.stringContaining('ECONNREFUSED')],
      ['west', 'Scanned', { targets: 1, atRisk: 0, mitigated: 0, uncovered: 0 }, undefined],
    ]);
    expect(fleet).toMatchObject({ kind: 'DoctorFleetReport', failed: 1, atRisk: true, counts: { total: 5, atRisk: 2, mitigated: 1 } });
    expect(fleet.clusters.flatMap((c) => c.report?.targets ?? []).every((t) => t.cluster === 'east' || t.cluster === 'west')).toBe(true);
  });

  it.each([
    ['nothing at risk, all scanned', { atRisk: false, failed: 0 }, 0],
    ['a risk anywhere wins over a failed context (its row says why)', { atRisk: true, failed: 1 }, 1],
    ['a risk, all scanned', { atRisk: true, failed: 0 }, 1],
    ['no risk seen but a context could not be scanned', { atRisk: false, failed: 2 }, 2],
  ])('exit code: %s', (_name, r, code) => {
    expect(fleetExitCode(r)).toBe(code);
  });
});

describe('fleet formats', () => {
  it('table: the roll-up with the failed row, then one target table with a cluster column', () => {
    const text = renderFleet(fleet, 'table', '0.1.0');
    expect(text).toMatch(/^CLUSTER\s+STATUS\s+TARGETS\s+AT RISK\s+MITIGATED\s+UNCOVERED\s+PROFILE \/ ERROR\n/);
    expect(text).toMatch(/\neast\s+Scanned\s+4\s+2\s+1\s+1\s+kube-proxy ipvs/);
    expect(text).toMatch(/\ngone\s+Failed\s+-\s+-\s+-\s+-\s+cannot reach the Kubernetes API .*ECONNREFUSED/);
    expect(text).toMatch(/\n\(fleet\)\s+5\s+2\s+1\s+1/);
    expect(text).toMatch(/\nCLUSTER\s+NAMESPACE\s+KIND\s+NAME\s+CLB\s+VERDICT/);
    expect(text).toMatch(/\neast\s+shop\s+Service\s+cart\s+lb-cart\s+AtRisk\s+PodSourceNotMasqueraded\s+1 step\s+LoopbackPolicy shop\/audit\n/);
    expect(text).toMatch(/\neast\s+shop\s+Service\s+orders\s+lb-orders\s+AtRisk\s+PodSourceNotMasqueraded\s+1 step\s+UNCOVERED\n/);
    expect(text).toMatch(/\nwest\s+shop\s+Service\s+calm/);
    expect(text).toContain('[east] Service shop/orders: AtRisk');
    expect(text.split('\n').filter((l) => l.startsWith('account ('))).toEqual(['account (west): new listeners get the 100.64.0.0/10 health-check source']);
    expect(text.trimEnd().split('\n').pop()).toBe('fleet: 3 clusters, 1 could not be scanned; 5 targets: 2 at risk, 1 mitigated, 2 not applicable; at risk in 1 of 2');
  });

  it('json: every target names its cluster; the failed context keeps its error', () => {
    const parsed = JSON.parse(renderFleet(fleet, 'json', '0.1.0')) as FleetReport;
    expect(parsed.clusters.map((c) => c.status)).toEqual(['Scanned', 'Failed', 'Scanned']);
    for (const c of parsed.clusters) for (const t of c.report?.targets ?? []) expect(t.cluster).toBe(c.cluster);
  });

  it('markdown: roll-up and targets tables with a cluster column, the failed row escaped', () => {
    const md = renderFleet(fleet, 'markdown', '0.1.0');
    expect(md).toContain('| Cluster | Status | Targets | At risk | Mitigated | Uncovered | Profile / error |');
    expect(md).toContain('| `east` | Scanned | 4 | 2 | 1 | 1 |');
    expect(md).toMatch(/\| `gone` \| \*\*Failed\*\* \| - \| - \| - \| - \| cannot reach the Kubernetes API at .*ECONNREFUSED \|/);
    expect(md).toMatch(/\| `east` \| `Service shop\/orders` \| lb-orders \| \*\*AtRisk\*\* \| .* \| \*\*uncovered\*\* \|\n/);
    expect(md).toMatch(/\| `east` \| `Service shop\/cart` \| .* \| `LoopbackPolicy shop\/audit` \|\n/);
    expect(md).toContain('<details><summary>east: <code>Service shop/orders</code>');
    expect(md).toContain('> account (west): new listeners get the 100.64.0.0/10 health-check source');
    const evil = renderFleet(buildFleetReport([{ cluster: 'x', error: 'a | b <script>' }], new Date(0)), 'markdown', '0.1.0');
    expect(evil).toContain('a \\| b &lt;script&gt;');
  });

  it('sarif: valid 2.1.0, one run per cluster, the cluster in every result; a failed context is a failed invocation', () => {
    const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/sarif/sarif-2.1.0-rtm.5.json'), 'utf8')) as Record<string, unknown>;
    const ajv = new ajvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    ajvFormats.default(ajv);
    const validate = ajv.compile(schema);
    const log = JSON.parse(renderFleet(fleet, 'sarif', '0.1.0')) as Log;
    expect(validate(log)).toBe(true);
    expect(validate.errors ?? []).toEqual([]);
    expect(log.runs.map((r) => r.automationDetails?.id)).toEqual(['loopguard-doctor/east/', 'loopguard-doctor/gone/', 'loopguard-doctor/west/']);
    const results = log.runs.flatMap((r) => r.results ?? []);
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.properties?.['cluster']).toBe('east');
      expect(r.locations?.[0]?.logicalLocations?.[0]?.fullyQualifiedName).toMatch(/^east\/shop\/Service\//);
      expect(r.partialFingerprints?.['loopguardTarget/v1']).toMatch(/^east\/Service\/shop\//);
    }
    expect(log.runs[1]?.invocations?.[0]).toMatchObject({ executionSuccessful: false, toolExecutionNotifications: [{ message: { text: expect.stringContaining('ECONNREFUSED') } }] });
  });
});
