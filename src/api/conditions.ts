// metav1.Condition helpers with apimachinery's semantics (k8s.io/apimachinery/pkg/api/meta/conditions.go):
// lastTransitionTime moves only when `status` changes, so a reconcile that finds nothing new writes an
// identical status and causes no watch churn. Pure: callers pass `now`, inputs are never mutated.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  /** RFC 3339, seconds precision (metav1.Time). */
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** A condition to set; lastTransitionTime is filled in from `now` when omitted. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

export const CONDITION_READY = 'Ready';
export const CONDITION_RECONCILING = 'Reconciling';
export const CONDITION_STALLED = 'Stalled';

/** metav1.Time serialises with second precision; matching it keeps SSA diffs empty on re-apply. */
export function toMetaTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * Sets `newCondition` in `conditions`. Returns the new list and whether anything changed. As in
 * apimachinery's SetStatusCondition: a new type is appended; for an existing type, status change →
 * lastTransitionTime = newCondition's or `now`; reason, message and observedGeneration are updated in
 * place without touching lastTransitionTime.
 */
export function setStatusCondition(
  conditions: readonly Condition[] | undefined,
  newCondition: ConditionInput,
  now: Date,
): { conditions: Condition[]; changed: boolean } {
  const list = conditions ? conditions.map((c) => ({ ...c })) : [];
  const index = list.findIndex((c) => c.type === newCondition.type);
  if (index < 0) {
    list.push({ ...newCondition, lastTransitionTime: newCondition.lastTransitionTime ?? toMetaTime(now) });
    return { conditions: list, changed: true };
  }
  const existing = list[index] as Condition;
  let changed = false;
  if (existing.status !== newCondition.status) {
    existing.status = newCondition.status;
    existing.lastTransitionTime = newCondition.lastTransitionTime ?? toMetaTime(now);
    changed = true;
  }
  if (existing.reason !== newCondition.reason) {
    existing.reason = newCondition.reason;
    changed = true;
  }
  if (existing.message !== newCondition.message) {
    existing.message = newCondition.message;
    changed = true;
  }
  if (existing.observedGeneration !== newCondition.observedGeneration) {
    if (newCondition.observedGeneration === undefined) delete existing.observedGeneration;
    else existing.observedGeneration = newCondition.observedGeneration;
    changed = true;
  }
  return { conditions: list, changed };
}

/** The condition of `type` set from `c`, or removed when `c` is undefined (a feature the policy does not use). */
export function withCondition(conditions: readonly Condition[] | undefined, type: string, c: Pick<Condition, 'status' | 'reason' | 'message'> | undefined, now: Date, observedGeneration: number): Condition[] {
  return c ? setStatusCondition(conditions, { type, ...c, observedGeneration }, now).conditions : removeStatusCondition(conditions, type).conditions;
}

/** Removes the condition of `type`; `changed` is false when it was absent. */
export function removeStatusCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): { conditions: Condition[]; changed: boolean } {
  const list = conditions ? conditions.filter((c) => c.type !== type).map((c) => ({ ...c })) : [];
  return { conditions: list, changed: list.length !== (conditions?.length ?? 0) };
}
