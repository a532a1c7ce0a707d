// Pure: the conditions of a LoopbackPolicy whose deletion's revert has not finished (issue 22 #4): never the last
// round's `Ready=True Reconciled`. What holds it up goes in the status, which a terminating namespace still accepts
// when it refuses new Events (403): blocked → Stalled / DeletionBlocked, held up → Reconciling / Terminating.
import type { Condition } from '../api/conditions.js';
import { ReconcilingReason, StalledReason } from '../api/reasons.js';
import type { LoopbackRecord } from '../api/loopbackrecord.js';
import type { TargetRef } from './facts.js';
import { problemOf } from './record-registry.js';
import { policyConditions, type ReleaseOutcome } from './status.js';

export interface DeletionState {
  /** Retrying cannot fix it (Stalled); otherwise the revert is on its way (Reconciling). */
  blocked: boolean;
  message: string;
  generation?: number;
}

/** The policy's conditions while its deletion waits for the revert; the rest of its status stays as it was. */
export function deletionConditions(previous: readonly Condition[] | undefined, state: DeletionState, now: Date): Condition[] {
  const { blocked, message } = state;
  const reason = blocked ? StalledReason.DeletionBlocked : ReconcilingReason.Terminating;
  const held = { ready: { status: 'False' as const, reason, message }, ...(blocked ? { stalled: { reason, message } } : { reconciling: { reason, message } }) };
  return policyConditions(previous, held, state.generation, now);
}

/**
 * The message of a revert held up by `pending` targets (each "Kind name: cause"). A cause is often a whole sentence
 * (the CLB error's advice ends with a period): it is closed once, not twice.
 */
export function terminatingMessage(pending: readonly string[]): string {
  const example = (pending[0] ?? '').trimEnd().replace(/\.+$/, '');
  return `the policy is being deleted: its finalizer stays until ${pending.length} target(s) have their originals back, e.g. ${example}. loopguard keeps retrying`;
}

/** What blocks the revert of one target, for the status message and its Warning Event. */
export type Blocked = TargetRef & { why: string };

/**
 * Where the revert stands after its round (pure). `blocked`: what retrying cannot fix (a corrupt record, a permanent
 * error); `pending`: what is on its way ("Kind name: cause": a wait for TKE, a transient error, an Ingress before the
 * TkeServiceConfig cache has synced, whose release is not planned until then); `onlyTkeWaits`: every pending target only
 * waits for TKE, so the round comes back when the first wait ends rather than on the error backoff.
 */
export function deletionProgress(records: readonly LoopbackRecord[], releases: readonly ReleaseOutcome[], configsKnown: boolean): { blocked: Blocked[]; pending: string[]; onlyTkeWaits: boolean } {
  const blocked: Blocked[] = [];
  const pending: string[] = [];
  for (const r of records) {
    const t = r.spec.target;
    const problem = problemOf(r);
    const name = r.metadata?.name ?? '';
    if (problem) {
      blocked.push({ ...t, why: `its LoopbackRecord ${name} is invalid (${problem}), so loopguard cannot tell what to restore. Inspect it (kubectl get loopbackrecord ${name} -o yaml), restore the fields by hand, then kubectl delete loopbackrecord ${name}` });
    } else if (!configsKnown && t.kind === 'Ingress') pending.push(`Ingress ${t.name}: waiting for the TkeServiceConfig cache to sync`);
  }
  for (const r of releases) {
    if (r.error?.permanent) blocked.push({ kind: r.kind, namespace: r.namespace ?? '', name: r.name, why: `${r.error.reason}: ${r.error.message}` });
    else pending.push(`${r.kind} ${r.name}: ${r.error ? `${r.error.reason}: ${r.error.message}` : (r.waiting ?? r.plan[0] ?? 'steps remain')}`);
  }
  return { blocked, pending, onlyTkeWaits: pending.length > 0 && releases.length === pending.length && releases.every((r) => !r.error) };
}
