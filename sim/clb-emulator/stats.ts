import type { StatsSnapshot } from './admin-types.js';

/**
 * Call counters for tests and benchmarks (e.g. "loopguard never causes RequestLimitExceeded", "one ModifyListener
 * per listener"). `calls` counts every request that named an action (after the HTTP envelope was understood),
 * including ones that then failed; `errors` counts every error response by code, with `HTTP<status>` and
 * `ConnectionReset` for transport faults; `listenerWrites`/`ruleWrites` count accepted writes (task started).
 */
export class Stats {
  private s: StatsSnapshot = empty();

  call(action: string): void {
    bump(this.s.calls, action);
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

  reset(): void {
    this.s = empty();
  }
}

function bump(counter: Record<string, number>, key: string): void {
  counter[key] = (counter[key] ?? 0) + 1;
}

function empty(): StatsSnapshot {
  return { calls: {}, throttled: {}, errors: {}, listenerWrites: {}, ruleWrites: {}, tasks: { started: 0, succeeded: 0, failed: 0 } };
}
