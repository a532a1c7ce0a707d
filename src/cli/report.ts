// Pure: the report `loopguard doctor` and `loopguard plan` print, in every output format. One entry per target with
// the verdict, the root cause, the plan Enforce would carry out (describeStep: the lines Audit prints), the topology
// alternatives, and, for `plan`, where the target was declared and what its verdict depends on.
import { API_VERSION, type ClusterProfileStatus, type TargetKind, type Verdict, type VerdictCounts } from '../api/loopbackpolicy.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import { profileProjection } from '../model/status.js';
import { countVerdicts, SEVERITY } from '../model/verdict-counts.js';
import type { Alternative } from '../model/topology.js';
import { describeStep } from '../plan/steps.js';
import type { AccountReport } from './account-advice.js';
import type { Analysis } from './analysis.js';
import { EXIT_OK, EXIT_RISK } from './errors.js';

export type ReportKind = 'DoctorReport' | 'PlanReport';

/** Where a manifest declared the target (`loopguard plan`). */
export interface SourceLocation {
  file: string;
  /** 1-based line of the object's first line. */
  line: number;
}

export interface TargetReport {
  namespace: string;
  kind: TargetKind;
  name: string;
  loadBalancerId?: string;
  verdict: Verdict;
  rootCause: string;
  message: string;
  /** Mitigations observed in effect. */
  mitigations: string[];
  /** The steps Enforce would carry out, in order (the lines Audit prints in status.targets[].plan). */
  plan: string[];
  /** Why the plan stops early, when only a human can go on. */
  planStops?: string;
  alternatives: Alternative[];
  /** Security-group and X-Forwarded-For notes. */
  advice: string[];
  /** Problems with the target's annotations. */
  warnings: string[];
  /**
   * The policy that covers (manages) the target and whose spec was used: `LoopbackPolicy <namespace>/<name>` or
   * `ClusterLoopbackPolicy/<name>`, resolved as the operator does (src/cli/policy-spec.ts); absent: the defaults.
   */
  policy?: string;
  /** `doctor`: at risk and no policy covers it, so nothing will mitigate it until one does. */
  uncovered?: true;
  /** `plan`: the verdict depends on CLB facts manifests do not carry, e.g. "AtRisk if the CLB keeps the VIP …". */
  condition?: string;
  /** `plan`: the CLB facts assumed for the verdict and plan shown. */
  assumed?: Record<string, string>;
  source?: SourceLocation;
  /** `doctor`: what the probe agents measured (docs/probe.md §11.3), e.g. "measured: 12/40 failed from node-1; p99 4.2 s". */
  measured?: string;
  /** `doctor` over several contexts (fleet-report.ts): the kubeconfig context the target was found in. */
  cluster?: string;
}

export interface Report {
  apiVersion: typeof API_VERSION;
  kind: ReportKind;
  generatedAt: string;
  clusterProfile: ClusterProfileStatus;
  counts: VerdictCounts;
  /** Some target is AtRisk (for `plan`: in some case its condition allows). */
  atRisk: boolean;
  targets: TargetReport[];
  /** What could not be read and how that limits the report. */
  notes: string[];
  /** `doctor`: how many at-risk targets no policy covers; absent when cluster policies could not be resolved. */
  uncovered?: number;
  /** `doctor`: the account's default health-check source as its listeners show it, and what that means. */
  account?: AccountReport;
  /** `doctor`: what the scan read and what it cost (CLB calls per action, at the per-action rate limit). */
  scan?: ScanFigures;
}

export interface ScanFigures {
  scope: string;
  context: string;
  clbsRead: number;
  clbCalls: Record<string, number>;
  throttled: number;
  /** Requests per second per action the scan allowed itself (--cloud-rate-limit). */
  rateLimit: number;
  durationMs: number;
}

export interface TargetExtras {
  policy?: string;
  uncovered?: boolean;
  condition?: string;
  assumed?: Record<string, string>;
  source?: SourceLocation;
}

export function targetReport(analysis: Analysis, extras: TargetExtras = {}): TargetReport {
  const a = analysis.assessment;
  const stop = analysis.plan.error;
  return {
    namespace: a.target.namespace,
    kind: a.target.kind,
    name: a.target.name,
    ...(a.loadBalancerId ? { loadBalancerId: a.loadBalancerId } : {}),
    verdict: a.verdict,
    rootCause: a.rootCause.id,
    message: a.rootCause.message,
    mitigations: [...a.mitigations],
    plan: analysis.plan.steps.map(describeStep),
    ...(stop ? { planStops: `${stop.reason}: ${stop.message}` } : {}),
    alternatives: [...a.alternatives],
    advice: [...a.advice],
    warnings: [...a.warnings],
    ...(extras.policy ? { policy: extras.policy } : {}),
    ...(extras.uncovered ? { uncovered: true as const } : {}),
    ...(extras.condition ? { condition: extras.condition } : {}),
    ...(extras.assumed ? { assumed: extras.assumed } : {}),
    ...(extras.source ? { source: extras.source } : {}),
  };
}

/** Most severe first, then namespace, kind and name: what needs attention leads every format. */
export function compareTargets(a: TargetReport, b: TargetReport): number {
  return (
    SEVERITY[a.verdict] - SEVERITY[b.verdict] ||
    a.namespace.localeCompare(b.namespace) ||
    a.kind.localeCompare(b.kind) ||
    a.name.localeCompare(b.name)
  );
}

/** The same projection as the policy status (one place decides what a profile shows). */
export const profileView = profileProjection;

export function buildReport(kind: ReportKind, profile: ClusterProfile | ClusterProfileStatus, targets: readonly TargetReport[], notes: readonly string[], now: Date): Report {
  const sorted = [...targets].sort(compareTargets);
  return {
    apiVersion: API_VERSION,
    kind,
    generatedAt: now.toISOString(),
    clusterProfile: profileView(profile),
    counts: countVerdicts(sorted),
    atRisk: sorted.some((t) => t.verdict === 'AtRisk'),
    targets: sorted,
    notes: [...notes],
  };
}

/** 0: no risk; 1: some target at risk (`--warn-only` keeps 0 and lets the output speak). */
export function exitCodeOf(report: Report, warnOnly = false): number {
  return report.atRisk && !warnOnly ? EXIT_RISK : EXIT_OK;
}

/** "Service loopguard-demo/orders" */
export function targetLabel(t: Pick<TargetReport, 'kind' | 'namespace' | 'name'>): string {
  return `${t.kind} ${t.namespace}/${t.name}`;
}

/** Targets whose details every text format prints: what needs attention, or has a plan. */
export function needsDetails(t: TargetReport): boolean {
  // A measurement that contradicts the verdict (docs/probe.md §11.3) needs attention whatever the verdict.
  return t.verdict === 'AtRisk' || t.verdict === 'Unsupported' || t.verdict === 'Conflict' || t.plan.length > 0 || t.condition !== undefined || t.measured?.startsWith('contradicts ') === true;
}
