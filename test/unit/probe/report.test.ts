import { describe, expect, it } from '@jest/globals';
import { buildReport } from '../../../src/probe/report.js';

describe("a node's report", () => {
  it('is a LoopbackProbeReport named after the node, with the window and every target', () => {
    expect(
      buildReport({
        node: 'node-1',
        pod: { name: 'loopguard-probe-abcde', uid: 'u-1' },
        namespace: 'loopguard-system',
        planVersion: '42',
        windowStartMs: Date.UTC(2026, 10, 29, 7, 0, 0),
        windowSeconds: 300,
        targets: [{ id: 'Service/ns/web:80', probes: 30, failures: 12, stalls: 12, notRun: 0, p50Ms: 2.1, p99Ms: 5040 }],
      }),
    ).toEqual({
      apiVersion: 'loopguard.dev/v1alpha1',
      kind: 'LoopbackProbeReport',
      metadata: { name: 'node-1', namespace: 'loopguard-system' },
      spec: {
        node: 'node-1',
        pod: { name: 'loopguard-probe-abcde', uid: 'u-1' },
        planVersion: '42',
        window: { start: '2026-11-29T07:00:00.000Z', end: '2026-11-29T07:05:00.000Z', seconds: 300 },
        targets: [{ id: 'Service/ns/web:80', probes: 30, failures: 12, stalls: 12, notRun: 0, p50Ms: 2.1, p99Ms: 5040 }],
      },
    });
  });
});
