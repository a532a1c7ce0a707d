// Deleting a LoopbackPolicy with revertOnDelete: its finalizer stays until every target it changed has its
// originals back (the same plan and executor as a round, reading the API server). Deletion never waits silently
// (issue 15 #3, #4): while something blocks the revert, the policy is Stalled with reason DeletionBlocked, naming
// what blocks it and the way out, and a Warning Event says the same. The way out without restoring is explicit:
// `loopguard.dev/abandon: "true"` on the policy releases the finalizer, forgets the policy's records and leaves
// every change as it is, recorded in Events on the policy and on each target.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { validateOriginals } from '../../api/annotations.js';
import { CONDITION_READY, CONDITION_RECONCILING, CONDITION_STALLED, removeStatusCondition, setStatusCondition } from '../../api/conditions.js';
import { ABANDON_ANNOTATION, FINALIZER, withSpecDefaults, type LoopbackPolicy, type LoopbackPolicyStatus } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { EventReason, StalledReason } from '../../api/reasons.js';
import { classifyError } from '../../mitigation/errors.js';
import { involvedObject, type Execution } from '../../mitigation/executor.js';
import { NO_SHARING } from '../../plan/snapshot.js';
import type { TargetPlan } from '../../plan/steps.js';
import { ingressFacts, serviceFacts } from '../../model/target-facts.js';
import { ownedBy, ownerOf } from '../../plan/ownership.js';
import { recordedFields } from '../../plan/record.js';
import type { PolicyControllerOptions } from './deps.js';
import { planReleases, remainingSteps } from './round.js';
import { orphansOf } from './targets.js';

/** `loopguard.dev/abandon: "true"` on a policy being deleted: release the finalizer without restoring anything. */
export function abandonRequested(policy: LoopbackPolicy): boolean {
  return policy.metadata.annotations?.[ABANDON_ANNOTATION]?.trim().toLowerCase() === 'true';
}

/** What blocks the revert of one target, for the status message and its Warning Event. */
export interface Blocked {
  kind: string;
  name: string;
  why: string;
}

function recordName(r: LoopbackRecord): string {
  return r.metadata?.name ?? '';
}

/** What a record says loopguard changed, in words; a corrupt record cannot say. */
function changedFields(r: LoopbackRecord): string {
  if (validateOriginals(r.spec.originals)) return 'unknown fields (its LoopbackRecord is unreadable)';
  const fields = recordedFields(r.spec.originals);
  return fields.length > 0 ? fields.join(', ') : 'nothing';
}

/**
 * Pure: the policy's status while its deletion is blocked (Stalled and Ready=False with reason DeletionBlocked, the
 * rest kept from its last status) and the message, which names what blocks the revert and the way out.
 */
export function deletionBlockedStatus(policy: LoopbackPolicy, blocked: readonly Blocked[], now: Date): { message: string; status: LoopbackPolicyStatus } {
  const namespace = policy.metadata.namespace ?? '';
  const name = policy.metadata.name ?? '';
  const first = blocked[0]!;
  const message =
    `deletion waits for the revert of ${blocked.length} target(s), e.g. ${first.kind} ${first.name}: ${first.why}. ` +
    `loopguard keeps retrying; to finish without restoring, run: kubectl annotate loopbackpolicy ${name} -n ${namespace} ${ABANDON_ANNOTATION}=true`;
  const generation = policy.metadata.generation;
  const g = generation !== undefined ? { observedGeneration: generation } : {};
  let conditions = setStatusCondition(policy.status?.conditions, { type: CONDITION_STALLED, status: 'True', reason: StalledReason.DeletionBlocked, message, ...g }, now).conditions;
  conditions = setStatusCondition(conditions, { type: CONDITION_READY, status: 'False', reason: StalledReason.DeletionBlocked, message, ...g }, now).conditions;
  conditions = removeStatusCondition(conditions, CONDITION_RECONCILING).conditions;
  return { message, status: { ...policy.status, conditions } };
}

/** Shutdown stopped some releases mid-way: said once (log line, Event) by the controller. */
export type StoppedReporter = (policy: LoopbackPolicy, stopped: readonly Execution[]) => Promise<void>;

export class PolicyDeletion {
  constructor(
    private readonly o: PolicyControllerOptions,
    private readonly reportStopped: StoppedReporter,
  ) {}

  /** Resolves once the finalizer is gone; throws (the queue retries with backoff) while the revert is blocked. */
  async finalize(policy: LoopbackPolicy, signal: AbortSignal): Promise<void> {
    if (!policy.metadata.finalizers?.includes(FINALIZER)) return;
    const namespace = policy.metadata.namespace ?? '';
    const owner = ownerOf(namespace, policy.metadata.name ?? '');
    if (withSpecDefaults(policy.spec).revertOnDelete && this.o.executor) {
      const records = (await this.o.records.list(namespace)).filter((r) => ownedBy(r, owner));
      if (abandonRequested(policy)) await this.abandon(policy, records);
      else {
        const { blocked, pending } = await this.revert(policy, records, signal);
        if (blocked.length > 0) {
          const message = await this.reportBlocked(policy, blocked);
          throw new Error(message);
        }
        // Waiting for TKE or retrying a transient error is progress, not a block: the queue's backoff retries it.
        if (pending.length > 0) throw new Error(`reverting before the finalizer is released: ${pending.length} target(s) not restored yet, e.g. ${pending[0]}`);
      }
    }
    await this.o.writer.setFinalizers(policy, (policy.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
  }

  /**
   * Releases every target of the policy. `blocked`: what retrying cannot fix (a corrupt record, a permanent error);
   * `pending`: what is still on its way (a wait for TKE, a transient error).
   */
  private async revert(policy: LoopbackPolicy, records: readonly LoopbackRecord[], signal: AbortSignal): Promise<{ blocked: Blocked[]; pending: string[] }> {
    const namespace = policy.metadata.namespace ?? '';
    const owner = ownerOf(namespace, policy.metadata.name ?? '');
    const [services, ingresses] = await Promise.all([this.o.writer.list('Service', namespace), this.o.writer.list('Ingress', namespace)]);
    const facts = [...services.map((s) => serviceFacts(s as V1Service)), ...ingresses.map((i) => ingressFacts(i as V1Ingress))];
    const blocked: Blocked[] = [];
    // A corrupt record cannot be released (its originals are unknown); it blocks with the way to finish by hand.
    for (const r of records) {
      const problem = validateOriginals(r.spec.originals);
      if (!problem) continue;
      const t = r.spec.target;
      blocked.push({
        kind: t.kind,
        name: t.name,
        why: `its LoopbackRecord ${recordName(r)} is invalid (${problem}), so loopguard cannot tell what to restore. Inspect it (kubectl get loopbackrecord ${recordName(r)} -o yaml), restore the fields by hand, then kubectl delete loopbackrecord ${recordName(r)}`,
      });
    }
    const releasable = records.filter((r) => !validateOriginals(r.spec.originals));
    let plans: TargetPlan[];
    try {
      // planReleases leaves Ingresses out until the TkeServiceConfig cache has synced; they come back below as pending.
      plans = await planReleases(this.o, { owner, spec: withSpecDefaults(policy.spec), profile: this.o.profile(), shared: NO_SHARING }, orphansOf(releasable, owner, new Set(), facts), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const error = classifyError(err, "reading the targets' CLBs");
      if (!error.permanent) throw err;
      blocked.push({ kind: 'CLB', name: '*', why: `${error.reason}: ${error.message}` });
      return { blocked, pending: [] };
    }
    const pending: string[] = [];
    const planned = new Set(plans.map((p) => `${p.target.kind}/${p.target.name}`));
    for (const r of releasable) if (!planned.has(`${r.spec.target.kind}/${r.spec.target.name}`) && r.spec.target.kind === 'Ingress') pending.push(`Ingress ${r.spec.target.name}: waiting for the TkeServiceConfig cache to sync`);
    const executions = await this.o.executor!.execute(owner, plans, signal);
    const stopped = executions.filter((e) => e.stopped);
    if (stopped.length > 0) {
      // Not blocked: shutdown began. The next leader resumes the revert; no Stalled for that.
      await this.reportStopped(policy, stopped);
      throw new Error(`reverting before the finalizer is released: stopped by shutdown with ${stopped.length} target(s) not restored yet`);
    }
    for (const e of executions) {
      if (e.gone || (!e.error && remainingSteps(e).length === 0)) continue;
      if (e.error?.permanent) blocked.push({ kind: e.plan.target.kind, name: e.plan.target.name, why: `${e.error.reason}: ${e.error.message}` });
      else pending.push(`${e.plan.target.kind} ${e.plan.target.name}: ${e.error ? `${e.error.reason}: ${e.error.message}` : (e.waiting ?? 'steps remain')}`);
    }
    return { blocked, pending };
  }

  /** Stalled/DeletionBlocked on the policy (kept from its last status otherwise) and Warning Events. */
  private async reportBlocked(policy: LoopbackPolicy, blocked: readonly Blocked[]): Promise<string> {
    const namespace = policy.metadata.namespace ?? '';
    const name = policy.metadata.name ?? '';
    const { message, status } = deletionBlockedStatus(policy, blocked, new Date());
    try {
      await this.o.statusWriter.apply(namespace, name, status);
    } catch (err) {
      this.o.logger.warn('Could not report the blocked deletion in status', { policy: `${namespace}/${name}`, error: (err as Error).message });
    }
    const ref = { apiVersion: policy.apiVersion ?? 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', namespace, name, ...(policy.metadata.uid ? { uid: policy.metadata.uid } : {}) };
    await this.o.events.record(ref, 'Warning', EventReason.DeletionBlocked, message);
    for (const b of blocked) {
      if (b.name === '*') continue;
      await this.o.events.record(involvedObject({ kind: b.kind as 'Service' | 'Ingress', namespace, name: b.name }), 'Warning', EventReason.DeletionBlocked, `LoopbackPolicy ${namespace}/${name} cannot restore this ${b.kind}: ${b.why}`);
    }
    return message;
  }

  /** Forgets the policy's records without restoring; each target and the policy get a Warning Event saying so. */
  private async abandon(policy: LoopbackPolicy, records: readonly LoopbackRecord[]): Promise<void> {
    const namespace = policy.metadata.namespace ?? '';
    const name = policy.metadata.name ?? '';
    for (const r of records) {
      const t = r.spec.target;
      await this.o.events.record(
        involvedObject({ kind: t.kind, namespace: t.namespace, name: t.name }),
        'Warning',
        EventReason.RevertAbandoned,
        `LoopbackPolicy ${namespace}/${name} was deleted with ${ABANDON_ANNOTATION}: what loopguard changed stays as it is and is no longer maintained (${changedFields(r)})`,
      );
      await this.o.records.remove(r);
    }
    const ref = { apiVersion: policy.apiVersion ?? 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', namespace, name, ...(policy.metadata.uid ? { uid: policy.metadata.uid } : {}) };
    const targets = records.map((r) => `${r.spec.target.kind} ${r.spec.target.name}`).join(', ') || 'none';
    await this.o.events.record(ref, 'Warning', EventReason.RevertAbandoned, `released without restoring (${ABANDON_ANNOTATION}); targets left as loopguard set them: ${targets}`);
    this.o.logger.warn('Policy deleted without restoring its targets', { policy: `${namespace}/${name}`, targets });
  }
}
