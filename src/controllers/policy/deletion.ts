// Deleting a policy (either kind, subject.ts) with revertOnDelete: its finalizer stays until every target it changed has its
// originals back (the same plan and executor as a round, reading the API server). Deletion never waits silently
// (issue 15 #3, #4): while something blocks the revert, the policy is Stalled with reason DeletionBlocked, naming
// what blocks it and the way out, and a Warning Event says the same. The way out without restoring is explicit:
// `loopguard.dev/abandon: "true"` on the policy releases the finalizer, forgets the policy's records and leaves
// every change as it is, recorded in Events on the policy and on each target.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { ABANDON_ANNOTATION, FINALIZER } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { CONDITION_READY } from '../../api/conditions.js';
import { EventReason, ReconcilingReason, StalledReason } from '../../api/reasons.js';
import { deletionConditions, terminatingMessage, type DeletionState } from '../../model/deletion-status.js';
import { classifyError } from '../../mitigation/errors.js';
import { involvedObject, type Execution } from '../../mitigation/executor.js';
import { sharedView } from '../../plan/snapshot.js';
import { waitSince, type TargetPlan } from '../../plan/steps.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import type { TargetFacts } from '../../model/facts.js';
import { lostRecordError } from '../../model/lost-record.js';
import { ingressFacts, serviceFacts } from '../../model/target-facts.js';
import { ownedBy, problemOf } from '../../model/record-registry.js';
import { recordedFields } from '../../api/originals.js';
import type { PolicyControllerOptions } from './deps.js';
import { planReleases, remainingSteps } from './round.js';
import { orphansOf } from './targets.js';
import { abandonCommand, describeSubject, subjectRef, targetsForPolicyEvent, type PolicySubject } from './subject.js';

/** `loopguard.dev/abandon: "true"` on a policy being deleted: release the finalizer without restoring anything. */
export function abandonRequested(policy: Pick<PolicySubject, 'metadata'>): boolean {
  return policy.metadata.annotations?.[ABANDON_ANNOTATION]?.trim().toLowerCase() === 'true';
}

/** What blocks the revert of one target, for the status message and its Warning Event. */
export interface Blocked {
  kind: string;
  /** The target's namespace when it is not the policy's (a cluster policy's targets). */
  namespace?: string;
  name: string;
  why: string;
}

function recordName(r: LoopbackRecord): string {
  return r.metadata?.name ?? '';
}

/** What a record says loopguard changed, in words; a corrupt record cannot say. */
function changedFields(r: LoopbackRecord): string {
  if (problemOf(r)) return 'unknown fields (its LoopbackRecord is unreadable)';
  const fields = recordedFields(r.spec.originals);
  return fields.length > 0 ? fields.join(', ') : 'nothing';
}

/** Shutdown stopped some releases mid-way: said once (log line, Event) by the controller. */
export type StoppedReporter = (policy: PolicySubject, stopped: readonly Execution[]) => Promise<void>;

/** After a wait's end, before the next round: the round reads after the grace period, not at its last millisecond. */
const WAIT_SLACK_MS = 250;

export class PolicyDeletion {
  constructor(
    private readonly o: PolicyControllerOptions,
    private readonly reportStopped: StoppedReporter,
  ) {}

  /** Reverts, then releases the finalizer; a revert still on its way asks to be run again (the outcome, or a throw). */
  async finalize(policy: PolicySubject, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    if (!policy.metadata.finalizers?.includes(FINALIZER)) return;
    const owner = policy.owner;
    if (policy.spec.revertOnDelete && this.o.executor) {
      const all = await this.o.records.list(policy.namespace);
      const records = all.filter((r) => ownedBy(r, owner));
      if (abandonRequested(policy)) await this.abandon(policy, records);
      else {
        // Said before the revert runs (a throttled CLB can hold it up for a minute of retries), then with its cause.
        const ready = policy.status?.conditions?.find((c) => c.type === CONDITION_READY);
        if (records.length > 0 && ready?.reason !== ReconcilingReason.Terminating && ready?.reason !== StalledReason.DeletionBlocked) {
          await this.writeConditions(policy, { blocked: false, message: terminatingMessage(records.map((r) => `${r.spec.target.kind} ${r.spec.target.name}: restoring`)) });
        }
        const { blocked, pending, facts, waitsEndAt } = await this.revert(policy, records, signal);
        if (blocked.length > 0) {
          const message = await this.reportBlocked(policy, blocked);
          throw new Error(message);
        }
        // Waiting for TKE or retrying a transient error is progress, not a block: the queue's backoff retries it,
        // and the status says so (Reconciling/Terminating), not the last round's Ready.
        if (pending.length > 0) {
          await this.writeConditions(policy, { blocked: false, message: terminatingMessage(pending) });
          // Only waits with a known end (kube-proxy's VIP release, TKE's grace period): come back when the first ends,
          // not on the error backoff, which would re-read the CLBs a dozen times during a 10 s wait.
          if (waitsEndAt !== undefined) return { requeueAfterMs: Math.max(0, waitsEndAt - Date.now()) + WAIT_SLACK_MS };
          throw new Error(`reverting before the finalizer is released: ${pending.length} target(s) not restored yet, e.g. ${pending[0]}`);
        }
        await this.reportLost(policy, facts, all);
      }
    }
    await this.o.writer.setFinalizers({ kind: policy.kind, metadata: policy.metadata }, (policy.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
  }

  /**
   * Releases every target of the policy. `blocked`: what retrying cannot fix (a corrupt record, a permanent error);
   * `pending`: what is still on its way (a wait for TKE, a transient error).
   */
  private async revert(
    policy: PolicySubject,
    records: readonly LoopbackRecord[],
    signal: AbortSignal,
  ): Promise<{ blocked: Blocked[]; pending: string[]; facts: TargetFacts[]; /** Set when every pending target waits, and the first wait's end is known. */ waitsEndAt?: number }> {
    const owner = policy.owner;
    // A cluster policy's targets are in the namespaces its records name (a namespace that left it included).
    const namespaces = policy.namespace !== undefined ? [policy.namespace] : [...new Set(records.map((r) => r.spec.target.namespace))];
    // One namespace at a time: a cluster policy's records may span hundreds, and a blocked revert retries this.
    const facts: TargetFacts[] = [];
    for (const ns of namespaces) {
      const [services, ingresses] = await Promise.all([this.o.writer.list('Service', ns), this.o.writer.list('Ingress', ns)]);
      facts.push(...services.map((x) => serviceFacts(x as V1Service)), ...ingresses.map((x) => ingressFacts(x as V1Ingress)));
    }
    const inScope = new Set(namespaces);
    const blocked: Blocked[] = [];
    // A corrupt record cannot be released (its originals are unknown); it blocks with the way to finish by hand.
    for (const r of records) {
      const problem = problemOf(r);
      if (!problem) continue;
      const t = r.spec.target;
      blocked.push({
        kind: t.kind,
        namespace: t.namespace,
        name: t.name,
        why: `its LoopbackRecord ${recordName(r)} is invalid (${problem}), so loopguard cannot tell what to restore. Inspect it (kubectl get loopbackrecord ${recordName(r)} -o yaml), restore the fields by hand, then kubectl delete loopbackrecord ${recordName(r)}`,
      });
    }
    const releasable = records.filter((r) => !problemOf(r));
    let plans: TargetPlan[];
    try {
      // planReleases leaves Ingresses out until the TkeServiceConfig cache has synced; they come back below as pending.
      const orphans = orphansOf(releasable, owner, new Set(), facts);
      // Who else is on the released targets' CLBs (any namespace): a release never puts a source back on a VIP another
      // Service's prevent-loopback keeps bound (shared-clb.ts). Which policy manages them does not matter to a release.
      const elsewhere = this.o.caches.services().filter((svc) => !inScope.has(svc.metadata?.namespace ?? '')).map(serviceFacts);
      const shared = sharedView(orphans.map((o) => o.facts), [...facts, ...elsewhere], () => undefined);
      plans = await planReleases(this.o, { owner, spec: policy.spec, profile: this.o.profile(), shared }, orphans, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const error = classifyError(err, "reading the targets' CLBs");
      if (!error.permanent) throw err;
      blocked.push({ kind: 'CLB', name: '*', why: `${error.reason}: ${error.message}` });
      return { blocked, pending: [], facts };
    }
    const pending: string[] = [];
    const planned = new Set(plans.map((p) => `${p.target.kind}/${p.target.namespace}/${p.target.name}`));
    for (const r of releasable) if (!planned.has(`${r.spec.target.kind}/${r.spec.target.namespace}/${r.spec.target.name}`) && r.spec.target.kind === 'Ingress') pending.push(`Ingress ${r.spec.target.name}: waiting for the TkeServiceConfig cache to sync`);
    const executions = await this.o.executor!.execute(owner, plans, signal);
    const stopped = executions.filter((e) => e.stopped);
    if (stopped.length > 0) {
      // Not blocked: shutdown began. The next leader resumes the revert; no Stalled for that.
      await this.reportStopped(policy, stopped);
      throw new Error(`reverting before the finalizer is released: stopped by shutdown with ${stopped.length} target(s) not restored yet`);
    }
    let waitsEndAt: number | undefined;
    let unknownEnd = pending.length > 0;
    for (const e of executions) {
      if (e.gone || (!e.error && remainingSteps(e).length === 0)) continue;
      if (e.error?.permanent) blocked.push({ kind: e.plan.target.kind, namespace: e.plan.target.namespace, name: e.plan.target.name, why: `${e.error.reason}: ${e.error.message}` });
      else pending.push(`${e.plan.target.kind} ${e.plan.target.name}: ${e.error ? `${e.error.reason}: ${e.error.message}` : (e.waiting ?? 'steps remain')}`);
      const since = e.waiting && !e.error ? (e.waitSince ?? Date.parse(waitSince(e.executed.at(-1)) ?? '')) : NaN;
      if (Number.isNaN(since)) unknownEnd = true;
      else waitsEndAt = Math.min(waitsEndAt ?? Infinity, since + this.o.tkeGraceMs);
    }
    return { blocked, pending, facts, ...(waitsEndAt !== undefined && !unknownEnd ? { waitsEndAt } : {}) };
  }

  /**
   * Targets the policy's last status lists that loopguard changed (managedFields) but whose record is lost: nothing
   * can restore them, and the finalizer goes anyway (blocking would wait forever). A Warning on each and on the policy.
   */
  private async reportLost(policy: PolicySubject, facts: readonly TargetFacts[], all: readonly LoopbackRecord[]): Promise<void> {
    const key = (t: { kind: string; namespace?: string; name: string }) => `${t.kind}/${t.namespace ?? policy.namespace ?? ''}/${t.name}`;
    const listed = new Set((policy.status?.targets ?? []).map(key));
    const recorded = new Set(all.map((r) => key(r.spec.target)));
    const now = new Date();
    const lost = facts.flatMap((f) => {
      if (!listed.has(key(f))) return [];
      const error = lostRecordError({ kind: f.kind, namespace: f.namespace, name: f.name, annotations: f.annotations, setByLoopguard: f.setByLoopguard, hasRecord: recorded.has(key(f)), now });
      return error ? [{ f, error }] : [];
    });
    if (lost.length === 0) return;
    for (const { f, error } of lost) {
      await this.o.events.record(involvedObject(f), 'Warning', EventReason.RecordLost, `${describeSubject(policy)} is deleted and cannot restore this ${f.kind}: ${error.message}`);
    }
    const targets = lost.map(({ f }) => ({ kind: f.kind, namespace: f.namespace, name: f.name }));
    await this.o.events.record(subjectRef(policy), 'Warning', EventReason.RecordLost, `deleted without restoring ${lost.length} target(s) whose LoopbackRecord is lost (what loopguard changed stays): ${targetsForPolicyEvent(policy, targets)}`);
    this.o.logger.warn('Policy deleted with lost records: their changes stay', { policy: policy.owner, targets: targets.map((t) => `${t.kind} ${t.namespace}/${t.name}`).join(', ') });
  }

  /** Stalled/DeletionBlocked on the policy (kept from its last status otherwise) and Warning Events. */
  private async reportBlocked(policy: PolicySubject, blocked: readonly Blocked[]): Promise<string> {
    const first = blocked[0]!;
    const message =
      `deletion waits for the revert of ${blocked.length} target(s), e.g. ${first.kind} ${first.namespace ? `${first.namespace}/` : ''}${first.name}: ${first.why}. ` +
      `loopguard keeps retrying; to finish without restoring, run: ${abandonCommand(policy)}`;
    await this.writeConditions(policy, { blocked: true, message });
    // The status of a cluster policy is read by cluster-level readers only and may name the targets; its Event may not.
    const named = blocked.filter((b) => b.name !== '*');
    const said =
      policy.namespace === undefined && named.length > 0
        ? `deletion waits for the revert of ${targetsForPolicyEvent(policy, named)}. loopguard keeps retrying; to finish without restoring, run: ${abandonCommand(policy)}`
        : message;
    await this.o.events.record(subjectRef(policy), 'Warning', EventReason.DeletionBlocked, said);
    for (const b of blocked) {
      if (b.name === '*') continue;
      await this.o.events.record(involvedObject({ kind: b.kind as 'Service' | 'Ingress', namespace: b.namespace ?? policy.namespace ?? '', name: b.name }), 'Warning', EventReason.DeletionBlocked, `${describeSubject(policy)} cannot restore this ${b.kind}: ${b.why}`);
    }
    return message;
  }

  /** Deletion conditions on the policy (the rest of its status kept); a failed write is logged, never thrown. */
  private async writeConditions(policy: PolicySubject, state: Omit<DeletionState, 'generation'>): Promise<void> {
    const generation = policy.metadata.generation;
    const conditions = deletionConditions(policy.status?.conditions, { ...state, ...(generation !== undefined ? { generation } : {}) }, new Date());
    try {
      await this.o.statusWriter.apply(policy.namespace, policy.name, { ...policy.object.status, conditions });
    } catch (err) {
      this.o.logger.warn('Could not report the deletion in status', { policy: policy.owner, error: (err as Error).message });
    }
  }

  /** Forgets the policy's records without restoring; each target and the policy get a Warning Event saying so. */
  private async abandon(policy: PolicySubject, records: readonly LoopbackRecord[]): Promise<void> {
    for (const r of records) {
      const t = r.spec.target;
      await this.o.events.record(
        involvedObject({ kind: t.kind, namespace: t.namespace, name: t.name }),
        'Warning',
        EventReason.RevertAbandoned,
        `${describeSubject(policy)} was deleted with ${ABANDON_ANNOTATION}: what loopguard changed stays as it is and is no longer maintained (${changedFields(r)})`,
      );
      await this.o.records.remove(r);
    }
    const targets = records.map((r) => r.spec.target);
    await this.o.events.record(subjectRef(policy), 'Warning', EventReason.RevertAbandoned, `released without restoring (${ABANDON_ANNOTATION}); targets left as loopguard set them: ${targets.length > 0 ? targetsForPolicyEvent(policy, targets) : 'none'}`);
    this.o.logger.warn('Policy deleted without restoring its targets', { policy: policy.owner, targets: targets.map((t) => `${t.kind} ${t.namespace}/${t.name}`).join(', ') || 'none' });
  }
}
