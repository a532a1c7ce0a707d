// Per-target outcomes → LoopbackPolicy.status: counts, a bounded target list, kstatus conditions (docs/diagnosis.md §8).
// Targets Pending on TKE do not hold Ready back: loopguard has nothing to do until TKE acts, and the informer brings
// them back when it does. Reconciling and Stalled are "abnormal-true": removed when false (cli-utils pkg/kstatus).
import { describeChange } from './desired-state.js';
import { alternativeText } from './topology.js';
import type { Assessment } from './assessment-result.js';
import type { ClusterProfile } from './cluster-profile.js';
import { CONDITION_READY, CONDITION_RECONCILING, CONDITION_STALLED, removeStatusCondition, setStatusCondition, toMetaTime, type Condition } from '../api/conditions.js';
import { MAX_STATUS_TARGETS, type ClusterProfileStatus, type LoopbackPolicyStatus, type PolicyMode, type TargetStatus, type VerdictCounts } from '../api/loopbackpolicy.js';
import { ReadyReason, ReconcilingReason, type ErrorReason } from '../api/reasons.js';
import { printable } from '../api/text.js';
import { countsSummary, countVerdicts, SEVERITY } from './verdict-counts.js';

export interface TargetError {
  /** For permanent errors a StalledReason (e.g. PermissionDenied). */
  reason: ErrorReason;
  message: string;
  /** Permanent = retrying cannot help (permissions, invalid request); transient = throttling, timeouts. */
  permanent: boolean;
}

export interface TargetOutcome {
  assessment: Assessment;
  error?: TargetError;
  /** The plan's steps still to carry out (src/plan), described; without it the assessment's changes stand in. */
  plan?: readonly string[];
  /** Audit only: the target keeps changes this policy made in Enforce (docs/execution.md "Mode switch"). */
  held?: boolean;
  /** What the probe agents measured, next to the verdict (src/probe/evidence.ts); only for policies that probe. */
  measured?: string;
}

/** A target the policy changed but no longer manages, with the steps that give its originals back. */
export interface ReleaseOutcome {
  kind: TargetStatus['kind'];
  namespace?: string;
  name: string;
  plan: readonly string[];
  error?: TargetError;
  /** The release waits for TKE; what for, as the executor says it (e.g. "waiting 8 s for kube-proxy …"). */
  waiting?: string;
}

export interface PolicyStatusInput {
  generation?: number;
  mode: PolicyMode;
  profile?: ClusterProfile | ClusterProfileStatus;
  outcomes: readonly TargetOutcome[];
  previousConditions?: readonly Condition[];
  releases?: readonly ReleaseOutcome[];
  now: Date;
  maxTargets?: number;
  /**
   * A cluster policy's: whether a namespace is in Enforce (else `mode` for all); only enforced targets make the policy
   * Stalled or Reconciling. Given, targets and releases carry their namespace and sort by it after severity.
   */
  enforcedIn?: (namespace: string) => boolean;
}

/** The CRD's bounds (maxItems, maxLength) of status.targets[], status.releases and status.targetsNote. */
export const MAX_PLAN_LINES = 32;
export const MAX_ALTERNATIVES = 6;
const MAX = { releases: 32, message: 1024, measured: 512, planLine: 256, alternative: 512, loadBalancerId: 64, targetsNote: 256 } as const;
/** Bytes (as JSON) status.targets and status.releases may take: the counts alone allow 1.2 MiB, near etcd's 1.5 MiB (§8). */
const MAX_BYTES = { targets: 320 * 1024, releases: 64 * 1024 } as const;

// Every text in status that speaks of a target (its message, plan lines, alternatives, id; the examples a condition
// names) goes through printable (api/text.ts): they may quote annotations anyone with `edit` on a target can write.

/** Plan lines as status shows them: at most MAX_PLAN_LINES, each clipped (exported for tests that compare logs). */
export function planLines(lines: readonly string[]): string[] {
  const plan = lines.slice(0, MAX_PLAN_LINES).map((l) => printable(l, MAX.planLine));
  if (lines.length > MAX_PLAN_LINES) plan[MAX_PLAN_LINES - 1] = `... and ${lines.length - MAX_PLAN_LINES + 1} more steps`;
  return plan;
}

/** "3 steps", "1 target" */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
/** Steps still planned for a target: the plan's when it has one, else the assessment's changes. */
const stepCount = (o: TargetOutcome) => o.plan?.length ?? o.assessment.changes.length;
const label = (o: TargetOutcome) => `${o.assessment.target.kind}/${o.assessment.target.name}`;

/** What a target under Audit that keeps Enforce's changes is told (docs/execution.md "Mode switch"). */
const HELD_NOTE =
  '(Audit: loopguard keeps the changes it made in Enforce and puts them back if they drift, but makes no new ones; to restore its originals, delete the policy (revertOnDelete) or deselect the target in Enforce mode.)';

export function targetStatusOf(outcome: TargetOutcome): TargetStatus {
  const a = outcome.assessment;
  const base = outcome.held ? `${a.rootCause.message} ${HELD_NOTE}` : a.rootCause.message;
  const message = outcome.error ? `${base} Last error (${outcome.error.reason}): ${outcome.error.message}` : base;
  const plan = planLines(outcome.plan ?? a.changes.map(describeChange));
  return {
    kind: a.target.kind, name: a.target.name, verdict: a.verdict, rootCause: a.rootCause.id,
    ...(a.mitigations.length > 0 ? { mitigations: [...a.mitigations] } : {}),
    ...(plan.length > 0 ? { plan } : {}),
    ...(a.alternatives.length > 0 ? { alternatives: a.alternatives.slice(0, MAX_ALTERNATIVES).map((x) => printable(alternativeText(x), MAX.alternative)) } : {}),
    message: printable(message, MAX.message),
    ...(outcome.measured ? { measured: printable(outcome.measured, MAX.measured) } : {}),
    // The id comes from an annotation anyone with edit on the target can write: clip it to the CRD's bound so one
    // bad value can never make the whole status write fail (422) and freeze the policy.
    ...(a.loadBalancerId ? { loadBalancerId: printable(a.loadBalancerId, MAX.loadBalancerId) } : {}),
  };
}

/** The leading entries that fit in `bytes` as JSON (each entry counted with its separating comma). */
function withinBytes<T>(items: readonly T[], bytes: number): T[] {
  let used = 2;
  const out: T[] = [];
  for (const item of items) {
    used += JSON.stringify(item).length + 1;
    if (used > bytes) break;
    out.push(item);
  }
  return out;
}

/** Where every target's detail is when status.targets shows only some (docs/diagnosis.md "Target list"). */
const EVERY_TARGET = "every target's verdict: `loopguard doctor`, the loopguard_target_risk metric, Events on each target";

/** "Service/a: msg; Ingress/b: msg; Service/c: msg (and 3 more)" */
function examples(items: readonly { who: string; text: string }[]): string {
  const shown = items.slice(0, 3).map((i) => `${i.who}: ${printable(i.text, MAX.message)}`);
  return shown.join('; ') + (items.length > 3 ? ` (and ${items.length - 3} more)` : '');
}

type Reasoned = Pick<Condition, 'reason' | 'message'>;

/** What a policy's conditions say: Ready, and Reconciling and Stalled when they are true. */
interface PolicyConditions {
  ready: Reasoned & Pick<Condition, 'status'>;
  reconciling?: Reasoned;
  stalled?: Reasoned;
}

/** Sets Ready, then the abnormal-true Reconciling and Stalled: True when given, removed otherwise. */
export function policyConditions(previous: readonly Condition[] | undefined, c: PolicyConditions, generation: number | undefined, now: Date): Condition[] {
  const gen = generation !== undefined ? { observedGeneration: generation } : {};
  let conditions = setStatusCondition(previous, { type: CONDITION_READY, ...c.ready, ...gen }, now).conditions;
  for (const [type, value] of [[CONDITION_RECONCILING, c.reconciling], [CONDITION_STALLED, c.stalled]] as const) {
    conditions = value ? setStatusCondition(conditions, { type, status: 'True', ...value, ...gen }, now).conditions : removeStatusCondition(conditions, type).conditions;
  }
  return conditions;
}

/**
 * Why a target cannot be (or was not) mitigated, as the policy's conditions see it: its own error from the last
 * reconcile, else (Enforce only) the first blocker that keeps loopguard from trying, e.g. a missing capability.
 */
export function targetProblem(outcome: TargetOutcome, enforce: boolean): string | undefined {
  return outcome.error?.reason ?? (enforce ? outcome.assessment.blockers[0]?.reason : undefined);
}

/** "applying 3 steps to 2 targets" */
function steps(outcomes: readonly TargetOutcome[], to: string): string {
  return `${count(outcomes.reduce((n, o) => n + stepCount(o), 0), 'step')} ${to} ${count(outcomes.length, 'target')}`;
}

/** Ready's message under Audit: what Enforce would do, what needs a fix first, which targets keep Enforce's changes. */
function auditText(outcomes: readonly TargetOutcome[], found: string): string {
  const planned = outcomes.filter((o) => stepCount(o) > 0);
  const held = outcomes.filter((o) => o.held).length;
  return (
    `${held > 0 ? 'diagnosis complete (Audit)' : 'diagnosis complete, nothing changed (Audit)'}: ${found}` +
    (planned.length > 0 ? `; Enforce mode would carry out ${steps(planned, 'on')} (see status.targets[].plan)` : '; nothing to change') +
    (outcomes.some((o) => o.assessment.blockers.length > 0) ? '; some mitigations need a ticket or a fix first (see targets)' : '') +
    (held > 0 ? `; ${count(held, 'target')} keep the changes made in Enforce (Audit corrects them if they drift back, makes no new ones; to restore them, delete the policy (revertOnDelete) or deselect the targets in Enforce mode)` : '')
  );
}

function evaluate(input: PolicyStatusInput, counts: VerdictCounts, shown: number): PolicyConditions {
  const { outcomes } = input;
  const enforce = input.mode === 'Enforce';
  const summary = countsSummary(counts);
  const enforced = (o: TargetOutcome) => (input.enforcedIn ? input.enforcedIn(o.assessment.target.namespace) : enforce);

  // --- Stalled
  // A permanent error needs a human in any mode (Audit reads CLBs and keeps held changes too: CAM can deny either). A
  // release that cannot be carried out needs one as much as a target that cannot be mitigated. Without one, the
  // blockers of enforced targets.
  const permanent = [
    ...outcomes.flatMap((o) => (o.error?.permanent ? [{ who: label(o), reason: o.error.reason, text: o.error.message }] : [])),
    ...(input.releases ?? []).flatMap((r) => (r.error?.permanent ? [{ who: `${r.kind}/${r.name} (release)`, reason: r.error.reason, text: r.error.message }] : [])),
  ];
  const blocked = outcomes.flatMap((o) => (enforced(o) ? o.assessment.blockers.map((b) => ({ who: label(o), reason: b.reason, text: b.message })) : []));
  const problems = permanent.length > 0 ? permanent : blocked;
  const stalled = problems[0] && { reason: problems[0].reason, message: examples(problems) };

  // --- Reconciling; ClbNotObserved is the one Pending cause that is loopguard's own unfinished work (the rest wait on TKE).
  const retrying = outcomes.filter((o) => o.error && !o.error.permanent);
  const applying = outcomes.filter((o) => enforced(o) && stepCount(o) > 0 && o.assessment.blockers.length === 0 && !o.error?.permanent);
  const observing = outcomes.filter((o) => o.assessment.rootCause.id === 'ClbNotObserved');
  const reconciling: Reasoned | undefined = stalled
    ? undefined
    : retrying.length > 0
      ? { reason: ReconcilingReason.RetryingAfterError, message: `retrying after transient errors: ${examples(retrying.map((o) => ({ who: label(o), text: (o.error as TargetError).message })))}` }
      : applying.length > 0
        ? { reason: ReconcilingReason.ApplyingChanges, message: `applying ${steps(applying, 'to')}; ${summary}` }
        : observing.length > 0
          ? { reason: ReconcilingReason.Observing, message: `reading the CLB of ${observing.length} target(s); ${summary}` }
          : undefined;

  // --- Ready
  const atRisk = outcomes.filter((o) => o.assessment.verdict === 'AtRisk');
  const riskText = atRisk.length > 0 ? `; at risk: ${examples(atRisk.map((o) => ({ who: label(o), text: o.assessment.rootCause.id })))}` : '';
  const waiting = counts.pending > 0 ? `; ${counts.pending} waiting for TKE to assign a CLB or listeners` : '';
  let ready: PolicyConditions['ready'];
  if (stalled) ready = { status: 'False', ...stalled };
  else if (reconciling) ready = { status: 'False', reason: ReadyReason.Progressing, message: reconciling.message };
  else if (!enforce) ready = { status: 'True', reason: ReadyReason.AuditComplete, message: auditText(outcomes, `${summary}${riskText}`) + waiting };
  else if (atRisk.length > 0) ready = { status: 'True', reason: ReadyReason.ReconciledWithRisks, message: `${summary}${riskText}; see status.targets for what to do${waiting}` };
  else ready = { status: 'True', reason: ReadyReason.Reconciled, message: `${summary}${waiting}` };
  // With a truncated list, Ready (what `kubectl describe` shows first) says where the rest is.
  if (shown < counts.total) ready = { ...ready, message: `${ready.message}; status.targets shows the ${shown} most severe of ${counts.total} (${EVERY_TARGET})` };
  return { ...(stalled ? { stalled } : {}), ...(reconciling ? { reconciling } : {}), ready };
}

/** Builds the full status from scratch (conditions keep their lastTransitionTime across calls). */
export function buildPolicyStatus(input: PolicyStatusInput): LoopbackPolicyStatus {
  const max = input.maxTargets ?? MAX_STATUS_TARGETS;
  const counts = countVerdicts(input.outcomes.map((o) => o.assessment));
  // Sorted on the assessment, rendered only for the entries shown: a round of 12,000 targets renders 100.
  const ns = input.enforcedIn !== undefined;
  const sorted = [...input.outcomes].sort(
    ({ assessment: a }, { assessment: b }) =>
      SEVERITY[a.verdict] - SEVERITY[b.verdict] ||
      (ns ? a.target.namespace.localeCompare(b.target.namespace) : 0) ||
      a.target.kind.localeCompare(b.target.kind) ||
      a.target.name.localeCompare(b.target.name),
  );
  const targets = withinBytes(
    sorted.slice(0, max).map((o) => (ns ? { namespace: o.assessment.target.namespace, ...targetStatusOf(o) } : targetStatusOf(o))),
    MAX_BYTES.targets,
  );
  const truncated = input.outcomes.length > targets.length;
  const releases = (input.releases ?? []).slice(0, MAX.releases).map((r) => ({
    ...(ns && r.namespace !== undefined ? { namespace: r.namespace } : {}),
    kind: r.kind,
    name: r.name,
    plan: planLines(r.plan),
    ...(r.error ? { message: printable(`${r.error.reason}: ${r.error.message}`, MAX.message) } : {}),
  }));
  return {
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    conditions: policyConditions(input.previousConditions, evaluate(input, counts, targets.length), input.generation, input.now),
    ...(input.profile ? { clusterProfile: profileProjection(input.profile) } : {}),
    counts,
    targets,
    targetsTruncated: truncated,
    ...(releases.length > 0 ? { releases: withinBytes(releases, MAX_BYTES.releases) } : {}),
    ...(truncated
      ? { targetsNote: printable(`showing ${targets.length} of ${input.outcomes.length} targets, most severe first; counts cover all of them; ${EVERY_TARGET}`, MAX.targetsNote) }
      : {}),
    lastEvaluatedTime: toMetaTime(input.now),
  };
}

/** The status at the start of a generation: Ready=Unknown so kstatus does not report Current early. */
export function initialPolicyStatus(generation: number, previousConditions: readonly Condition[] | undefined, now: Date): LoopbackPolicyStatus {
  const ready = { status: 'Unknown' as const, reason: ReadyReason.Initializing, message: 'evaluating the policy' };
  const reconciling = { reason: ReconcilingReason.NewGeneration, message: `evaluating generation ${generation}` };
  return { observedGeneration: generation, conditions: policyConditions(previousConditions, { ready, reconciling }, generation, now) };
}

/** The cluster profile as status (and the CLI's reports) show it. */
export function profileProjection(p: ClusterProfile | ClusterProfileStatus): ClusterProfileStatus {
  return {
    kubeProxyMode: p.kubeProxyMode,
    ...(p.kubeProxyVersion !== undefined ? { kubeProxyVersion: p.kubeProxyVersion } : {}),
    preventLoopbackSupported: p.preventLoopbackSupported,
    ...(p.vipBinding !== undefined ? { vipBinding: p.vipBinding } : {}),
    ...(p.upgradeTo !== undefined ? { upgradeTo: p.upgradeTo } : {}),
    source: p.source,
    ...(p.message ? { message: printable(p.message, MAX.message) } : {}),
  };
}
