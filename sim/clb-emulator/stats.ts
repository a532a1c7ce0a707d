import type { CallOutcome, StatsSnapshot } from './admin-types.js';
import { diffStats } from './stats-diff.js';

/**
 * Call counters for tests and benchmarks (e.g. "loopguard never causes RequestLimitExceeded", "one ModifyListener
 * per listener"). `calls` counts every request that named an action (after the HTTP envelope was understood),
 * including ones that then failed; `errors` counts every error response by code, with `HTTP<status>` and
 * `ConnectionReset` for transport faults; `listenerWrites`/`ruleWrites` count accepted writes (task started).
 * `byCaller` attributes each of `calls` to a caller when its outcome is known, so a benchmark can separate
 * loopguard's calls from TKE's. Named marks freeze the counters at a moment; `since(mark)` is what came after.
 */
export class Stats {
  private s: StatsSnapshot = empty();
  private readonly marks = new Map<string, StatsSnapshot>();

  call(action: string): void {
    bump(this.s.calls, action);
  }

  /** One finished call; `outcome` is `OK` or the error code returned. */
  outcome(caller: string, action: string, outcome: CallOutcome): void {
    bump(((this.s.byCaller[caller] ??= {})[action] ??= {}), outcome);
  }

  throttled(action: string): void {
    bump(this.s.throttled, action);
  }

  error(action: string, code: string): void {
    bump((this.s.errors[action] ??= {}), code);
  }

  listenerWrite(lbId: string, listenerId: string): void {
    bump(this.s.listenerWrites, `${lbId}/${listenerId}`);
  }

  ruleWrite(lbId: string, listenerId: string, locationId: string): void {
    bump(this.s.ruleWrites, `${lbId}/${listenerId}/${locationId}`);
  }

  task(status: 'started' | 'succeeded' | 'failed'): void {
    this.s.tasks[status]++;
  }

  snapshot(): StatsSnapshot {
    return structuredClone(this.s);
  }

  /** Remembers the counters as they are now under `name` (replacing an older mark of that name); returns them. */
  mark(name: string): StatsSnapshot {
    const snap = this.snapshot();
    this.marks.set(name, snap);
    return structuredClone(snap);
  }

  /** Counters accumulated since `mark(name)`, or undefined for an unknown mark. */
  since(name: string): StatsSnapshot | undefined {
    const mark = this.marks.get(name);
    return mark && diffStats(this.s, mark);
  }

  /** Zeroes the counters and forgets the marks (a diff across a reset would be meaningless). */
  reset(): void {
    this.s = empty();
    this.marks.clear();
  }
}

function bump(counter: Record<string, number>, key: string): void {
  counter[key] = (counter[key] ?? 0) + 1;
}

function empty(): StatsSnapshot {
  return { calls: {}, byCaller: {}, throttled: {}, errors: {}, listenerWrites: {}, ruleWrites: {}, tasks: { started: 0, succeeded: 0, failed: 0 } };
}
