// Pure: the conditions of a LoopbackPolicy being deleted whose revert has not finished (issue 22 #4). A deletion
// never shows the last round's `Ready=True Reconciled` while loopguard is still giving changes back: what holds it
// up is in the status, which loopguard can write even when Events cannot be (a terminating namespace refuses new
// Events with 403, a status update is not refused).
//  - blocked (retrying cannot fix it: a permanent error, a corrupt record): Stalled=True / Ready=False DeletionBlocked;
//  - held up (a wait for TKE, a transient error such as throttling): Reconciling=True / Ready=False Terminating.
import { CONDITION_READY, CONDITION_RECONCILING, CONDITION_STALLED, removeStatusCondition, setStatusCondition, type Condition } from '../api/conditions.js';
import { ReconcilingReason, StalledReason } from '../api/reasons.js';

export interface DeletionState {
  /** Retrying cannot fix it (Stalled); otherwise the revert is on its way (Reconciling). */
  blocked: boolean;
  message: string;
  generation?: number;
}

/** The policy's conditions while its deletion waits for the revert; the rest of its status stays as it was. */
export function deletionConditions(previous: readonly Condition[] | undefined, state: DeletionState, now: Date): Condition[] {
  const g = state.generation !== undefined ? { observedGeneration: state.generation } : {};
  const message = state.message;
  const [set, cleared, reason] = state.blocked
    ? [CONDITION_STALLED, CONDITION_RECONCILING, StalledReason.DeletionBlocked]
    : [CONDITION_RECONCILING, CONDITION_STALLED, ReconcilingReason.Terminating];
  let conditions = setStatusCondition(previous, { type: set, status: 'True', reason, message, ...g }, now).conditions;
  conditions = setStatusCondition(conditions, { type: CONDITION_READY, status: 'False', reason, message, ...g }, now).conditions;
  return removeStatusCondition(conditions, cleared).conditions;
}

/**
 * The message of a revert held up by `pending` targets (each "Kind name: cause"). A cause is often a whole sentence
 * (the CLB error's advice ends with a period): it is closed once, not twice.
 */
export function terminatingMessage(pending: readonly string[]): string {
  const example = (pending[0] ?? '').trimEnd().replace(/\.+$/, '');
  return `the policy is being deleted: its finalizer stays until ${pending.length} target(s) have their originals back, e.g. ${example}. loopguard keeps retrying`;
}
