// Pure: the OpenReports `Report` loopguard keeps in each namespace a policy covers (docs/reports.md: the upstream CRD,
// what Policy Reporter reads, and why it is bounded: Kyverno's unbounded reports outgrew etcd, kyverno/kyverno#2674).
import type { V1ObjectReference } from '@kubernetes/client-node';
import type { PolicyMode, TargetStatus, Verdict } from '../api/loopbackpolicy.js';
import { canonicalJson } from '../api/canonical-json.js';
import { printable } from '../api/text.js';
import { SEVERITY } from './verdict-counts.js';

export const REPORT_GROUP = 'openreports.io';
export const REPORT_VERSION = 'v1alpha1';
export const REPORT_API_VERSION = `${REPORT_GROUP}/${REPORT_VERSION}`;
export const REPORT_KIND = 'Report';
export const REPORT_PLURAL = 'reports';
/** One report per namespace, always this name: the view role grants exactly it (resourceNames). */
export const REPORT_NAME = 'loopguard';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The labels loopguard's reports carry: for people and selectors, not loopguard's proof of ownership (report-writer.ts). */
export const REPORT_LABELS: Readonly<Record<string, string>> = { [MANAGED_BY_LABEL]: 'loopguard', 'app.kubernetes.io/part-of': 'loopguard' };
export const MAX_REPORT_RESULTS = 100;
export const MAX_RESULT_MESSAGE = 1024;
export const MAX_RESULT_PLAN = 2048;
const MAX_LOAD_BALANCER_ID = 64;

export type ReportResultValue = 'pass' | 'fail' | 'warn' | 'error' | 'skip';
export type ReportSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

type ReportObjectReference = Pick<V1ObjectReference, 'apiVersion' | 'kind' | 'name' | 'namespace' | 'uid'>;

/** google.protobuf.Timestamp as the CRD types it (both fields required there). */
type ReportTimestamp = { seconds: number; nanos: number };

export interface ReportResult {
  policy: string;
  rule?: string;
  category?: string;
  severity?: ReportSeverity;
  result?: ReportResultValue;
  scored?: boolean;
  timestamp?: ReportTimestamp;
  resources?: ReportObjectReference[];
  message?: string;
  properties?: Record<string, string>;
  source?: string;
}

export interface Report {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string; uid?: string; [key: string]: unknown };
  source?: string;
  scope?: ReportObjectReference;
  configuration?: { limits: { maxResults?: number; statusFilter?: ReportResultValue[] } };
  summary?: Partial<Record<ReportResultValue, number>>;
  results?: ReportResult[];
}

/** One governed target, as a namespace's key reads it (targets.ts namespaceResults: a cluster or a namespaced policy's). */
export interface ReportTarget extends Pick<TargetStatus, 'kind' | 'name' | 'verdict' | 'rootCause' | 'loadBalancerId' | 'measured'> {
  apiVersion: string; // TARGET_API_VERSION of its kind
  uid?: string;
  message: string;
  mode: PolicyMode;
  policy: string; // 'ClusterLoopbackPolicy/<name>' or 'LoopbackPolicy/<name>'
  plan: readonly string[];
}

/** docs/reports.md's table: what each verdict is in OpenReports' terms; a severity only for the problems. */
export const VERDICT_RESULT: Readonly<Record<Verdict, { result: ReportResultValue; severity?: ReportSeverity }>> = {
  AtRisk: { result: 'fail', severity: 'high' },
  Unsupported: { result: 'warn', severity: 'medium' },
  Conflict: { result: 'warn', severity: 'medium' },
  // "could not be evaluated" (the API's words for error); whether ClbCreating should rather be skip is Open (docs/reports.md).
  Pending: { result: 'error', severity: 'low' },
  Mitigated: { result: 'pass' },
  NotApplicable: { result: 'pass' },
  Skipped: { result: 'skip' },
};

/**
 * The results listed, most severe first; `skip` is only counted (configuration.limits says so). Passes are listed:
 * Policy Reporter builds its views from results, not `summary`, so an all-pass namespace would vanish there.
 */
export const LISTED_RESULTS: readonly ReportResultValue[] = ['fail', 'warn', 'error', 'pass'];

const targetKey = (t: { kind?: string | undefined; name?: string | undefined }) => `${t.kind ?? ''}/${t.name ?? ''}`;

function compareTargets(a: ReportTarget, b: ReportTarget): number {
  return SEVERITY[a.verdict] - SEVERITY[b.verdict] || a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name) || a.policy.localeCompare(b.policy);
}

/** When loopguard's previous report (its own, report-writer.ts) first listed this target with this verdict and cause. */
function carriedTimestamp(previous: ReadonlyMap<string, ReportResult>, t: ReportTarget): ReportTimestamp | undefined {
  const before = previous.get(targetKey(t));
  const ref = before?.resources?.[0];
  if (!before?.timestamp || !ref) return undefined;
  if (ref.uid !== undefined && t.uid !== undefined && ref.uid !== t.uid) return undefined; // deleted and created again
  if (before.properties?.['verdict'] !== t.verdict || before.properties?.['rootCause'] !== t.rootCause) return undefined;
  return { seconds: Number(before.timestamp.seconds), nanos: Number(before.timestamp.nanos) };
}

function resultOf(namespace: string, t: ReportTarget, timestamp: ReportTimestamp): ReportResult {
  const { result, severity } = VERDICT_RESULT[t.verdict];
  const plan = printable(t.plan.map((step, i) => `${i + 1}. ${step}`).join('; '), MAX_RESULT_PLAN);
  return {
    policy: t.policy,
    rule: t.rootCause,
    category: 'CLB loopback',
    ...(severity ? { severity } : {}),
    result,
    // The API: "warn: the policy requirements are not met and the policy is not scored" (report_types.go).
    scored: result !== 'warn',
    timestamp,
    // The namespace too: Policy Reporter files a resource without one under cluster-scoped resources (docs/reports.md).
    resources: [{ apiVersion: t.apiVersion, kind: t.kind, name: t.name, namespace, ...(t.uid ? { uid: t.uid } : {}) }],
    message: printable(t.message, MAX_RESULT_MESSAGE),
    properties: {
      verdict: t.verdict,
      rootCause: t.rootCause,
      mode: t.mode,
      ...(plan ? { plan } : {}),
      ...(t.loadBalancerId ? { loadBalancerId: printable(t.loadBalancerId, MAX_LOAD_BALANCER_ID) } : {}),
      ...(t.measured ? { measured: printable(t.measured, MAX_RESULT_MESSAGE) } : {}),
    },
  };
}

/**
 * The report for `namespace`: every target counted, the LISTED_RESULTS listed. `previous`, the report loopguard itself
 * wrote last (never merely what is stored: anyone may write that), gives each unchanged result its first timestamp
 * back, so an unchanged namespace yields a report `sameReport` finds equal.
 */
export function namespaceReport(namespace: string, targets: readonly ReportTarget[], previous: Report | undefined, now: Date): Report {
  const summary: Record<ReportResultValue, number> = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
  for (const t of targets) summary[VERDICT_RESULT[t.verdict].result]++;
  const before = new Map((previous?.results ?? []).map((r) => [targetKey(r.resources?.[0] ?? {}), r]));
  const results = targets
    .filter((t) => LISTED_RESULTS.includes(VERDICT_RESULT[t.verdict].result))
    .sort(compareTargets)
    .slice(0, MAX_REPORT_RESULTS)
    .map((t) => resultOf(namespace, t, carriedTimestamp(before, t) ?? { seconds: Math.floor(now.getTime() / 1000), nanos: 0 }));
  return {
    apiVersion: REPORT_API_VERSION,
    kind: REPORT_KIND,
    metadata: { name: REPORT_NAME, namespace, labels: { ...REPORT_LABELS } },
    source: 'loopguard',
    // The report's subject is the namespace (the API: "a reference to the report scope (e.g. a Deployment, Namespace,
    // or Node)"); Policy Reporter's selfassignNamespaces option reads exactly this v1 Namespace form.
    scope: { apiVersion: 'v1', kind: 'Namespace', name: namespace },
    configuration: { limits: { maxResults: MAX_REPORT_RESULTS, statusFilter: [...LISTED_RESULTS] } },
    summary,
    results,
  };
}

/** Metadata the apiserver sets: the only part of a stored report not compared. */
const SERVER_SET = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'selfLink'];

/**
 * Whether the stored report `a` is exactly `b` (a `namespaceReport`): the whole object, the apiserver's own metadata
 * aside. Anything else another writer added (a `scope` naming another namespace, a label, an annotation, a finalizer,
 * a result) makes them differ, and the write that follows replaces the whole object.
 */
export function sameReport(a: Report | undefined, b: Report): boolean {
  return a !== undefined && reportContent(a) === reportContent(b);
}

/** The report as `sameReport` compares it, as one string (what loopguard's seal covers: src/kube/report-seal.ts). */
export function reportContent(r: Report): string {
  return canonicalJson({ ...r, metadata: Object.fromEntries(Object.entries(r.metadata).filter(([k]) => !SERVER_SET.includes(k))) });
}
