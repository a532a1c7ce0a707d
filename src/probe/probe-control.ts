// The operator's side of the probe (docs/probe.md §11), as the policy controller and the work queue see it:
//  - each policy round hands over what it manages (`select`); the plan is the work queue's own key (PROBE_PLAN_KEY),
//    built from every policy's last selection and written only when its text differs (plan-store.ts). Until every
//    policy has handed over once (a new process), the key waits: a plan of some policies would drop the others'
//    entries from every agent for a window.
//  - a round's outcomes get their measured evidence (`annotate`): the line status.targets[].measured shows, the
//    MeasuredLoopback condition, and a Warning Event on a target whose measurement contradicts its verdict. This
//    only adds words to what the round decided: no plan, step or write depends on it.
import { involvedObject } from '../api/loopbackpolicy.js';
import type { ProbeSpec, Verdict } from '../api/loopbackpolicy.js';
import { setStatusCondition, removeStatusCondition, type Condition } from '../api/conditions.js';
import { targetKey, type TargetFacts, type TargetRef } from '../model/facts.js';
import type { ReconcileOutcome } from '../runtime/work-queue.js';
import type { OwnerKey } from '../model/record-registry.js';
import type { EventRecorder } from '../kube/events.js';
import { CONDITION_MEASURED_LOOPBACK, figures, measuredCondition, renderJudgement, type Judgement, type MeasuredCondition } from './evidence.js';
import type { EvidenceStore } from './evidence-store.js';
import { buildProbePlan, type ProbeSelection } from './plan-builder.js';
import { parsePlan, PRIVATE_RANGES, parseCidr } from './plan.js';
import type { PlanStore, StoredPlan } from './plan-store.js';
import { kubeStatus } from '../runtime/kube-errors.js';

/** The work queue's key of the plan (no owner key or `Report/` key looks like it). */
export const PROBE_PLAN_KEY = 'ProbePlan';
/** The Warning Event's reason on a target whose measurement contradicts its verdict. */
export const MEASURED_LOOPBACK_REASON = 'MeasuredLoopback';

/** What the policy controller reports per target: its verdict (and namespace, for "since Enforce"). */
export interface JudgedOutcome {
  assessment: { target: TargetRef; verdict: Verdict };
  measured?: string;
}

export interface ProbeControlOptions {
  store: Pick<PlanStore, 'read' | 'sync'>;
  evidence: EvidenceStore;
  queue: { add(key: string): void };
  /** Every policy that exists now and is not being deleted, by owner key. */
  owners: () => readonly OwnerKey[];
  events: Pick<EventRecorder, 'record'>;
  logger: { warn(message: string, meta?: Record<string, unknown>): void };
  /** The plan's window (--probe-window); default PLAN_WINDOW_SECONDS. */
  windowSeconds?: number;
  now?: () => number;
}

/** How long the plan waits for every policy's first round before it is written with those that have had one. */
export const HANDOVER_WAIT_MS = 120_000;

export class ProbeControl {
  private readonly selections = new Map<OwnerKey, ProbeSelection>();
  /** Owners forgotten while the cache may still list them (a deleted policy until its last event arrives). */
  private readonly gone = new Set<OwnerKey>();
  /** The plan's text as last stored and handed to the evidence (undefined: none yet in this process). */
  private applied: string | undefined;
  /** Since when the plan has waited for a policy's first round (undefined: none awaited). */
  private awaitingSince: number | undefined;
  /** Whether the plan a previous leader stored was read. */
  private read = false;
  /** Per target, the nodes of the contradiction its last Event named: one Event per change, not one per round. */
  private readonly contradicted = new Map<string, string>();

  constructor(private readonly o: ProbeControlOptions) {}

  /** A policy's round: its `probe:` and the targets it manages now (every policy, probing or not, hands over). */
  select(owner: OwnerKey, probe: Required<ProbeSpec>, targets: readonly TargetFacts[]): void {
    this.selections.set(owner, { probe, targets: probe.enabled ? targets : [] });
    this.gone.delete(owner);
    this.o.queue.add(PROBE_PLAN_KEY);
  }

  forget(owner: OwnerKey): void {
    const s = this.selections.get(owner);
    this.gone.add(owner);
    if (!s) return;
    this.selections.delete(owner);
    this.o.evidence.forget(s.targets);
    for (const t of s.targets) this.contradicted.delete(targetKey(t));
    this.o.queue.add(PROBE_PLAN_KEY);
  }

  /**
   * The queue's handler for PROBE_PLAN_KEY: write the plan if it differs. A failed write throws (the queue retries).
   * It waits for every policy's round (a plan of some policies would take the others' targets off every agent for a
   * window), but not for ever: a policy whose rounds keep failing must not hold the others' plan back, so after
   * HANDOVER_WAIT_MS the plan is written with what has been handed over, and the awaited policies are logged.
   */
  async reconcile(): Promise<ReconcileOutcome | void> {
    const owners = this.o.owners();
    for (const g of this.gone) if (!owners.includes(g)) this.gone.delete(g);
    const awaited = owners.filter((o) => !this.selections.has(o) && !this.gone.has(o));
    const now = (this.o.now ?? Date.now)();
    if (awaited.length === 0) this.awaitingSince = undefined;
    else {
      this.awaitingSince ??= now;
      const left = this.awaitingSince + HANDOVER_WAIT_MS - now;
      if (left > 0) return { requeueAfterMs: left };
      this.o.logger.warn('Writing the probe plan without the policies that have not finished a round', { awaited: awaited.slice(0, 5), count: awaited.length });
    }
    const { plan, probes, dropped, left } = buildProbePlan(this.selections.values(), this.o.windowSeconds);
    const text = JSON.stringify(plan);
    if (text === this.applied) return;
    if (!this.read) {
      // The plan a previous leader wrote: reports of it still count for the entries the new plan keeps.
      let before: StoredPlan | undefined;
      try {
        before = await this.o.store.read();
      } catch (err) {
        // Nothing to probe and no right to read the plan (a Role older than the probe): nothing to write either.
        if (plan.targets.length === 0 && kubeStatus(err) === 403) {
          this.applied = text;
          return;
        }
        throw err;
      }
      const parsed = before ? parsePlan(before.text, { ranges: PRIVATE_RANGES.map((r) => parseCidr(r)!) }) : undefined;
      if (before && parsed?.ok) this.o.evidence.remember(before.version, parsed.plan.targets);
      this.read = true;
    }
    if (dropped > 0) this.o.logger.warn('The probe plan is full: targets left out (docs/probe.md §7)', { planned: probes.length, dropped, targetsLeft: left.length });
    const written = await this.o.store.sync(text, plan.targets.length > 0);
    if (written) this.o.evidence.setPlan(written.version, plan.windowSeconds, probes, left);
    this.applied = text;
  }

  /**
   * The outcomes with their measured line (probing policies only), the MeasuredLoopback condition, and a Warning
   * Event on each target whose measurement contradicts its verdict. `enforced`: whether a target's namespace is in Enforce.
   */
  async annotate<T extends JudgedOutcome>(probing: boolean, outcomes: readonly T[], enforced: (namespace: string) => boolean): Promise<{ outcomes: (T & { measured?: string })[]; condition?: MeasuredCondition }> {
    if (!probing) return { outcomes: [...outcomes] };
    const judged: { who: string; judgement: Judgement; target: TargetRef }[] = [];
    const out = outcomes.map((o) => {
      const t = o.assessment.target;
      // A target another policy manages is judged (and its ledger kept) by that policy's round.
      if (o.assessment.verdict === 'Conflict') return { ...o };
      const judgement = this.o.evidence.judge(t, o.assessment.verdict, enforced(t.namespace));
      judged.push({ who: `${t.kind}/${t.namespace}/${t.name}`, judgement, target: t });
      return { ...o, measured: renderJudgement(judgement) };
    });
    for (const { judgement, target: t } of judged) {
      const k = targetKey(t);
      if (judgement.kind !== 'contradiction') {
        this.contradicted.delete(k);
        continue;
      }
      const nodes = judgement.latest!.nodes.join(',');
      if (this.contradicted.get(k) === nodes) continue;
      this.contradicted.set(k, nodes);
      await this.o.events.record(
        involvedObject(t),
        'Warning',
        MEASURED_LOOPBACK_REASON,
        `loopguard calls this ${t.kind} ${judgement.verdict}, but the probe measured ${figures(judgement.latest!)} over a full window: calls to its CLB VIP from these nodes fail or stall (docs/probe.md)`,
      );
    }
    const condition = measuredCondition(judged);
    return { outcomes: out, ...(condition ? { condition } : {}) };
  }
}

/** The policy's conditions with MeasuredLoopback set (or removed when the policy probes nothing). */
export function withMeasuredCondition(conditions: readonly Condition[], condition: MeasuredCondition | undefined, now: Date, observedGeneration?: number): Condition[] {
  if (!condition) return removeStatusCondition([...conditions], CONDITION_MEASURED_LOOPBACK).conditions;
  return setStatusCondition(conditions, { type: CONDITION_MEASURED_LOOPBACK, ...condition, ...(observedGeneration !== undefined ? { observedGeneration } : {}) }, now).conditions;
}
