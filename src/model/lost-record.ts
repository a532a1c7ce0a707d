// Pure: a target loopguard changed whose LoopbackRecord is gone (issue 22 #8: a GitOps prune of the CRD takes every
// record), which would otherwise pass for one it never touched. The evidence is the API server's: managedFields name
// loopguard as the writer of an annotation it sets to "true", and the record is always written before it, so a record
// missing well after the annotation was written is lost, not late.
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import { StalledReason } from '../api/reasons.js';
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { TargetRef } from './facts.js';
import type { TargetError } from './status.js';

/** The annotations loopguard sets to "true" when it mitigates (their originals go in the record first). */
export const ANNOTATIONS_LOOPGUARD_SETS: readonly string[] = [ServiceAnnotation.PreventLoopback, IngressAnnotation.TkeServiceConfigAuto, IngressAnnotation.PassToTarget];
/** How long after loopguard's annotation a missing record counts as lost (the record informer may lag a little). */
export const RECORD_LAG_MS = 60_000;

/** The annotations loopguard's field manager wrote on an object, with when (managedFields `time`). */
export function annotationsSetBy(manager: string, entries: readonly V1ManagedFieldsEntry[] | undefined): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const e of entries ?? []) {
    if (e.manager !== manager) continue;
    const fields = (e.fieldsV1 as { 'f:metadata'?: { 'f:annotations'?: Record<string, unknown> } } | undefined)?.['f:metadata']?.['f:annotations'];
    const time = e.time instanceof Date ? e.time.toISOString() : ((e.time as string | undefined) ?? '');
    for (const key of Object.keys(fields ?? {})) if (key.startsWith('f:')) out[key.slice(2)] = time;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export interface LostRecordInput extends TargetRef {
  annotations: Readonly<Record<string, string>> | undefined;
  /** annotationsSetBy(loopguard's field manager, …) of the object. */
  setByLoopguard: Readonly<Record<string, string>> | undefined;
  /** Whether any LoopbackRecord exists for the object (whoever's). */
  hasRecord: boolean;
  now: Date;
}

/** Each annotation loopguard set to "true" that still says so, with when (ms; NaN when unreadable), while no record exists. */
function setTimes(input: LostRecordInput): [key: string, at: number][] {
  if (input.hasRecord || !input.setByLoopguard) return [];
  return ANNOTATIONS_LOOPGUARD_SETS.flatMap((key) => {
    const at = input.setByLoopguard?.[key];
    return at !== undefined && input.annotations?.[key]?.trim().toLowerCase() === 'true' ? [[key, Date.parse(at)] as [string, number]] : [];
  });
}

/** The keys that prove loopguard changed the target while no record says what it changed; empty when none. */
export function lostRecordEvidence(input: LostRecordInput): string[] {
  return setTimes(input).flatMap(([key, at]) => (Number.isNaN(at) || input.now.getTime() - at >= RECORD_LAG_MS ? [key] : []));
}

/**
 * When a missing record will count as lost (ms since the epoch): the earliest annotation loopguard set whose lag has
 * not run out yet. The round is read again then, so the verdict does not wait for an unrelated event or drift check.
 */
export function lostRecordDueAt(input: LostRecordInput): number | undefined {
  const due = setTimes(input).flatMap(([, at]) => (at + RECORD_LAG_MS > input.now.getTime() ? [at + RECORD_LAG_MS] : []));
  return due.length > 0 ? Math.min(...due) : undefined;
}

/** The target's verdict when its record is lost: a human decides (Stalled), and the message names the fix. */
export function lostRecordError(input: LostRecordInput): TargetError | undefined {
  const keys = lostRecordEvidence(input);
  if (keys.length === 0) return undefined;
  const what = `${input.kind.toLowerCase()} ${input.name} -n ${input.namespace}`;
  return {
    reason: StalledReason.RecordLost,
    message:
      `loopguard set ${keys.join(', ')} on this ${input.kind} (field manager "loopguard" in its managedFields) but its LoopbackRecord is missing ` +
      `(was the LoopbackRecord CRD deleted, e.g. pruned by GitOps?): the originals are lost and a revert cannot restore them. ` +
      `Restore what should not stay by hand, or let loopguard record it again: kubectl annotate ${what} ${keys.map((k) => `${k}-`).join(' ')} ` +
      `(loopguard re-applies it next round; health-check sources already on 100.64.0.0/10 stay so on revert). Keep the CRD out of pruning`,
    permanent: true,
  };
}
