// The last stage of a policy's round (policy-controller.ts): status, Events on targets whose verdict changed and the
// per-target gauges, each written only when it differs; and, when shutdown stops a round, where it stopped.
import { involvedObject, type LoopbackPolicyStatus } from '../../api/loopbackpolicy.js';
import type { ClusterLoopbackPolicyStatus } from '../../api/clusterloopbackpolicy.js';
import { readSkip, LoopguardAnnotation } from '../../api/annotations.js';
import { buildClusterPolicyStatus } from '../../model/cluster-status.js';
import { EventReason, type EventReasonValue } from '../../api/reasons.js';
import type { RootCauseId } from '../../model/root-causes.js';
import { targetKey } from '../../model/facts.js';
import { buildPolicyStatus, targetProblem, type TargetOutcome } from '../../model/status.js';
import type { Assessment } from '../../model/assessment-result.js';
import type { Execution } from '../../mitigation/executor.js';
import { describeStep } from '../../plan/steps.js';
import { describeOwner } from '../../model/record-registry.js';
import type { PolicyControllerOptions } from './deps.js';
import { sameStatus } from '../../kube/status-writer.js';
import type { RoundResult } from './round.js';
import { asksForDns, subjectRef, targetsForPolicyEvent, type PolicySubject } from './subject.js';
import type { PolicyTargets } from './targets.js';
import { CONDITION_MEASURED_LOOPBACK, type MeasuredCondition } from '../../probe/evidence.js';
import { CONDITION_IN_CLUSTER_DNS } from '../../model/dns-check.js';
import { withCondition } from '../../api/conditions.js';

/** Targets named in a RoundInterrupted Event (the log line names all of them). */
const MAX_STOPPED_SHOWN = 5;

/** A Conflict's Event reason by its root cause; any other conflict is a PolicyConflict. */
const CONFLICT_EVENTS: Readonly<Partial<Record<RootCauseId, EventReasonValue>>> = { ForeignClb: EventReason.ForeignClb, SharedConfig: EventReason.SharedConfig, SharedEnvoyProxy: EventReason.SharedEnvoyProxy, SharedClb: EventReason.SharedClb, PolicyPrecedence: EventReason.PolicyPrecedence };

/** A policy's assessments as its Events last reported them (PolicyState), by targetKey: the outcomes' own objects (a
 * string per target built from the verdict and cause was 0.4 MiB at 3,000 targets). Replaced by each round. */
type Reported = { verdicts?: Map<string, Assessment> };

export class PolicyPublisher {
  constructor(private readonly o: PolicyControllerOptions) {}

  /** Status and Events from the outcomes, each written only when it differs from what is there. */
  async publish(policy: PolicySubject, previous: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus | undefined, targets: PolicyTargets, outcomes: TargetOutcome[], releases: RoundResult['releases'], reported: Reported, measured?: MeasuredCondition): Promise<void> {
    const common = {
      generation: policy.metadata.generation ?? 0,
      profile: this.o.profile(),
      outcomes,
      releases,
      previousConditions: previous?.conditions,
      now: new Date(),
    };
    const status =
      policy.namespace === undefined
        ? buildClusterPolicyStatus({ ...common, namespaces: targets.namespaces, excluded: targets.excluded, ...(this.o.reports ? { reports: this.o.reports.names } : {}) })
        : buildPolicyStatus({ ...common, mode: policy.spec.mode });
    // What the probe measured (PolicyController.remember): words only, decided nothing above.
    if (this.o.probe) status.conditions = withCondition(status.conditions, CONDITION_MEASURED_LOOPBACK, measured, common.now, common.generation);
    // l7.inClusterDNS: Managed: the condition as the DNS rules' unit last checked it (dns-rules.ts).
    status.conditions = withCondition(status.conditions, CONDITION_IN_CLUSTER_DNS, asksForDns(policy) ? this.o.dns?.condition(policy.owner) : undefined, common.now, common.generation);
    if (!sameStatus(previous, status)) await this.o.statusWriter.apply(policy.namespace, policy.name, status);
    await this.events(policy, outcomes, targets, reported);
  }

  /** Events on targets when their verdict changes, and the per-target risk and error gauges. */
  private async events(policy: PolicySubject, outcomes: readonly TargetOutcome[], targets: PolicyTargets, reported: Reported): Promise<void> {
    const enforcingIn = (ns: string) => this.o.executor !== undefined && (targets.namespaces.get(ns) ?? policy.spec.mode) === 'Enforce';
    this.o.metrics.reportTargets(
      policy.namespace ?? '',
      policy.namespace === undefined ? policy.owner : policy.name,
      outcomes.map((o) => {
        const t = o.assessment.target;
        const problem = targetProblem(o, enforcingIn(t.namespace));
        return { namespace: t.namespace, kind: t.kind, name: t.name, verdict: o.assessment.verdict, ...(problem ? { error: problem } : {}) };
      }),
    );
    const by = `(${describeOwner(policy.owner)})`;
    const ignoresSkip = policy.cluster?.skipAnnotation === 'Ignore';
    // Only a cluster policy that ignores loopguard.dev/skip reads its targets' own annotations here.
    const mine = ignoresSkip ? new Map(targets.mine.map((m) => [targetKey(m.facts), m.facts])) : undefined;
    const before = reported.verdicts ?? new Map<string, Assessment>();
    const after = new Map<string, Assessment>();
    reported.verdicts = after;
    for (const { assessment: a } of outcomes) {
      const t = a.target;
      const involved = involvedObject(t);
      // True in every round until someone fixes it: one Event per problem, not one write per round.
      for (const w of a.warnings) await this.o.events.recordStanding(involved, 'Warning', EventReason.InvalidAnnotation, w);
      if (ignoresSkip && a.verdict !== 'Conflict') {
        const own = mine?.get(targetKey(t));
        if (own?.annotations?.[LoopguardAnnotation.Skip] !== undefined && readSkip(own.annotations, t.kind, { ignoreOwn: true }).skipped === undefined) {
          await this.o.events.recordStanding(involved, 'Normal', EventReason.SkipAnnotationIgnored, `${LoopguardAnnotation.Skip} has no effect: ${describeOwner(policy.owner)} sets skipAnnotation: Ignore, so the platform team's policy manages this ${t.kind} whatever the annotation says`);
        }
      }
      const memo = targetKey(t);
      // A Mitigated target whose cause is refined (the first read after Enforce learns that kube-proxy now binds
      // the VIP) had its Event at the transition: one per change of verdict. A problem's Event names its cause.
      const last = before.get(memo);
      after.set(memo, a);
      if (last && last.verdict === a.verdict && (a.verdict === 'Mitigated' || last.rootCause.id === a.rootCause.id)) continue;
      if (a.verdict === 'AtRisk') {
        await this.o.events.record(involved, 'Warning', EventReason.TargetAtRisk, `${a.rootCause.id}: ${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Conflict') {
        await this.o.events.record(involved, 'Warning', CONFLICT_EVENTS[a.rootCause.id] ?? EventReason.PolicyConflict, `${a.rootCause.message} ${by}`);
      } else if (a.verdict === 'Mitigated') {
        await this.o.events.record(involved, 'Normal', EventReason.TargetMitigated, `${a.rootCause.message} ${by}`);
      }
    }
  }

  /**
   * Where shutdown left the policy's round: one log line and an Event on the policy. `graceOver`: the grace
   * period ended with the round still running (steps in flight were aborted); otherwise shutdown began and the
   * round started no further step. Either way the next leader plans again from what the CLB and targets show.
   */
  async reportStopped(policy: PolicySubject, stopped: readonly Execution[], graceOver: boolean, notReached = 0): Promise<void> {
    const stepOf = (e: Execution) => (e.stopped ? `"${describeStep(e.stopped.step)}" (${e.stopped.inFlight ? 'in flight' : 'not started'})` : 'its next step');
    const at = stopped.map((e) => `${e.plan.target.kind} ${e.plan.target.namespace}/${e.plan.target.name} at ${stepOf(e)}`);
    this.o.logger.warn('Round stopped by shutdown', {
      policy: policy.owner,
      graceOver,
      targets: stopped.map((e) => `${e.plan.target.kind}/${e.plan.target.namespace}/${e.plan.target.name}`),
      at,
      ...(notReached > 0 ? { notReached } : {}),
    });
    // A cluster policy's Event counts the targets (subject.ts targetsForPolicyEvent); each stopped target's own Event says where.
    const shown =
      (policy.namespace === undefined
        ? stopped.length > 0
          ? targetsForPolicyEvent(policy, stopped.map((e) => e.plan.target))
          : ''
        : at.slice(0, MAX_STOPPED_SHOWN).join('; ') + (at.length > MAX_STOPPED_SHOWN ? `; and ${at.length - MAX_STOPPED_SHOWN} more target(s)` : '')) +
      (notReached > 0 ? `${stopped.length > 0 ? '; ' : ''}${notReached} target(s) not reached yet` : '');
    const what = graceOver
      ? `Shutdown ended this round when its grace period ran out: ${shown || 'no step was in flight (it was reading or reporting)'}. A CLB task in flight may still finish; the next leader reads the CLB again and resumes the round.`
      : `Shutdown stopped this round before its next steps: ${shown}. The next leader resumes the round.`;
    await this.o.events.record(subjectRef(policy), 'Normal', EventReason.RoundInterrupted, what);
    if (policy.namespace === undefined) {
      for (const e of stopped) {
        await this.o.events.record(involvedObject(e.plan.target), 'Normal', EventReason.RoundInterrupted, `Shutdown stopped ${describeOwner(policy.owner)}'s round on this ${e.plan.target.kind} at ${stepOf(e)}; the next leader resumes it.`);
      }
    }
  }
}
