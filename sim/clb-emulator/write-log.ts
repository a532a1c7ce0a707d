import type { WriteLogEntry, WriteLogStatus } from './admin-types.js';

/**
 * The per-listener write log (`GET /_admin/writes`): one entry per accepted ModifyListener/ModifyRule (task
 * started), with the caller that sent it and, once its task has finished, whether it succeeded and which fields
 * it changed. The counters in `stats` say how many writes a listener got; this says who wrote, in what order,
 * and which writes were *effective* (succeeded and changed a value) — what "at most one write per listener" and
 * "never two writers" are judged on. Retries of a failed call never reach it (no task, no entry); a failed task
 * is an entry with `status: failed` and nothing changed.
 */

/** Oldest entries are dropped beyond this (benchmarks write a lot); `seq` keeps counting, so gaps show it. */
const MAX_ENTRIES = 100_000;

export class WriteLog {
  private entries: WriteLogEntry[] = [];
  private readonly byTask = new Map<string, WriteLogEntry>();
  private seq = 0;

  accepted(entry: Pick<WriteLogEntry, 'caller' | 'action' | 'loadBalancerId' | 'listenerId' | 'locationId' | 'taskId'>): void {
    const e: WriteLogEntry = { seq: ++this.seq, ...entry, acceptedAtMs: Date.now(), finishedAtMs: null, status: 'running', changed: [] };
    this.entries.push(e);
    this.byTask.set(e.taskId, e);
    if (this.entries.length > MAX_ENTRIES) {
      const dropped = this.entries.splice(0, this.entries.length - MAX_ENTRIES);
      for (const d of dropped) this.byTask.delete(d.taskId);
    }
  }

  /** What the task changed, recorded by the task itself when it applies. */
  changed(taskId: string, fields: string[]): void {
    const e = this.byTask.get(taskId);
    if (e) e.changed = fields;
  }

  finished(taskId: string, status: Exclude<WriteLogStatus, 'running'>): void {
    const e = this.byTask.get(taskId);
    if (!e) return;
    e.status = status;
    e.finishedAtMs = Date.now();
    // A task that failed while applying (its CLB deleted meanwhile) changed nothing it could keep.
    if (status === 'failed') e.changed = [];
  }

  /** Entries with `seq > since`, oldest first. */
  list(since = 0): WriteLogEntry[] {
    return this.entries.filter((e) => e.seq > since).map((e) => structuredClone(e));
  }

  clear(): void {
    this.entries = [];
    this.byTask.clear();
  }
}

/**
 * The fields whose values differ between two snapshots of a listener or rule, as dotted paths one object level
 * deep (`HealthCheck.SourceIpType`, `KeepaliveEnable`). Emulator bookkeeping (lowerCamel keys) is left out.
 */
export function changedFields(before: object, after: object, prefix = ''): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const out: string[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!/^[A-Z]/.test(key) || key === 'Rules') continue;
    const x = a[key];
    const y = b[key];
    if (isObject(x) && isObject(y) && prefix === '') out.push(...changedFields(x, y, `${key}.`));
    else if (JSON.stringify(x) !== JSON.stringify(y)) out.push(`${prefix}${key}`);
  }
  return out.sort();
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
