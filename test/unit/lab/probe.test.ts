// `npm run lab -- --probe` (lab/probe.ts): the plan it hands the probe agent is one the agent accepts with its
// default ranges (the lab's VIP is where a private CLB's is), and the line sums the agent's own reports per phase.
import { describe, expect, it } from '@jest/globals';
import type { ProbeTargetResult } from '../../../src/api/probe.js';
import { allowedRanges, parsePlan } from '../../../src/probe/plan.js';
import { buildReport } from '../../../src/probe/report.js';
import { L4_PORT, L7_PORT, VIP } from '../../../lab/addresses.js';
import { figures, L4_TARGET, L7_TARGET, probeLine, probePlanText, tally, type ProbePhase } from '../../../lab/probe.js';

const report = (node: string, targets: ProbeTargetResult[]) =>
  buildReport({ node, pod: { name: `p-${node}`, uid: '' }, namespace: 'loopguard-system', planVersion: '1', windowStartMs: 0, windowSeconds: 3, targets });

describe('lab --probe', () => {
  it("hands the agent a plan it accepts whole with no --allow-cidr: the lab's VIP is private (RFC 1918)", () => {
    const ranges = allowedRanges([]);
    if ('error' in ranges) throw new Error(ranges.error);
    const text = probePlanText(
      [
        { id: L4_TARGET, vip: VIP, port: L4_PORT, protocol: 'TCP', timeoutMs: 1000 },
        { id: L7_TARGET, vip: VIP, port: L7_PORT, protocol: 'HTTP', host: 'web.lab.example', path: '/', timeoutMs: 9000 },
      ],
      3,
      5000,
    );
    const parsed = parsePlan(text, { ranges: ranges.ranges, minWindowSeconds: 3 });
    expect(parsed.ok && { targets: parsed.plan.targets.map((t) => t.id), refused: parsed.refused }).toEqual({ targets: [L4_TARGET, L7_TARGET], refused: [] });
  });

  it('sums probes, failures, stalls over the nodes, keeps the worst p99, names the nodes that saw them', () => {
    const reports = [
      report('node1', [
        { id: L4_TARGET, probes: 30, failures: 9, stalls: 0, notRun: 0, p50Ms: 1.2, p99Ms: 1030 },
        { id: L7_TARGET, probes: 30, failures: 0, stalls: 11, notRun: 0, p50Ms: 20, p99Ms: 4240 },
      ]),
      report('node2', [
        { id: L4_TARGET, probes: 30, failures: 0, stalls: 0, notRun: 1, p50Ms: 1.1, p99Ms: 2.5 },
        { id: L7_TARGET, probes: 30, failures: 0, stalls: 10, notRun: 0, p50Ms: 21, p99Ms: 4490 },
      ]),
    ];
    expect(tally(reports, L4_TARGET)).toEqual({ probes: 60, failures: 9, stalls: 0, notRun: 1, p99Ms: 1030, nodes: ['node1'] });
    expect(tally(reports, L7_TARGET)).toEqual({ probes: 60, failures: 0, stalls: 21, notRun: 0, p99Ms: 4490, nodes: ['node1', 'node2'] });
    expect(tally(reports, 'absent')).toEqual({ probes: 0, failures: 0, stalls: 0, notRun: 0, nodes: [] });
  });

  it('prints before from the before window and after from each fix’s own window', () => {
    const phases: ProbePhase[] = [
      {
        phase: 'before',
        state: '',
        planVersion: 'lab-before',
        reports: [
          report('node1', [
            { id: L4_TARGET, probes: 30, failures: 8, stalls: 0, notRun: 0, p99Ms: 1030 },
            { id: L7_TARGET, probes: 30, failures: 0, stalls: 12, notRun: 0, p99Ms: 4250 },
          ]),
        ],
      },
      { phase: 'after-l4', state: '', planVersion: 'lab-after-l4', reports: [report('node1', [{ id: L4_TARGET, probes: 30, failures: 0, stalls: 0, notRun: 0, p99Ms: 2.18 }])] },
      { phase: 'after-l7', state: '', planVersion: 'lab-after-l7', reports: [report('node1', [{ id: L7_TARGET, probes: 30, failures: 0, stalls: 0, notRun: 0, p99Ms: 55.8 }])] },
    ];
    expect(probeLine(figures(phases))).toBe('probe: L4 before failed=8/30 after failed=0/30; L7 before stalls=12/30 p99=4.25s after stalls=0/30 p99=55.8ms');
    // A phase that never ran shows as nothing measured, not as a pass.
    expect(probeLine(figures(phases.slice(0, 1)))).toBe('probe: L4 before failed=8/30 after failed=0/0; L7 before stalls=12/30 p99=4.25s after stalls=0/0 p99=-');
  });
});
