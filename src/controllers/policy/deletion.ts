// Deleting a policy (either kind, subject.ts) with revertOnDelete: its finalizer stays until every target it changed has
// its originals back. The revert is a round of releases (docs/execution.md "A held-up deletion says so"). Deletion never
// waits silently (issue 15 #3, #4): Stalled/DeletionBlocked and a Warning name what blocks it and the way out,
// `loopguard.dev/abandon: "true"`, which releases the finalizer and leaves every change as it is, said in Events.
import { ABANDON_ANNOTATION, FINALIZER, involvedObject } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import { CONDITION_READY } from '../../api/conditions.js';
import { EventReason, ReconcilingReason, StalledReason } from '../../api/reasons.js';
import { deletionConditions, deletionProgress, terminatingMessage, type Blocked, type DeletionState } from '../../model/deletion-status.js';
import { sharedView } from '../../plan/snapshot.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';
import { setByLoopguardOf, type TargetFacts } from '../../model/facts.js';
import { lostRecordError } from '../../model/lost-record.js';
import { serviceFacts } from '../../model/target-facts.js';
import { describeOwner, holderOf, problemOf } from '../../model/record-registry.js';
import { recordedFields } from '../../api/originals.js';
import type { PolicyControllerOptions } from './deps.js';
import type { PolicyRound, RoundResult } from './round.js';
import type { PolicyPublisher } from './publish.js';
import { ClaimsIndex, orphansOf } from './targets.js';
import { abandonCommand, subjectRef, targetsForPolicyEvent, type PolicySubject } from './subject.js';

/** After a wait's end, before the next round: the round reads after the grace period, not at its last millisecond. */
const WAIT_SLACK_MS = 250;

export class PolicyDeletion {
  constructor(
    private readonly o: PolicyControllerOptions,
    private readonly round: PolicyRound,
    /** Shutdown stopped some releases mid-way: said once (log line, Event), as for any round. */
    private readonly publisher: Pick<PolicyPublisher, 'reportStopped'>,
  ) {}

  /** Reverts, then releases the finalizer; a revert still on its way asks to be run again. */
  async finalize(policy: PolicySubject, signal: AbortSignal): Promise<ReconcileOutcome | void> {
    if (!policy.metadata.finalizers?.includes(FINALIZER)) return;
    if (policy.spec.revertOnDelete && this.o.executor) {
      const all = await this.o.records.list(policy.namespace);
      const records = all.filter((r) => holderOf(r) === policy.owner);
      // `loopguard.dev/abandon: "true"` on a policy being deleted: release the finalizer without restoring anything.
      if (policy.metadata.annotations?.[ABANDON_ANNOTATION]?.trim().toLowerCase() === 'true') await this.abandon(policy, records);
      else {
        // Said before the revert runs (a throttled CLB can hold it up for a minute of retries), then with its cause.
        const ready = policy.object.status?.conditions?.find((c) => c.type === CONDITION_READY);
        if (records.length > 0 && ready?.reason !== ReconcilingReason.Terminating && ready?.reason !== StalledReason.DeletionBlocked) {
          await this.writeConditions(policy, { blocked: false, message: terminatingMessage(records.map((r) => `${r.spec.target.kind} ${r.spec.target.name}: restoring`)) });
        }
        const { run, facts } = await this.revert(policy, records, signal);
        if (run.stopped.length > 0 || run.skipped > 0) {
          // Not blocked: shutdown began. The next leader resumes the revert; no Stalled for that.
          await this.publisher.reportStopped(policy, run.stopped, false, run.skipped);
          return { retry: new Error('reverting before the finalizer is released: stopped by shutdown') };
        }
        const { blocked, pending, onlyTkeWaits } = deletionProgress(records, run.releases, this.o.tkeServiceConfigsSynced());
        if (blocked.length > 0) return { retry: new Error(await this.reportBlocked(policy, blocked)) };
        if (pending.length > 0) {
          // Waiting for TKE or retrying a transient error is progress, not a block: the status says so
          // (Reconciling/Terminating), not the last round's Ready.
          await this.writeConditions(policy, { blocked: false, message: terminatingMessage(pending) });
          // A wait with a known end (kube-proxy's VIP release, TKE's grace period) comes back when it ends, not on the
          // error backoff, which would re-read the CLBs a dozen times during a 10 s wait.
          if (onlyTkeWaits && run.graceEndsAt !== undefined) return { requeueAfterMs: Math.max(0, run.graceEndsAt - Date.now()) + WAIT_SLACK_MS };
          return { retry: new Error(`reverting before the finalizer is released: ${pending.length} target(s) not restored yet, e.g. ${pending[0]}`) };
        }
        await this.reportLost(policy, facts, all);
      }
    }
    await this.o.writer.setFinalizers({ kind: policy.kind, metadata: policy.metadata }, (policy.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
  }

  /** The round that releases every target of the policy's (readable) records, as any round releases its orphans. */
  private async revert(policy: PolicySubject, records: readonly LoopbackRecord[], signal: AbortSignal): Promise<{ run: RoundResult; facts: TargetFacts[] }> {
    // A cluster policy's targets are in the namespaces its records name (a namespace that left it included).
    const scope = new Set(policy.namespace !== undefined ? [policy.namespace] : records.map((r) => r.spec.target.namespace));
    // Every target of those namespaces, as a round sees them (Services, Ingresses, Gateways with their Services).
    const index = new ClaimsIndex(this.o.caches);
    const facts = [...scope].flatMap((ns) => index.view(ns).candidates);
    const services = this.o.caches.services().map(serviceFacts);
    const orphans = orphansOf(records.filter((r) => !problemOf(r)), policy.owner, new Set(), facts, this.o.caches);
    // Who else is on the released targets' CLBs (any namespace): a release never puts a source back on a VIP another
    // Service's prevent-loopback keeps bound (shared-clb.ts). Which policy manages them does not matter to a release.
    const shared = sharedView(orphans.map((o) => o.facts), [...facts, ...services.filter((t) => !scope.has(t.namespace))], () => undefined);
    const run = await this.round.run({ owner: policy.owner, spec: policy.spec, profile: this.o.profile(), targets: [], orphans, enforcing: () => true, shared }, signal);
    return { run, facts };
  }

  /**
   * Targets the policy's last status lists that loopguard changed (managedFields) but whose record is lost: nothing
   * can restore them, and the finalizer goes anyway (blocking would wait forever). A Warning on each and on the policy.
   */
  private async reportLost(policy: PolicySubject, facts: readonly TargetFacts[], all: readonly LoopbackRecord[]): Promise<void> {
    const key = (t: { kind: string; namespace?: string; name: string }) => `${t.kind}/${t.namespace ?? policy.namespace ?? ''}/${t.name}`;
    const listed = new Set((policy.object.status?.targets ?? []).map(key));
    const recorded = new Set(all.map((r) => key(r.spec.target)));
    const now = new Date();
    const lost = facts.flatMap((f) => {
      if (!listed.has(key(f))) return [];
      const error = lostRecordError({ kind: f.kind, namespace: f.namespace, name: f.name, annotations: f.annotations, setByLoopguard: setByLoopguardOf(f), hasRecord: recorded.has(key(f)), now });
      return error ? [{ f, error }] : [];
    });
    if (lost.length === 0) return;
    for (const { f, error } of lost) {
      await this.o.events.record(involvedObject(f), 'Warning', EventReason.RecordLost, `${describeOwner(policy.owner)} is deleted and cannot restore this ${f.kind}: ${error.message}`);
    }
    const targets = lost.map(({ f }) => ({ kind: f.kind, namespace: f.namespace, name: f.name }));
    await this.o.events.record(subjectRef(policy), 'Warning', EventReason.RecordLost, `deleted without restoring ${lost.length} target(s) whose LoopbackRecord is lost (what loopguard changed stays): ${targetsForPolicyEvent(policy, targets)}`);
    this.o.logger.warn('Policy deleted with lost records: their changes stay', { policy: policy.owner, targets: targets.map((t) => `${t.kind} ${t.namespace}/${t.name}`).join(', ') });
  }

  /** Stalled/DeletionBlocked on the policy (kept from its last status otherwise) and Warning Events. */
  private async reportBlocked(policy: PolicySubject, blocked: readonly Blocked[]): Promise<string> {
    const first = blocked[0]!;
    const message =
      `deletion waits for the revert of ${blocked.length} target(s), e.g. ${first.kind} ${first.namespace}/${first.name}: ${first.why}. ` +
      `loopguard keeps retrying; to finish without restoring, run: ${abandonCommand(policy)}`;
    await this.writeConditions(policy, { blocked: true, message });
    // The status of a cluster policy is read by cluster-level readers only and may name the targets; its Event may not.
    const said = policy.namespace === undefined ? `deletion waits for the revert of ${targetsForPolicyEvent(policy, blocked)}. loopguard keeps retrying; to finish without restoring, run: ${abandonCommand(policy)}` : message;
    await this.o.events.record(subjectRef(policy), 'Warning', EventReason.DeletionBlocked, said);
    for (const b of blocked) {
      await this.o.events.record(involvedObject(b), 'Warning', EventReason.DeletionBlocked, `${describeOwner(policy.owner)} cannot restore this ${b.kind}: ${b.why}`);
    }
    return message;
  }

  /** Deletion conditions on the policy (the rest of its status kept); a failed write is logged, never thrown. */
  private async writeConditions(policy: PolicySubject, state: Omit<DeletionState, 'generation'>): Promise<void> {
    const generation = policy.metadata.generation;
    const conditions = deletionConditions(policy.object.status?.conditions, { ...state, ...(generation !== undefined ? { generation } : {}) }, new Date());
    try {
      await this.o.statusWriter.apply(policy.namespace, policy.name, { ...policy.object.status, conditions });
    } catch (err) {
      this.o.logger.warn('Could not report the deletion in status', { policy: policy.owner, error: (err as Error).message });
    }
  }

  /**
   * Forgets the policy's records without restoring; each target and the policy get a Warning Event saying so. None left
   * (a pass before the finalizer's removal reached the cache; the records' deletions queue it) or none ever: nothing to say.
   */
  private async abandon(policy: PolicySubject, records: readonly LoopbackRecord[]): Promise<void> {
    if (records.length === 0) return;
    for (const r of records) {
      const { kind, namespace, name } = r.spec.target;
      // What the record says loopguard changed; a corrupt record cannot say.
      const changed = problemOf(r) ? 'unknown fields (its LoopbackRecord is unreadable)' : recordedFields(r.spec.originals).join(', ') || 'nothing';
      const message = `${describeOwner(policy.owner)} was deleted with ${ABANDON_ANNOTATION}: what loopguard changed stays as it is and is no longer maintained (${changed})`;
      await this.o.events.record(involvedObject({ kind, namespace, name }), 'Warning', EventReason.RevertAbandoned, message);
      await this.o.records.remove(r);
    }
    const targets = records.map((r) => r.spec.target);
    await this.o.events.record(subjectRef(policy), 'Warning', EventReason.RevertAbandoned, `released without restoring (${ABANDON_ANNOTATION}); targets left as loopguard set them: ${targetsForPolicyEvent(policy, targets)}`);
    this.o.logger.warn('Policy deleted without restoring its targets', { policy: policy.owner, targets: targets.map((t) => `${t.kind} ${t.namespace}/${t.name}`).join(', ') });
  }
}
