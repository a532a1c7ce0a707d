// Pure: the originals record an L7 target carries (`loopguard.dev/originals` on the Ingress) and the plan to
// restore it. Originals are CLB values as observed before loopguard's first change of each field; a value
// already recorded is never overwritten (it is the true original, later values may be loopguard's own).
import { IngressAnnotation, type AddedLevel, type OriginalsRecord, type SourceIpType } from '../../api/annotations.js';
import type { FieldEdit, Removal } from './config-patch.js';

export interface OriginalsAdditions {
  /** listenerId → KeepaliveEnable before the change. */
  keepalive?: Record<string, 0 | 1>;
  /** `<listenerId>/<locationId>` → rule HealthCheck.SourceIpType before the change. */
  ruleSource?: Record<string, SourceIpType>;
  /** listenerId → what loopguard adds to the config to declare keepaliveEnable (absent: declared already). */
  keepaliveAdded?: Record<string, AddedLevel>;
  /** `<listenerId>/<locationId>` → what loopguard adds to declare the rule's sourceIpType (absent: declared already). */
  ruleAdded?: Record<string, AddedLevel>;
  /** annotation → value before loopguard's change (null: absent). */
  annotations?: Record<string, string | null>;
  passToTarget?: boolean;
}

export function ruleKey(listenerId: string, locationId: string): string {
  return `${listenerId}/${locationId}`;
}

/** `existing` plus `add`, existing entries winning. Returns the same shape whether or not anything was added. */
export function mergeOriginals(existing: OriginalsRecord | undefined, add: OriginalsAdditions): OriginalsRecord {
  const out: OriginalsRecord = { v: 1 };
  const annotations = { ...(add.annotations ?? {}), ...(existing?.annotations ?? {}) };
  if (Object.keys(annotations).length > 0) out.annotations = annotations;
  const listeners: NonNullable<OriginalsRecord['listeners']> = {};
  for (const [id, v] of Object.entries(add.keepalive ?? {})) {
    const added = add.keepaliveAdded?.[id];
    listeners[id] = { keepaliveEnable: v, ...(added !== undefined ? { keepaliveAdded: added } : {}) };
  }
  for (const [id, l] of Object.entries(existing?.listeners ?? {})) {
    const merged = { ...(listeners[id] ?? {}), ...l };
    // The "added" flag belongs to the recorded value: a recorded value keeps its own (absent: declared).
    if (l.keepaliveEnable !== undefined && l.keepaliveAdded === undefined) delete merged.keepaliveAdded;
    listeners[id] = merged;
  }
  if (Object.keys(listeners).length > 0) out.listeners = listeners;
  const rules: NonNullable<OriginalsRecord['rules']> = {};
  for (const [k, v] of Object.entries(add.ruleSource ?? {})) {
    const added = add.ruleAdded?.[k];
    rules[k] = { sourceIpType: v, ...(added !== undefined ? { added } : {}) };
  }
  for (const [k, r] of Object.entries(existing?.rules ?? {})) rules[k] = r;
  if (Object.keys(rules).length > 0) out.rules = rules;
  const pass = existing?.loadBalancer?.passToTarget ?? add.passToTarget;
  if (existing?.loadBalancer || pass !== undefined) out.loadBalancer = { ...(existing?.loadBalancer ?? {}), ...(pass !== undefined ? { passToTarget: pass } : {}) };
  return out;
}

/** Stable comparison of two records (key order independent). */
export function sameOriginals(a: OriginalsRecord | undefined, b: OriginalsRecord | undefined): boolean {
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => x.localeCompare(y)).map(([k, x]) => [k, canon(x)])) : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

/** What the CLB currently has, enough to map record keys (listener ids, location ids) onto config fragments. */
export interface ClbListenerView {
  listenerId: string;
  protocol: string;
  port: number;
  keepaliveEnable?: number;
  rules?: readonly { locationId: string; domain: string; url: string; healthCheck?: { sourceIpType?: number } }[];
}

export interface RevertPlan {
  /** Config fields to set back to their recorded originals (declared ones and, first, those loopguard added). */
  edits: FieldEdit[];
  /** Declarations loopguard added, to take out of the config once the CLB shows the originals. */
  removals: Removal[];
  /** PassToTarget to restore, if loopguard changed it. */
  passToTarget?: boolean;
  /** Annotations to restore on the Ingress (null: remove), besides dropping loopguard's own. */
  annotations: Record<string, string | null>;
  /** Record entries whose listener/rule no longer exists on the CLB (nothing to restore). */
  gone: string[];
}

export function revertPlan(record: OriginalsRecord, listeners: readonly ClbListenerView[]): RevertPlan {
  const edits: FieldEdit[] = [];
  const removals: Removal[] = [];
  const gone: string[] = [];
  for (const [id, l] of Object.entries(record.listeners ?? {})) {
    if (l.keepaliveEnable === undefined) continue;
    const found = listeners.find((x) => x.listenerId === id);
    if (!found) {
      gone.push(id);
      continue;
    }
    const edit: FieldEdit = { kind: 'keepalive', protocol: found.protocol, port: found.port, value: l.keepaliveEnable };
    edits.push(edit);
    if (l.keepaliveAdded !== undefined) removals.push({ edit, level: l.keepaliveAdded });
  }
  for (const [key, r] of Object.entries(record.rules ?? {})) {
    const [lid = '', loc = ''] = key.split('/');
    const l = listeners.find((x) => x.listenerId === lid);
    const rule = l?.rules?.find((x) => x.locationId === loc);
    if (!l || !rule) {
      gone.push(key);
      continue;
    }
    const edit: FieldEdit = { kind: 'ruleSource', protocol: l.protocol, port: l.port, domain: rule.domain, url: rule.url, value: r.sourceIpType };
    edits.push(edit);
    if (r.added !== undefined) removals.push({ edit, level: r.added });
  }
  return {
    edits,
    removals,
    ...(record.loadBalancer?.passToTarget !== undefined ? { passToTarget: record.loadBalancer.passToTarget } : {}),
    annotations: { ...(record.annotations ?? {}) },
    gone,
  };
}

/** Whether the CLB shows every recorded original again (what TKE must have applied before the auto annotation goes). */
export function clbRestored(record: OriginalsRecord, listeners: readonly ClbListenerView[]): boolean {
  for (const [id, l] of Object.entries(record.listeners ?? {})) {
    const found = listeners.find((x) => x.listenerId === id);
    if (found && l.keepaliveEnable !== undefined && (found.keepaliveEnable ?? 0) !== l.keepaliveEnable) return false;
  }
  for (const [key, r] of Object.entries(record.rules ?? {})) {
    const [lid = '', loc = ''] = key.split('/');
    const rule = listeners.find((x) => x.listenerId === lid)?.rules?.find((x) => x.locationId === loc);
    if (rule && (rule.healthCheck?.sourceIpType ?? 0) !== r.sourceIpType) return false;
  }
  return true;
}

/** Whether loopguard added the `-auto` annotation (so TKE's auto config exists because of loopguard). */
export function autoAnnotationAddedByLoopguard(record: OriginalsRecord | undefined): boolean {
  return !!record?.annotations && IngressAnnotation.TkeServiceConfigAuto in record.annotations;
}
