// The agents' reports as the operator holds them (docs/probe.md §11): the latest report of each node (from the
// informer on loopbackprobereports), the plan they are judged against, and, per target loopguard calls Mitigated, the
// windows measured since it became so ("measured since Enforce"). A report's change reaches the policies through
// `onChange` with the CLBs of the targets whose state it changed (a node starting or stopping to see failures or
// stalls, or its first report): their round renders the figures again (routing.ts `clb`). Every other report only
// updates figures the next round shows, so 50 nodes' reports every 5 minutes do not re-plan every CLB ten times a
// minute.
import type { ProbeReport, ProbeTargetResult } from '../api/probe.js';
import type { Verdict } from '../api/loopbackpolicy.js';
import { targetKey, type TargetRef } from '../model/facts.js';
import { accumulate, aggregate, EMPTY_EVIDENCE, isStale, judge, type Freshness, type Judgement, type NodeWindow, type TargetEvidence } from './evidence.js';
import type { PlannedProbe } from './plan-builder.js';

/** What a new window of a target feeds (the metrics, src/probe/metrics.ts). */
export interface WindowSink {
  window(target: TargetRef, results: readonly ProbeTargetResult[]): void;
  /** The targets the plan names now: series of the others are dropped (the label set stays bounded by the plan). */
  targets(targets: readonly TargetRef[]): void;
}

interface NodeReport {
  spec: ProbeReport['spec'];
  results: Map<string, ProbeTargetResult>;
}

interface Mark {
  verdict: Verdict;
  at: number;
  label: string;
  evidence: TargetEvidence;
  /** Per node, the end of the last window counted. */
  counted: Map<string, string>;
  /** The verdict was seen to change to this one (not first seen): windows that started before measured the old state. */
  changed: boolean;
}

export interface EvidenceStoreOptions {
  onChange: (clbs: readonly string[]) => void;
  sink?: WindowSink;
  now?: () => number;
}

const bad = (r: ProbeTargetResult | undefined) => r !== undefined && (r.failures > 0 || r.stalls > 0);

export class EvidenceStore {
  private readonly byNode = new Map<string, NodeReport>();
  /** targetKey → its entries' ids and the target. */
  private targets = new Map<string, { ref: TargetRef; ids: string[]; loadBalancerId?: string }>();
  private windowSeconds = 300;
  /** Plan version → entry id → the entry as JSON: a report counts for an entry its plan ran as the current plan has it. */
  private readonly plans = new Map<string, Map<string, string>>();
  private currentVersion: string | undefined;
  private readonly marks = new Map<string, Mark>();
  /** Targets the plan had no room for (targetKey). */
  private left = new Set<string>();
  private readonly now: () => number;

  constructor(private readonly o: EvidenceStoreOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The plan as stored now (`version`: its resourceVersion) and the probes it was built from. */
  setPlan(version: string, windowSeconds: number, probes: readonly PlannedProbe[], left: readonly TargetRef[] = []): void {
    this.windowSeconds = windowSeconds;
    this.left = new Set(left.map(targetKey));
    this.targets = new Map();
    for (const p of probes) {
      const k = targetKey(p.target);
      const t = this.targets.get(k) ?? { ref: p.target, ids: [], ...(p.loadBalancerId ? { loadBalancerId: p.loadBalancerId } : {}) };
      t.ids.push(p.entry.id);
      this.targets.set(k, t);
    }
    this.remember(version, probes.map((p) => p.entry));
    for (const k of [...this.marks.keys()]) if (!this.targets.has(k)) this.marks.delete(k);
    this.o.sink?.targets([...this.targets.values()].map((t) => t.ref));
  }

  /** A plan version seen (written, or read at start): reports of it count for the entries it shares with the current one. */
  remember(version: string, entries: readonly { id: string }[]): void {
    this.plans.delete(version);
    this.plans.set(version, new Map(entries.map((e) => [e.id, JSON.stringify(e)])));
    this.currentVersion = version;
    // The last few versions: an agent runs the plan its window started with, one window behind at most.
    while (this.plans.size > 4) this.plans.delete(this.plans.keys().next().value as string);
  }

  private freshness(): Freshness {
    const current = this.currentVersion ? this.plans.get(this.currentVersion) : undefined;
    return { windowSeconds: this.windowSeconds, now: this.now(), current: (v, id) => current?.get(id) !== undefined && this.plans.get(v)?.get(id) === current.get(id) };
  }

  /** An informer event on a report. */
  report(r: ProbeReport, deleted: boolean): void {
    const node = r.metadata.name;
    const before = this.byNode.get(node);
    if (deleted || !r.spec) this.byNode.delete(node);
    else this.byNode.set(node, { spec: r.spec, results: new Map((r.spec.targets ?? []).map((t) => [t.id, t])) });
    const after = this.byNode.get(node);
    const changed = new Set<string>();
    for (const [k, t] of this.targets) {
      if (t.ids.some((id) => !before || !after || bad(before.results.get(id)) !== bad(after.results.get(id)))) changed.add(k);
    }
    if (after && before?.spec.window.end !== after.spec.window.end) this.newWindow(node, after);
    const clbs = [...new Set([...changed].flatMap((k) => this.targets.get(k)?.loadBalancerId ?? []))];
    if (clbs.length > 0) this.o.onChange(clbs);
  }

  /** A node's new window: the metrics, and the ledger of each Mitigated target it started after. */
  private newWindow(node: string, r: NodeReport): void {
    const f = this.freshness();
    const start = Date.parse(r.spec.window.start);
    for (const [k, t] of this.targets) {
      const results = t.ids.flatMap((id) => (!isStale(r.spec, id, f) && r.results.has(id) ? [r.results.get(id)!] : []));
      if (results.length === 0) continue;
      this.o.sink?.window(t.ref, results);
      const mark = this.marks.get(k);
      if (!mark || mark.verdict !== 'Mitigated' || !(start >= mark.at) || mark.counted.get(node) === r.spec.window.end) continue;
      mark.counted.set(node, r.spec.window.end);
      mark.evidence = accumulate(mark.evidence, this.windowOf(node, r, results));
    }
  }

  private windowOf(node: string, r: NodeReport, results: readonly ProbeTargetResult[]): NodeWindow {
    return { node, whole: r.spec.window.seconds >= this.windowSeconds, results };
  }

  /** Whether the plan has entries for the target. */
  probed(t: TargetRef): boolean {
    return this.targets.has(targetKey(t));
  }

  /**
   * The target's judgement next to its verdict. A verdict other than the last one seen starts a new ledger (since
   * now); `enforced`: its namespace is in Enforce, so a change to Mitigated is "since Enforce".
   */
  judge(t: TargetRef, verdict: Verdict, enforced: boolean): Judgement {
    const k = targetKey(t);
    const planned = this.targets.get(k);
    if (!planned) return judge(verdict, this.left.has(k) ? 'planFull' : false, undefined);
    const now = this.now();
    let mark = this.marks.get(k);
    if (!mark || mark.verdict !== verdict) {
      const label = mark && verdict === 'Mitigated' && enforced ? 'Enforce' : new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      this.marks.set(k, (mark = { verdict, at: now, label, evidence: EMPTY_EVIDENCE, counted: new Map(), changed: mark !== undefined }));
    }
    const f = this.freshness();
    const windows: NodeWindow[] = [];
    // A window that started before the verdict changed measured the state before (the loopback Enforce then fixed):
    // judged against the new verdict it would be a false contradiction, so the node's next window is awaited.
    const changedAt = mark.changed ? mark.at : undefined;
    for (const [node, r] of this.byNode) {
      if (changedAt !== undefined && !(Date.parse(r.spec.window.start) >= changedAt)) continue;
      const results = planned.ids.flatMap((id) => (!isStale(r.spec, id, f) && r.results.has(id) ? [r.results.get(id)!] : []));
      if (results.length > 0) windows.push(this.windowOf(node, r, results));
    }
    const ledger = verdict === 'Mitigated' ? { evidence: mark.evidence, label: mark.label } : undefined;
    return judge(verdict, true, aggregate(windows), ledger);
  }

  /** Targets that leave every plan also leave the ledger (setPlan); this drops the marks of a policy's targets now. */
  forget(targets: readonly TargetRef[]): void {
    for (const t of targets) this.marks.delete(targetKey(t));
  }
}
