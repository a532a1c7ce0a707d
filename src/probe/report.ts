// The report object one agent writes for its node (pure; the I/O is in report-writer.ts).
import { API_VERSION } from '../api/loopbackpolicy.js';
import { PROBE_REPORT_KIND, probeReportName, type ProbeReport, type ProbeTargetResult } from '../api/probe.js';

export interface ReportInput {
  node: string;
  pod: { name: string; uid: string };
  namespace: string;
  planVersion: string;
  windowStartMs: number;
  windowSeconds: number;
  targets: ProbeTargetResult[];
}

export function buildReport(input: ReportInput): ProbeReport {
  return {
    apiVersion: API_VERSION,
    kind: PROBE_REPORT_KIND,
    metadata: { name: probeReportName(input.node), namespace: input.namespace },
    spec: {
      node: input.node,
      pod: input.pod,
      planVersion: input.planVersion,
      window: {
        start: new Date(input.windowStartMs).toISOString(),
        end: new Date(input.windowStartMs + input.windowSeconds * 1000).toISOString(),
        seconds: input.windowSeconds,
      },
      targets: input.targets,
    },
  };
}
