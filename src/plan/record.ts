// Pure: the originals record both layers keep (one shape, one merge, one drift rule). A record holds, per field
// loopguard changed, the value before its first change; existing entries always win over later ones, because a
// later "original" may be loopguard's own value. `applied` lists the fields loopguard has seen take effect: such a
// field found back at its original was put back outside loopguard (drift), anything else is a first change.
import type { AddedLevel, OriginalsRecord, SourceIpType } from '../api/annotations.js';

/** Stable names of the fields a record can hold, used in `applied`. */
export const fieldKey = {
  listenerSource: (listenerId: string) => `listener/${listenerId}/sourceIpType`,
  keepalive: (listenerId: string) => `listener/${listenerId}/keepaliveEnable`,
  ruleSource: (listenerId: string, locationId: string) => `rule/${listenerId}/${locationId}/sourceIpType`,
  annotation: (key: string) => `annotation/${key}`,
  passToTarget: () => 'loadBalancer/passToTarget',
} as const;

export function ruleKey(listenerId: string, locationId: string): string {
  return `${listenerId}/${locationId}`;
}

/** Whether loopguard has seen this field take effect before (the drift rule). */
export function isApplied(record: OriginalsRecord | undefined, key: string): boolean {
  return record?.applied?.includes(key) ?? false;
}

/**
 * Whether TKE's grace period for a declaration made at `declaredAt` is over: only a CLB read made after it can
 * tell (a read from before the grace ended may predate TKE's work). A declaration time in the future counts as now.
 */
export function tkeGraceOver(declaredAt: string | undefined, observedAt: number | undefined, now: Date, graceMs: number): boolean {
  const declared = declaredAt ? Math.min(Date.parse(declaredAt), now.getTime()) : NaN;
  return !Number.isNaN(declared) && observedAt !== undefined && observedAt >= declared + graceMs;
}

/** Whether loopguard set the annotation `key` (the record holds its original value, absent ones as null). */
export function annotatedByLoopguard(record: OriginalsRecord | undefined, key: string): boolean {
  return record?.annotations !== undefined && key in record.annotations;
}

/** Every field key the record holds an original for. */
export function recordedFields(record: OriginalsRecord | undefined): string[] {
  if (!record) return [];
  const keys: string[] = [];
  for (const k of Object.keys(record.annotations ?? {})) keys.push(fieldKey.annotation(k));
  for (const [id, l] of Object.entries(record.listeners ?? {})) {
    if (l.sourceIpType !== undefined) keys.push(fieldKey.listenerSource(id));
    if (l.keepaliveEnable !== undefined) keys.push(fieldKey.keepalive(id));
  }
  for (const k of Object.keys(record.rules ?? {})) {
    const [lid = '', loc = ''] = k.split('/');
    keys.push(fieldKey.ruleSource(lid, loc));
  }
  if (record.loadBalancer?.passToTarget !== undefined) keys.push(fieldKey.passToTarget());
  return keys;
}

/** What a record holds beyond its version: an empty record is no record. */
export function isEmptyRecord(record: OriginalsRecord | undefined): boolean {
  return recordedFields(record).length === 0;
}

/**
 * `existing` plus `add`; per field, an entry `existing` holds wins whole (its value and its `added` level).
 * `applied` is the union, restricted to fields the result holds; `declaredAt` is the newer of the two.
 */
export function mergeRecords(existing: OriginalsRecord | undefined, add: OriginalsRecord): OriginalsRecord {
  const out: OriginalsRecord = { v: 1 };
  const annotations = { ...(add.annotations ?? {}), ...(existing?.annotations ?? {}) };
  if (Object.keys(annotations).length > 0) out.annotations = annotations;

  const listeners: NonNullable<OriginalsRecord['listeners']> = {};
  for (const id of new Set([...Object.keys(add.listeners ?? {}), ...Object.keys(existing?.listeners ?? {})])) {
    const a = add.listeners?.[id] ?? {};
    const e = existing?.listeners?.[id] ?? {};
    const entry: { sourceIpType?: SourceIpType; keepaliveEnable?: 0 | 1; keepaliveAdded?: AddedLevel } = {};
    const source = e.sourceIpType ?? a.sourceIpType;
    if (source !== undefined) entry.sourceIpType = source;
    const keepalive = e.keepaliveEnable !== undefined ? e : a;
    if (keepalive.keepaliveEnable !== undefined) entry.keepaliveEnable = keepalive.keepaliveEnable;
    if (keepalive.keepaliveAdded !== undefined) entry.keepaliveAdded = keepalive.keepaliveAdded;
    if (Object.keys(entry).length > 0) listeners[id] = entry;
  }
  if (Object.keys(listeners).length > 0) out.listeners = listeners;

  const rules = { ...(add.rules ?? {}), ...(existing?.rules ?? {}) };
  // A recorded rule keeps its value and level; `enable` added later (the fragment had lost it) is loopguard's too.
  for (const [k, r] of Object.entries(rules)) if (!r.enableAdded && add.rules?.[k]?.enableAdded) rules[k] = { ...r, enableAdded: true };
  if (Object.keys(rules).length > 0) out.rules = rules;

  const pass = existing?.loadBalancer?.passToTarget ?? add.loadBalancer?.passToTarget;
  if (pass !== undefined) out.loadBalancer = { passToTarget: pass };

  const lbId = existing?.loadBalancerId ?? add.loadBalancerId;
  if (lbId) out.loadBalancerId = lbId;

  const declared = [existing?.declaredAt, add.declaredAt].filter((t): t is string => t !== undefined).sort((x, y) => Date.parse(y) - Date.parse(x))[0];
  if (declared) out.declaredAt = declared;
  return withApplied(out, [...(existing?.applied ?? []), ...(add.applied ?? [])]);
}

/** The record with `applied` set to `keys` (deduplicated, sorted), keeping only fields the record holds. */
export function withApplied(record: OriginalsRecord, keys: readonly string[]): OriginalsRecord {
  const held = new Set(recordedFields(record));
  const applied = [...new Set(keys)].filter((k) => held.has(k)).sort();
  const { applied: _drop, ...rest } = record;
  return applied.length > 0 ? { ...rest, applied } : rest;
}

/** Order-independent equality of two records. */
export function sameRecord(a: OriginalsRecord | undefined, b: OriginalsRecord | undefined): boolean {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([x], [y]) => x.localeCompare(y))
              .map(([k, x]) => [k, canon(x)]),
          )
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

/**
 * The record without `keys` (fields given back by a release), `applied` pruned to what is left. Entries of
 * fields not named stay, including ones written after the plan was made (the executor applies this to the
 * record as it reads it, never to the plan's copy).
 */
export function withoutFields(record: OriginalsRecord | undefined, keys: readonly string[]): OriginalsRecord {
  const out: OriginalsRecord = structuredClone(record ?? { v: 1 });
  const drop = new Set(keys);
  for (const k of Object.keys(out.annotations ?? {})) if (drop.has(fieldKey.annotation(k))) delete out.annotations![k];
  for (const [id, l] of Object.entries(out.listeners ?? {})) {
    if (drop.has(fieldKey.listenerSource(id))) delete l.sourceIpType;
    if (drop.has(fieldKey.keepalive(id))) {
      delete l.keepaliveEnable;
      delete l.keepaliveAdded;
    }
    if (Object.keys(l).length === 0) delete out.listeners![id];
  }
  for (const k of Object.keys(out.rules ?? {})) {
    const [lid = '', loc = ''] = k.split('/');
    if (drop.has(fieldKey.ruleSource(lid, loc))) delete out.rules![k];
  }
  if (drop.has(fieldKey.passToTarget())) delete out.loadBalancer;
  if (out.annotations && Object.keys(out.annotations).length === 0) delete out.annotations;
  if (out.listeners && Object.keys(out.listeners).length === 0) delete out.listeners;
  if (out.rules && Object.keys(out.rules).length === 0) delete out.rules;
  const left = withApplied(out, out.applied ?? []);
  if (isEmptyRecord(left)) delete left.declaredAt;
  // The CLB id names where the CLB-side entries came from; without any, it names nothing.
  if (!left.listeners && !left.rules && !left.loadBalancer) delete left.loadBalancerId;
  return left;
}
