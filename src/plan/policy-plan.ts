// Pure: one policy round's plan. For every target the policy manages, the steps from what is observed to what
// the policy wants; for every target it changed but no longer manages (deselected, skipped, taken by another
// policy, policy deleted), the steps that give its originals back. Audit prints this plan; Enforce executes
// exactly it (src/mitigation/executor.ts), so the two can never disagree.
import type { Annotations } from '../api/annotations.js';
import type { Assessment } from '../model/assessment.js';
import { lostRecordError } from '../model/lost-record.js';
import type { ClbFacts, TargetRef } from '../model/facts.js';
import { planL4Release, planL4Target } from './l4.js';
import type { RejectedCapabilities } from './l7-edits.js';
import { planL7Release, planL7Target, type ConfigView } from './l7.js';
import type { Ownership } from './ownership.js';
import { recordedFields } from './record.js';
import type { PolicyPlan, TargetPlan } from './steps.js';

/** What the planner knows of one target besides its assessment. */
export interface TargetView {
  annotations: Annotations;
  /** The target's entry in the registry (its record and the policy it belongs to). */
  ownership?: Ownership;
  clb?: ClbFacts;
  /** When `clb` was read (ms since the epoch). */
  observedAt?: number;
  /** L7: the TkeServiceConfig that governs the Ingress. */
  config?: ConfigView;
  /** Annotations loopguard's field manager wrote on the target (TargetFacts.setByLoopguard). */
  setByLoopguard?: Readonly<Record<string, string>>;
}

export interface ManagedTarget extends TargetView {
  assessment: Assessment;
}

export interface OrphanTarget extends TargetView {
  target: TargetRef;
  loadBalancerId?: string;
  /**
   * The object the record was made for is gone (deleted, or replaced by another of the same name): nothing on it
   * can be restored, and the new object's values must not be touched; the record is only forgotten.
   */
  stale?: boolean;
}

export interface PlanInput {
  owner: string;
  managed: readonly ManagedTarget[];
  orphans: readonly OrphanTarget[];
  rejected: RejectedCapabilities;
  now: Date;
  /** How long TKE gets to act on what it was asked (a TkeServiceConfig, pass-to-target, prevent-loopback's switch). */
  graceMs: number;
}

export function planTarget(input: Omit<PlanInput, 'managed' | 'orphans'>, t: ManagedTarget): TargetPlan {
  const plan = planManaged(input, t);
  // loopguard changed the target, yet no record says what (issue 22 #8): reported, never taken for "nothing to restore".
  const lost = plan.error ? undefined : lostRecordError({ ...t.assessment.target, annotations: t.annotations, setByLoopguard: t.setByLoopguard, hasRecord: t.ownership?.owner !== undefined, now: input.now });
  return lost ? { ...plan, error: lost } : plan;
}

function planManaged(input: Omit<PlanInput, 'managed' | 'orphans'>, t: ManagedTarget): TargetPlan {
  const a = t.assessment;
  const { record, owner } = t.ownership ?? {};
  const owned = record !== undefined && owner === input.owner;
  const base = { target: a.target, layer: a.target.kind === 'Service' ? ('L4' as const) : ('L7' as const), purpose: 'Mitigate' as const };
  if (a.target.kind === 'Service') {
    return {
      ...base,
      steps: planL4Target({
        assessment: a,
        annotations: t.annotations,
        ...(record ? { record } : {}),
        owned,
        now: input.now,
        graceMs: input.graceMs,
        ...(t.observedAt !== undefined ? { observedAt: t.observedAt } : {}),
      }),
    };
  }
  const l7 = planL7Target({
    assessment: a,
    annotations: t.annotations,
    ...(record ? { record } : {}),
    owned,
    ...(t.clb ? { clb: t.clb } : {}),
    ...(t.observedAt !== undefined ? { observedAt: t.observedAt } : {}),
    ...(t.config ? { config: t.config } : {}),
    rejected: input.rejected,
    now: input.now,
    graceMs: input.graceMs,
  });
  return { ...base, steps: l7.steps, ...(l7.error ? { error: l7.error } : {}) };
}

/** The release of one target this policy changed (empty steps: nothing of this policy's is left on it). */
export function planOrphan(input: Pick<PlanInput, 'owner' | 'now' | 'graceMs'>, o: OrphanTarget): TargetPlan {
  const owner = input.owner;
  const { record, owner: recorded } = o.ownership ?? {};
  const base = { target: o.target, layer: o.target.kind === 'Service' ? ('L4' as const) : ('L7' as const), purpose: 'Release' as const };
  if (!record || recorded !== owner) return { ...base, steps: [] };
  if (o.stale) return { ...base, steps: [{ kind: 'AnnotateTarget', set: {}, forget: recordedFields(record), drops: true, restore: true }] };
  if (o.target.kind === 'Service') return { ...base, steps: planL4Release(record, o.annotations, o.loadBalancerId) };
  const l7 = planL7Release({
    record,
    annotations: o.annotations,
    name: o.target.name,
    now: input.now,
    graceMs: input.graceMs,
    ...(o.observedAt !== undefined ? { observedAt: o.observedAt } : {}),
    ...(o.clb ? { clb: o.clb } : {}),
    ...(o.config ? { config: o.config } : {}),
  });
  return { ...base, steps: l7.steps };
}

export function planPolicy(input: PlanInput): PolicyPlan {
  return {
    owner: input.owner,
    targets: input.managed.map((t) => planTarget(input, t)),
    releases: input.orphans.map((o) => planOrphan(input, o)).filter((p) => p.steps.length > 0),
  };
}
