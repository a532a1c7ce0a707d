// What a step kind is to the pure layers: the line a user reads for it, and what planning, the round and the executor
// ask of a step without naming its kind. One object of this shape per kind, gathered in STEP_KINDS (../steps.ts).

export interface StepKindPlan<S> {
  /** The line Audit prints (status.targets[].plan, `loopguard plan`) and the executor logs and puts in the Event. */
  describe(step: S): string;
  /** The annotations the step sets on its target (null removes): the round assesses again from them without a read. */
  annotations?(step: S): Readonly<Record<string, string | null>>;
  /**
   * A wait for TKE: the run of the target ends there until TKE has done it, and TKE's grace period counts from
   * `since` (the plan's start of the wait; undefined: the first time the executor saw it).
   */
  wait?: { since(step: S): string | undefined };
  /**
   * Audit after Enforce still carries the step out on a target whose record the policy holds (docs/execution.md
   * "Mode switch"): a drift whose correction cannot wait for Enforce, because leaving it would harm the target.
   */
  maintainedInAudit?(step: S): boolean;
}
