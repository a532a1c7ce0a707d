// Fresh facts before a write (docs/execution.md "Restart", "Writes read first"): a plan about to be carried out rests
// on a read of its CLB made by this process at most FRESH_BEFORE_WRITE_MS ago, or the CLB is read again first.

import type { ClbObserver } from '../../cloud/clb-observer.js';
import { FRESH_BEFORE_WRITE_MS } from '../../mitigation/steps/effect.js';

export interface WriteCandidate {
  loadBalancerId?: string | undefined;
  /** The plan has steps that will be carried out this round (Enforce, or Audit's maintained corrections). */
  executes: boolean;
  /**
   * When the read the plan rests on was made (undefined: not cached; the round's read just tried it). The plan's own
   * read, never a newer one in the cache: a plan made on an old read is planned again, whoever read the CLB since.
   */
  observedAt: number | undefined;
}

/**
 * The CLBs to read again before the plans are executed: read by a previous leader (seeded from the checkpoint) or
 * too long ago. A CLB not cached was just tried by the round's read.
 */
export function freshReadsBeforeWrite(candidates: readonly WriteCandidate[], observer: Pick<ClbObserver, 'seeded'>, now: number): string[] {
  const ids = new Set<string>();
  for (const { loadBalancerId: id, executes, observedAt: at } of candidates) {
    if (id && executes && at !== undefined && (observer.seeded(id) || now - at > FRESH_BEFORE_WRITE_MS)) ids.add(id);
  }
  return [...ids];
}
