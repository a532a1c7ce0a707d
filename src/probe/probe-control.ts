// The operator's side of the probe (docs/probe.md §11), as the policy controller and the work queue see it:
//  - the plan is the work queue's own key (PROBE_PLAN_KEY), built from what every live probing policy manages now,
//    read from the caches (`selections`, the same targets the policies' rounds plan), and written only when its text
//    differs (plan-store.ts). A policy's round queues the key (`changed`) while anything probes: whatever a round sees
//    change may change the plan. Being read from the caches, the plan never waits for rounds and never holds some policies without others.
//  - a round's outcomes get their measured evidence (`annotate`): the line status.targets[].measured shows, the
//    MeasuredLoopback condition, and a Warning Event on a target whose measurement contradicts its verdict. This
//    only adds words to what the round decided: no plan, step or write depends on it.
import { involvedObject } from '../api/loopbackpolicy.js';
import type { Verdict } from '../api/loopbackpolicy.js';
import { targetKey, type TargetRef } from '../model/facts.js';
import type { ReconcileOutcome } from '../runtime/work-queue.js';
import type { OwnerKey } from '../model/record-registry.js';
import type { EventRecorder } from '../kube/events.js';
import { figures, measuredCondition, renderJudgement, type Judgement, type MeasuredCondition } from './evidence.js';
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
  /** What every live policy that probes manages now, by owner key (targets.ts `probeSelections`). */
  selections: () => ReadonlyMap<OwnerKey, ProbeSelection>;
  events: Pick<EventRecorder, 'record'>;
  logger: { warn(message: string, meta?: Record<string, unknown>): void };
  /** The plan's window (--probe-window); default PLAN_WINDOW_SECONDS. */
  windowSeconds?: number;
}

export class ProbeControl {
  /** The selections the plan was last built from: a policy's targets leave the evidence when the policy goes. */
  private planned: ReadonlyMap<OwnerKey, ProbeSelection> = new Map();
  /** The plan's text as last stored and handed to the evidence (undefined: none yet in this process). */
  private applied: string | undefined;
  /** Whether the plan a previous leader stored was read. */
  private read = false;
  /** Per target, the nodes of the contradiction its last Event named: one Event per change, not one per round. */
  private readonly contradicted = new Map<string, string>();

  constructor(private readonly o: ProbeControlOptions) {}

  /**
   * A policy's round saw a change (of the policy, its targets or their claims): the plan is built again, when the
   * policy probes or the plan has entries to keep or drop. A cluster that probes nothing queues no work for it.
   */
  changed(probes: boolean): void {
    if (probes || this.planned.size > 0) this.o.queue.add(PROBE_PLAN_KEY);
  }

  /** A policy gone: the marks its targets had in the evidence, and the plan without them. */
  forget(owner: OwnerKey): void {
    const s = this.planned.get(owner);
    if (s) {
      this.o.evidence.forget(s.targets);
      for (const t of s.targets) this.contradicted.delete(targetKey(t));
    }
    this.o.queue.add(PROBE_PLAN_KEY);
  }

  /** The queue's handler for PROBE_PLAN_KEY: write the plan if it differs. A failed write throws (the queue retries). */
  async reconcile(): Promise<ReconcileOutcome | void> {
    this.planned = new Map(this.o.selections());
    const { plan, probes, dropped, left } = buildProbePlan(this.planned.values(), this.o.windowSeconds);
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
