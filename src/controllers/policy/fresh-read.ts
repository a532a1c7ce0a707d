// Fresh facts before a write (docs/execution.md "Restart"). A round judges targets from the observer's cache; that
// is enough to report them, but a plan that will be carried out must rest on a recent read of the target's CLB:
// one made by this process (not a seeded entry of the observation checkpoint, which a previous leader read) and at
// most FRESH_BEFORE_WRITE_MS ago. Otherwise the round reads those CLBs again and plans the chunk once more before
// anything is executed. The bound is well under the drift interval (5 min by default): a new annotation or a
// Service edit arriving minutes after the last drift read costs one read of its CLB, and a write never acts on
// what a CLB looked like minutes ago. Converged targets plan no step, so they never pay it. Pure.

import { FRESH_BEFORE_WRITE_MS } from '../../mitigation/steps/effect.js';

export interface WriteCandidate {
  loadBalancerId?: string;
  /** The plan has steps that will be carried out this round (Enforce, or Audit's maintained corrections). */
  executes: boolean;
  /** The cached observation came from the checkpoint (ClbObserver.seeded). */
  seeded: boolean;
  /** When the CLB was read (undefined: not cached; the chunk's read just tried it). */
  observedAt?: number;
}

/** The CLBs to read again before the chunk's plans are executed. */
export function freshReadsBeforeWrite(candidates: readonly WriteCandidate[], now: number): string[] {
  const ids = new Set<string>();
  for (const c of candidates) {
    if (!c.executes || !c.loadBalancerId || c.observedAt === undefined) continue;
    if (c.seeded || now - c.observedAt > FRESH_BEFORE_WRITE_MS) ids.add(c.loadBalancerId);
  }
  return [...ids];
}
