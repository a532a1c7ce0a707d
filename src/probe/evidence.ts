// What the agents measured, per target, and what that says next to the model's verdict (docs/probe.md §11). Pure:
// reports in, figures and one judgement out; the text the status, the reports and the Events show is rendered from
// the judgement. Evidence only ever adds words: nothing here reaches a plan, so measuring never makes loopguard
// write anything the model would not.
import type { ProbeReport, ProbeTargetResult } from '../api/probe.js';
import type { Verdict } from '../api/loopbackpolicy.js';
import { MAX_TARGETS } from './plan.js';

/** A target's figures over the node reports counted (one window per node, or the windows since a verdict): the counts summed. */
export interface TargetEvidence extends Pick<ProbeTargetResult, 'probes' | 'failures' | 'stalls' | 'notRun'> {
  /** The median of the node windows' p50s (the typical node). */
  p50Ms?: number;
  /** The worst node window's p99: a stall on one node is what matters, an average would hide it. */
  p99Ms?: number;
  /** Nodes whose window saw failures or stalls, sorted. */
  nodes: string[];
  /** Node windows counted. */
  windows: number;
  /** At least one counted window ran a whole plan window and probed the target. */
  full: boolean;
}

/** Which plans a report may have run for a probe entry to count (docs/probe.md §11 "Fresh or stale"). */
export interface Freshness {
  /** The plan window (s): a report whose window ended more than two of these ago is stale. */
  windowSeconds: number;
  /** Whether the report's planVersion ran this entry as the current plan has it. */
  current(planVersion: string, id: string): boolean;
  now: number;
}

/**
 * A window that ends more than two windows from now is stale too (the same slack as for the past): an agent whose
 * clock runs ahead, or a report written by hand, would otherwise count until the plan changes.
 */
export function isStale(report: Pick<ProbeReport['spec'], 'planVersion' | 'window'>, id: string, f: Freshness): boolean {
  const end = Date.parse(report.window.end);
  const window = f.windowSeconds * 1000;
  return !f.current(report.planVersion, id) || Number.isNaN(end) || Math.abs(f.now - end) > 2 * window;
}

/** One node's window of one target: its entries' results summed (a target has an entry per port or host). */
export interface NodeWindow {
  node: string;
  /** The window ran a whole plan window (not a report cut short by an agent's start or a shorter test window). */
  whole: boolean;
  results: readonly ProbeTargetResult[];
}

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

/** The evidence of node windows (each node once for "latest", each node and window once for "since"). */
export function aggregate(windows: readonly NodeWindow[]): TargetEvidence {
  const e: TargetEvidence = { probes: 0, failures: 0, stalls: 0, notRun: 0, nodes: [], windows: 0, full: false };
  const p50s: number[] = [];
  const nodes = new Set<string>();
  for (const w of windows) {
    if (w.results.length === 0) continue;
    e.windows++;
    let probed = 0;
    for (const r of w.results) {
      e.probes += r.probes;
      e.failures += r.failures;
      e.stalls += r.stalls;
      e.notRun += r.notRun;
      probed += r.probes;
      if (r.failures > 0 || r.stalls > 0) nodes.add(w.node);
      if (r.p50Ms !== undefined) p50s.push(r.p50Ms);
      if (r.p99Ms !== undefined) e.p99Ms = Math.max(e.p99Ms ?? 0, r.p99Ms);
    }
    if (w.whole && probed > 0) e.full = true;
  }
  const p50 = median(p50s);
  if (p50 !== undefined) e.p50Ms = p50;
  e.nodes = [...nodes].sort();
  return e;
}

/** Adds one more node window to a running total (the "since" ledger): p99 the worst seen, p50 not kept. */
export function accumulate(into: TargetEvidence, w: NodeWindow): TargetEvidence {
  const one = aggregate([w]);
  const nodes = [...new Set([...into.nodes, ...one.nodes])].sort();
  const p99 = Math.max(into.p99Ms ?? -1, one.p99Ms ?? -1);
  return {
    probes: into.probes + one.probes,
    failures: into.failures + one.failures,
    stalls: into.stalls + one.stalls,
    notRun: into.notRun + one.notRun,
    ...(p99 >= 0 ? { p99Ms: p99 } : {}),
    nodes,
    windows: into.windows + one.windows,
    full: into.full || one.full,
  };
}

export const EMPTY_EVIDENCE: TargetEvidence = Object.freeze({ probes: 0, failures: 0, stalls: 0, notRun: 0, nodes: [], windows: 0, full: false }) as TargetEvidence;

export type JudgementKind =
  /** The model says Mitigated or NotApplicable; a full window measured failures or stalls. */
  | 'contradiction'
  /** The model says AtRisk; a full window measured nothing failing or stalling. */
  | 'notObserved'
  /** Measured, and it agrees with the model (or the window is not full yet). */
  | 'measured'
  /** No fresh report names the target yet. */
  | 'none'
  /** The target has no private IPv4 VIP (or no TCP port): nothing to probe. */
  | 'notProbed'
  /** The plan had no room left for the target (docs/probe.md §7: 3,000 entries, shared between namespaces). */
  | 'planFull';

export interface Judgement {
  kind: JudgementKind;
  verdict: Verdict;
  /** The latest window of every node (fresh reports only). */
  latest?: TargetEvidence;
  /** Since the verdict was last seen to change, when it is Mitigated; `label` says since when. */
  since?: { evidence: TargetEvidence; label: string };
}

const bad = (e: TargetEvidence) => e.failures > 0 || e.stalls > 0;
const CALLED_FINE: ReadonlySet<Verdict> = new Set<Verdict>(['Mitigated', 'NotApplicable']);

/** The judgement of one target: its verdict next to what was measured. Pure, table-tested. */
export function judge(verdict: Verdict, probed: boolean | 'planFull', latest: TargetEvidence | undefined, since?: Judgement['since']): Judgement {
  if (probed !== true) return { kind: probed === 'planFull' ? 'planFull' : 'notProbed', verdict };
  const withSince = since && since.evidence.windows > 0 ? { since } : {};
  if (!latest || latest.windows === 0) return { kind: 'none', verdict, ...withSince };
  const kind: JudgementKind = latest.full && bad(latest) && CALLED_FINE.has(verdict) ? 'contradiction' : latest.full && !bad(latest) && verdict === 'AtRisk' ? 'notObserved' : 'measured';
  return { kind, verdict, latest, ...withSince };
}

/** 3.08 → "3 ms", 0.42 → "0.4 ms", 4490 → "4.5 s". */
export function formatLatency(ms: number): string {
  if (ms < 1) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

const MAX_NODES_SHOWN = 5;

function nodeList(nodes: readonly string[]): string {
  const shown = nodes.slice(0, MAX_NODES_SHOWN).join(', ');
  return nodes.length > MAX_NODES_SHOWN ? `${shown} and ${nodes.length - MAX_NODES_SHOWN} more` : shown;
}

/** "12/40 failed, 11 stalled from node-1, node-3; p99 4.2 s" */
export function figures(e: TargetEvidence): string {
  const parts = [`${e.failures}/${e.probes} failed`];
  if (e.stalls > 0) parts.push(`${e.stalls} stalled`);
  let text = parts.join(', ');
  if (e.nodes.length > 0) text += ` from ${nodeList(e.nodes)}`;
  if (e.notRun > 0) text += ` (${e.notRun} could not be sent)`;
  if (e.p99Ms !== undefined) text += `; p99 ${formatLatency(e.p99Ms)}`;
  if (!e.full) text += ' (no full window yet)';
  return text;
}

/** The line status.targets[].measured, the reports and doctor show. */
export function renderJudgement(j: Judgement): string {
  const since = j.since ? `measured since ${j.since.label}: ${figures(j.since.evidence)}` : undefined;
  switch (j.kind) {
    case 'notProbed':
      return 'not probed: no private IPv4 VIP with a TCP port or an Ingress host';
    case 'planFull':
      return `not probed: the probe plan is full (${MAX_TARGETS} entries, shared between namespaces in turn; see the operator's log)`;
    case 'none':
      return since ?? 'measured: no probe report for this target yet';
    case 'contradiction':
      return `contradicts ${j.verdict}: measured ${figures(j.latest!)}${since ? `; ${since}` : ''}`;
    case 'notObserved':
      return `not observed: measured ${figures(j.latest!)}, nothing failed or stalled over a full window`;
    case 'measured':
      return since ?? `measured: ${figures(j.latest!)}`;
  }
}

/** The policy condition the judgements make (docs/probe.md §11). */
export const CONDITION_MEASURED_LOOPBACK = 'MeasuredLoopback';
export const MeasuredReason = { LoopbackMeasured: 'LoopbackMeasured', MeasuredAsModelled: 'MeasuredAsModelled', NotMeasuredYet: 'NotMeasuredYet' } as const;

export interface MeasuredCondition {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/**
 * True when a target the model calls Mitigated or NotApplicable measured failures or stalls over a full window,
 * naming the first three with their nodes and figures; False otherwise. Undefined when the policy probes nothing.
 */
export function measuredCondition(judged: readonly { who: string; judgement: Judgement }[]): MeasuredCondition | undefined {
  const probed = judged.filter((j) => j.judgement.kind !== 'notProbed' && j.judgement.kind !== 'planFull');
  if (probed.length === 0) return undefined;
  const contradictions = probed.filter((j) => j.judgement.kind === 'contradiction');
  if (contradictions.length > 0) {
    const shown = contradictions.slice(0, 3).map((j) => `${j.who} (${j.judgement.verdict}): ${figures(j.judgement.latest!)}`);
    const more = contradictions.length > 3 ? ` (and ${contradictions.length - 3} more)` : '';
    return { status: 'True', reason: MeasuredReason.LoopbackMeasured, message: `measured failures or stalls where loopguard finds no loopback: ${shown.join('; ')}${more}` };
  }
  const measured = probed.filter((j) => j.judgement.latest?.full).length;
  if (measured === 0) return { status: 'False', reason: MeasuredReason.NotMeasuredYet, message: `no full probe window measured yet for the ${probed.length} probed target(s)` };
  return { status: 'False', reason: MeasuredReason.MeasuredAsModelled, message: `${measured} of ${probed.length} probed target(s) measured over a full window; none that loopguard calls Mitigated or NotApplicable failed or stalled` };
}
