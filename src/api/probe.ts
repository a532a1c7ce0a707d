// The loopback probe's two objects (docs/probe.md): the plan the operator publishes (a ConfigMap, read by every
// agent) and the report each agent writes for its node (LoopbackProbeReport, crds/loopguard.dev_loopbackprobereports.yaml).
// Both live in loopguard's namespace; neither is writable by a namespace user.

/** The plan's ConfigMap, in loopguard's namespace; its JSON under PLAN_KEY (src/probe/plan.ts parses it). */
export const PROBE_PLAN_NAME = 'loopguard-probe-plan';
export const PROBE_PLAN_KEY = 'plan.json';

export const PROBE_REPORT_KIND = 'LoopbackProbeReport';
export const PROBE_REPORT_PLURAL = 'loopbackprobereports';

export type ProbeProtocol = 'TCP' | 'HTTP' | 'HTTPS';

/** One thing to measure: L4 `TCP` (connect) or L7 `HTTP`/`HTTPS` (a HEAD to host + path). */
export interface ProbeTarget {
  /** The operator's name for it, echoed in reports (e.g. `Service/ns/name:80`, `Ingress/ns/name/host/path`). */
  id: string;
  /** A private IPv4 CLB VIP: the only address the agent ever sends to. */
  vip: string;
  port: number;
  protocol: ProbeProtocol;
  /** L7 only: the Host header (and TLS server name). */
  host?: string;
  /** L7 only: the path of the HEAD request; default `/`. */
  path?: string;
  /** Default: the plan's `timeoutMs`. */
  timeoutMs?: number;
}

export interface ProbePlan {
  version: 1;
  /** Every target is probed from every node at least once per window; a report covers one window. */
  windowSeconds: number;
  timeoutMs: number;
  targets: ProbeTarget[];
}

/** One target's figures over one window, from one node. Latencies in milliseconds (estimated, docs/probe.md). */
export interface ProbeTargetResult {
  id: string;
  /** Probes sent; = ok + failures + notRun. */
  probes: number;
  /** Refused, reset, timed out, or an HTTP status >= 500: what a loopback fault looks like. */
  failures: number;
  /** Probes (answered or not) that took >= 3 s (a timeout counts when the timeout is >= 3 s). */
  stalls: number;
  /** Probes that could not be sent (no route, no local address, no file descriptor): not a loopback failure. */
  notRun: number;
  /** Over the probes that were sent and ended (answer, failure or timeout); absent without any. */
  p50Ms?: number;
  p99Ms?: number;
}

export interface ProbeReportSpec {
  /** The node (downward API spec.nodeName) and the agent pod (name, uid) that wrote it. */
  node: string;
  pod: { name: string; uid: string };
  /** The plan this window ran (the ConfigMap's resourceVersion). */
  planVersion: string;
  window: { start: string; end: string; seconds: number };
  /** Every target of the plan, in its order; one the window had no capacity for (docs/probe.md §4) with probes 0. */
  targets: ProbeTargetResult[];
}

export interface ProbeReport {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: ProbeReportSpec;
}

/** The report's name: the node's (a node name is a DNS subdomain, so is this), one per node. */
export function probeReportName(node: string): string {
  return node;
}
