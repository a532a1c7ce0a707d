// The work queue's whole-cluster units: one key each (the drift checks, the probe plan, the CoreDNS rules, the reports'
// prune), beside the per-policy and per-namespace keys the rest handler serves. Each unit is run once when leadership
// begins, after the caches have synced: what a previous leader left behind (a probe plan, CoreDNS rules) must be
// brought to what the caches say now even when no policy's round will ever ask for it (the last one is gone).
import type { ReconcileHandler } from './work-queue.js';

export interface ClusterUnits {
  /** The queue's handler: a unit's key to its unit, every other key to `rest`. */
  handle: ReconcileHandler;
  /** Queues every unit's key once (leadership gained). */
  start(queue: { add(key: string): void }): void;
}

export function clusterUnits(units: Readonly<Record<string, ReconcileHandler>>, rest: ReconcileHandler): ClusterUnits {
  return {
    handle: (key, signal) => (Object.hasOwn(units, key) ? units[key]!(key, signal) : rest(key, signal)),
    start: (queue) => {
      for (const key of Object.keys(units)) queue.add(key);
    },
  };
}
