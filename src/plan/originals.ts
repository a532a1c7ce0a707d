// Pure: the planners' reading of a target's originals (src/api/originals.ts holds them and their one descriptor
// table: merge, forget, validate, describe). `applied` lists the fields loopguard has seen take effect: such a
// field found back at its original was put back outside loopguard (drift), anything else is a first change.
import { canonicalJson } from '../api/canonical-json.js';
import type { Originals } from '../api/originals.js';

/** Whether loopguard has seen this field take effect before (the drift rule). */
export function isApplied(originals: Originals | undefined, key: string): boolean {
  return originals?.applied?.includes(key) ?? false;
}

/**
 * TKE's grace period as the planners read it: how long TKE gets to act on what it was asked (a TkeServiceConfig,
 * pass-to-target, prevent-loopback's switch) before loopguard writes it itself or reports it, now, and when the CLB
 * was last read (ms).
 */
export interface GraceClock {
  now: Date;
  graceMs: number;
  observedAt?: number;
}

/**
 * Whether TKE's grace period for a declaration made at `declaredAt` is over: only a CLB read made after it can
 * tell (a read from before the grace ended may predate TKE's work). A declaration time in the future counts as now.
 */
export function tkeGraceOver(declaredAt: string | undefined, { now, graceMs, observedAt }: GraceClock): boolean {
  const declared = declaredAt ? Math.min(Date.parse(declaredAt), now.getTime()) : NaN;
  return !Number.isNaN(declared) && observedAt !== undefined && observedAt >= declared + graceMs;
}

/** Whether loopguard set the annotation `key` (the originals hold its value before, absent ones as null). */
export function annotatedByLoopguard(originals: Originals | undefined, key: string): boolean {
  return originals?.annotations !== undefined && key in originals.annotations;
}

/** Order-independent equality of two sets of originals (their canonical JSON). */
export function sameOriginals(a: Originals | undefined, b: Originals | undefined): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
