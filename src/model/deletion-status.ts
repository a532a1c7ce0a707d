// Pure: the conditions of a LoopbackPolicy whose deletion's revert has not finished (issue 22 #4): never the last
// round's `Ready=True Reconciled`. What holds it up goes in the status, which a terminating namespace still accepts
// when it refuses new Events (403): blocked → Stalled / DeletionBlocked, held up → Reconciling / Terminating.
import type { Condition } from '../api/conditions.js';
import { ReconcilingReason, StalledReason } from '../api/reasons.js';
import { policyConditions } from './status.js';

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
