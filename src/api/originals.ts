// The originals a LoopbackRecord holds (`spec.originals`): per field loopguard changed, the value before its first
// change, and the bookkeeping around them. One descriptor table (RECORDED_FIELDS) says, per family of fields, how
// it is merged, forgotten, validated and described; every operation on originals below is derived from the table,
// so a new recorded field is one entry here (plus the planner that records and restores it).
//
// Rules every entry keeps: on merge an entry `existing` holds wins whole (a later "original" may be loopguard's own
// value); forget removes exactly the fields named by their keys (`fieldKey`); validation returns a sentence naming
// the offending entry (a stored record is input like any other: an invalid one is reported, never acted on).
import { isClbId, type SourceIpType } from './annotations.js';

/**
 * What loopguard added to a TkeServiceConfig when it first declared a field that the config did not declare
 * (innermost first): the field itself, the rule's `healthCheck` object, the rule entry, the rule list, the
 * domain entry, the domain list, the l7Listener entry, the `l7Listeners` list, `loadBalancer`, `spec`.
 * Absent: the field was declared (the revert sets the recorded value back and leaves the declaration).
 */
export const ADDED_LEVELS = ['field', 'healthCheck', 'rule', 'rules', 'domain', 'domains', 'listener', 'listeners', 'loadBalancer', 'spec'] as const;
export type AddedLevel = (typeof ADDED_LEVELS)[number];

/**
 * What loopguard changed on a target and the value before its first change: the `originals` of the target's
 * LoopbackRecord (src/api/loopbackrecord.ts), written *before* the change, so a restart at any point can restore.
 */
export interface Originals {
  v: 1;
  /** Annotation values before loopguard's change; `null` = the annotation was absent. */
  annotations?: Record<string, string | null>;
  /**
   * Per CLB listener id: original HealthCheck.SourceIpType / KeepaliveEnable; `keepaliveAdded`: what loopguard
   * added to the TkeServiceConfig to declare keepaliveEnable (absent: it was declared).
   */
  listeners?: Record<string, { sourceIpType?: SourceIpType; keepaliveEnable?: 0 | 1; keepaliveAdded?: AddedLevel }>;
  /**
   * Per `<listenerId>/<locationId>`: original rule HealthCheck.SourceIpType; `added` as `keepaliveAdded`;
   * `enableAdded`: loopguard added `healthCheck.enable` to the rule's existing `healthCheck` (the revert removes that
   * field alone; a `healthCheck` loopguard created, `added` ≥ healthCheck, goes whole with its `enable`).
   */
  rules?: Record<string, { sourceIpType: SourceIpType; added?: AddedLevel; enableAdded?: boolean }>;
  /** Original CLB attributes. */
  loadBalancer?: { passToTarget?: boolean };
  /**
   * The CLB the listener, rule and attribute entries were read from. Restores go there, never to whatever CLB id
   * the target's (user-writable) annotation names at release time.
   */
  loadBalancerId?: string;
  /**
   * A Gateway's: the EnvoyProxy whose `envoyService.annotations` the annotation entries were written to (docs/gateways.md
   * §3). Restores go there, also once the Gateway is gone: the EnvoyProxy outlives it.
   */
  envoyProxy?: { namespace: string; name: string };
  /**
   * Fields (`fieldKey`) loopguard has seen take effect. The one drift rule: such a field found back at its
   * original was put back outside loopguard.
   */
  applied?: string[];
  /**
   * When loopguard last asked TKE for something through the target (L7 fields declared in a TkeServiceConfig, a
   * prevent-loopback or pass-to-target annotation set, or taken off in a release for kube-proxy to unbind the VIP):
   * TKE's grace period runs from here, across restarts. The newest wins on merge.
   */
  declaredAt?: string;
}

/** Stable names of the fields originals can hold, used in `applied` and to forget fields given back. */
export const fieldKey = {
  listenerSource: (listenerId: string) => `listener/${listenerId}/sourceIpType`,
  keepalive: (listenerId: string) => `listener/${listenerId}/keepaliveEnable`,
  ruleSource: (listenerId: string, locationId: string) => `rule/${listenerId}/${locationId}/sourceIpType`,
  annotation: (key: string) => `annotation/${key}`,
  passToTarget: () => 'loadBalancer/passToTarget',
} as const;

/** The key of a rule entry in `Originals.rules`. */
export function ruleKey(listenerId: string, locationId: string): string {
  return `${listenerId}/${locationId}`;
}

/** One family of recorded fields (or of bookkeeping), and how each operation on originals treats it. */
export interface FieldFamily {
  /** The property of `Originals` the family lives in. */
  readonly name: Exclude<keyof Originals, 'v'>;
  /** Its entries are CLB values (they name `loadBalancerId` as where they came from). */
  readonly clbSide?: boolean;
  /** The field keys the family holds in `o` (bookkeeping holds none). */
  keys(o: Originals): string[];
  /** Sets the family in `out` from `existing` and `add` (existing entries win); `out` holds the families before it. */
  merge(out: Originals, existing: Originals | undefined, add: Originals): void;
  /** Removes from `out` (a copy it may change) the fields named in `drop`; `out` holds the families before it, already forgotten. */
  forget(out: Originals, drop: ReadonlySet<string>): void;
  /** An error sentence when the stored value is malformed, else undefined. */
  validate(value: unknown): string | undefined;
  /** Its part of a step's text ("2 listener(s)"); `position` orders the parts in the text. */
  readonly summary?: { position: number; text(o: Originals): string | undefined };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isBit(v: unknown): v is 0 | 1 {
  return v === 0 || v === 1;
}

function isAddedLevel(v: unknown): v is AddedLevel {
  return typeof v === 'string' && (ADDED_LEVELS as readonly string[]).includes(v);
}

const count = (o: object | undefined, what: string): string | undefined => {
  const n = Object.keys(o ?? {}).length;
  return n > 0 ? `${n} ${what}(s)` : undefined;
};
const splitRuleKey = (k: string): [string, string] => {
  const [lid = '', loc = ''] = k.split('/');
  return [lid, loc];
};
const q = JSON.stringify;

const annotations: FieldFamily = {
  name: 'annotations',
  keys: (o) => Object.keys(o.annotations ?? {}).map((k) => fieldKey.annotation(k)),
  merge(out, existing, add) {
    const merged = { ...(add.annotations ?? {}), ...(existing?.annotations ?? {}) };
    if (Object.keys(merged).length > 0) out.annotations = merged;
  },
  forget(out, drop) {
    for (const k of Object.keys(out.annotations ?? {})) if (drop.has(fieldKey.annotation(k))) delete out.annotations![k];
    if (out.annotations && Object.keys(out.annotations).length === 0) delete out.annotations;
  },
  validate(v) {
    if (!isObject(v)) return '"annotations" must be an object';
    for (const [k, x] of Object.entries(v)) if (x !== null && typeof x !== 'string') return `annotations[${q(k)}] must be a string or null`;
    return undefined;
  },
  summary: { position: 3, text: (o) => count(o.annotations, 'annotation') },
};

type ListenerEntry = NonNullable<Originals['listeners']>[string];

const listeners: FieldFamily = {
  name: 'listeners',
  clbSide: true,
  keys: (o) =>
    Object.entries(o.listeners ?? {}).flatMap(([id, l]) => [
      ...(l.sourceIpType !== undefined ? [fieldKey.listenerSource(id)] : []),
      ...(l.keepaliveEnable !== undefined ? [fieldKey.keepalive(id)] : []),
    ]),
  merge(out, existing, add) {
    const merged: NonNullable<Originals['listeners']> = {};
    for (const id of new Set([...Object.keys(add.listeners ?? {}), ...Object.keys(existing?.listeners ?? {})])) {
      const a = add.listeners?.[id] ?? {};
      const e = existing?.listeners?.[id] ?? {};
      const entry: ListenerEntry = {};
      const source = e.sourceIpType ?? a.sourceIpType;
      if (source !== undefined) entry.sourceIpType = source;
      // keepaliveEnable and the level loopguard added to declare it are one entry: they win together.
      const keepalive = e.keepaliveEnable !== undefined ? e : a;
      if (keepalive.keepaliveEnable !== undefined) entry.keepaliveEnable = keepalive.keepaliveEnable;
      if (keepalive.keepaliveAdded !== undefined) entry.keepaliveAdded = keepalive.keepaliveAdded;
      if (Object.keys(entry).length > 0) merged[id] = entry;
    }
    if (Object.keys(merged).length > 0) out.listeners = merged;
  },
  forget(out, drop) {
    for (const [id, l] of Object.entries(out.listeners ?? {})) {
      if (drop.has(fieldKey.listenerSource(id))) delete l.sourceIpType;
      if (drop.has(fieldKey.keepalive(id))) {
        delete l.keepaliveEnable;
        delete l.keepaliveAdded;
      }
      if (Object.keys(l).length === 0) delete out.listeners![id];
    }
    if (out.listeners && Object.keys(out.listeners).length === 0) delete out.listeners;
  },
  validate(v) {
    if (!isObject(v)) return '"listeners" must be an object';
    for (const [id, l] of Object.entries(v)) {
      if (!isObject(l)) return `listeners[${q(id)}] must be an object`;
      if (l.sourceIpType !== undefined && !isBit(l.sourceIpType)) return `listeners[${q(id)}].sourceIpType must be 0 or 1`;
      if (l.keepaliveEnable !== undefined && !isBit(l.keepaliveEnable)) return `listeners[${q(id)}].keepaliveEnable must be 0 or 1`;
      if (l.keepaliveAdded !== undefined && !isAddedLevel(l.keepaliveAdded)) return `listeners[${q(id)}].keepaliveAdded must be one of ${ADDED_LEVELS.join(', ')}`;
    }
    return undefined;
  },
  summary: { position: 1, text: (o) => count(o.listeners, 'listener') },
};

const rules: FieldFamily = {
  name: 'rules',
  clbSide: true,
  keys: (o) => Object.keys(o.rules ?? {}).map((k) => fieldKey.ruleSource(...splitRuleKey(k))),
  merge(out, existing, add) {
    const merged = { ...(add.rules ?? {}), ...(existing?.rules ?? {}) };
    // A recorded rule keeps its value and level; `enable` added later (the fragment had lost it) is loopguard's too.
    for (const [k, r] of Object.entries(merged)) if (!r.enableAdded && add.rules?.[k]?.enableAdded) merged[k] = { ...r, enableAdded: true };
    if (Object.keys(merged).length > 0) out.rules = merged;
  },
  forget(out, drop) {
    for (const k of Object.keys(out.rules ?? {})) if (drop.has(fieldKey.ruleSource(...splitRuleKey(k)))) delete out.rules![k];
    if (out.rules && Object.keys(out.rules).length === 0) delete out.rules;
  },
  validate(v) {
    if (!isObject(v)) return '"rules" must be an object';
    for (const [id, r] of Object.entries(v)) {
      if (!isObject(r) || !isBit(r.sourceIpType)) return `rules[${q(id)}].sourceIpType must be 0 or 1`;
      if (r.added !== undefined && !isAddedLevel(r.added)) return `rules[${q(id)}].added must be one of ${ADDED_LEVELS.join(', ')}`;
      if (r.enableAdded !== undefined && typeof r.enableAdded !== 'boolean') return `rules[${q(id)}].enableAdded must be a boolean`;
    }
    return undefined;
  },
  summary: { position: 2, text: (o) => count(o.rules, 'rule') },
};

const loadBalancer: FieldFamily = {
  name: 'loadBalancer',
  clbSide: true,
  keys: (o) => (o.loadBalancer?.passToTarget !== undefined ? [fieldKey.passToTarget()] : []),
  merge(out, existing, add) {
    const pass = existing?.loadBalancer?.passToTarget ?? add.loadBalancer?.passToTarget;
    if (pass !== undefined) out.loadBalancer = { passToTarget: pass };
  },
  forget(out, drop) {
    if (drop.has(fieldKey.passToTarget())) delete out.loadBalancer;
  },
  validate(v) {
    if (!isObject(v)) return '"loadBalancer" must be an object';
    if (v.passToTarget !== undefined && typeof v.passToTarget !== 'boolean') return 'loadBalancer.passToTarget must be a boolean';
    return undefined;
  },
  summary: { position: 4, text: (o) => (o.loadBalancer?.passToTarget !== undefined ? 'LoadBalancerPassToTarget' : undefined) },
};

// ---- bookkeeping: no fields of their own; they come after the field families (they read what those left) ----

const loadBalancerId: FieldFamily = {
  name: 'loadBalancerId',
  keys: () => [],
  merge(out, existing, add) {
    const id = existing?.loadBalancerId ?? add.loadBalancerId;
    if (id) out.loadBalancerId = id;
  },
  forget(out) {
    // The CLB id names where the CLB-side entries came from; without any, it names nothing.
    if (!RECORDED_FIELDS.some((f) => f.clbSide && out[f.name] !== undefined)) delete out.loadBalancerId;
  },
  validate: (v) => (typeof v !== 'string' || !isClbId(v) ? '"loadBalancerId" must be a CLB id (lb-…)' : undefined),
};

const envoyProxy: FieldFamily = {
  name: 'envoyProxy',
  keys: () => [],
  merge(out, existing, add) {
    const ref = existing?.envoyProxy ?? add.envoyProxy;
    if (ref) out.envoyProxy = { ...ref };
  },
  forget(out) {
    // It names where the annotation entries were written; without any, it names nothing.
    if (out.annotations === undefined) delete out.envoyProxy;
  },
  validate: (v) => (!isObject(v) || typeof v.namespace !== 'string' || typeof v.name !== 'string' || !v.namespace || !v.name ? '"envoyProxy" must name a namespace and a name' : undefined),
};

const declaredAt: FieldFamily = {
  name: 'declaredAt',
  keys: () => [],
  merge(out, existing, add) {
    const newest = [existing?.declaredAt, add.declaredAt].filter((t): t is string => t !== undefined).sort((x, y) => Date.parse(y) - Date.parse(x))[0];
    if (newest) out.declaredAt = newest;
  },
  forget(out) {
    if (isEmptyOriginals(out)) delete out.declaredAt;
  },
  validate: (v) => (typeof v !== 'string' || Number.isNaN(Date.parse(v)) ? '"declaredAt" must be an RFC 3339 time' : undefined),
};

const applied: FieldFamily = {
  name: 'applied',
  keys: () => [],
  merge(out, existing, add) {
    const keys = appliedOf(out, [...(existing?.applied ?? []), ...(add.applied ?? [])]);
    if (keys.length > 0) out.applied = keys;
  },
  forget(out) {
    const keys = appliedOf(out, out.applied ?? []);
    if (keys.length > 0) out.applied = keys;
    else delete out.applied;
  },
  validate: (v) => (!Array.isArray(v) || v.some((k) => typeof k !== 'string') ? '"applied" must be a list of strings' : undefined),
};

/**
 * The table: one entry per family, in the order of a stored record's properties (and of validation). A new
 * recorded field is one entry here (before the bookkeeping) and its property in `Originals`.
 */
export const RECORDED_FIELDS: readonly FieldFamily[] = [annotations, listeners, rules, loadBalancer, loadBalancerId, envoyProxy, declaredAt, applied];

/** `keys` deduplicated, sorted, restricted to fields `o` holds. */
function appliedOf(o: Originals, keys: readonly string[]): string[] {
  const held = new Set(recordedFields(o));
  return [...new Set(keys)].filter((k) => held.has(k)).sort();
}

/** The originals with `applied` set to `keys` (deduplicated, sorted), keeping only fields they hold. */
export function withApplied(o: Originals, keys: readonly string[]): Originals {
  const applied = appliedOf(o, keys);
  const { applied: _drop, ...rest } = o;
  return applied.length > 0 ? { ...rest, applied } : rest;
}

/** Every field key the originals hold an entry for. */
export function recordedFields(o: Originals | undefined): string[] {
  return o ? RECORDED_FIELDS.flatMap((f) => f.keys(o)) : [];
}

/** Whether the originals hold no field (only bookkeeping, or nothing): such originals are no record. */
export function isEmptyOriginals(o: Originals | undefined): boolean {
  return recordedFields(o).length === 0;
}

/**
 * `existing` plus `add`; per field, an entry `existing` holds wins whole (its value and its `added` level).
 * `applied` is the union, restricted to fields the result holds; `declaredAt` is the newer of the two.
 */
export function mergeOriginals(existing: Originals | undefined, add: Originals): Originals {
  const out: Originals = { v: 1 };
  for (const f of RECORDED_FIELDS) f.merge(out, existing, add);
  return out;
}

/**
 * The originals without the fields `keys` names (given back by a release), `applied` pruned to what is left.
 * Entries of fields not named stay, including ones written after the plan was made (the executor applies this to
 * the record as it reads it, never to the plan's copy).
 */
export function withoutFields(o: Originals | undefined, keys: readonly string[]): Originals {
  const out: Originals = structuredClone(o ?? { v: 1 });
  const drop = new Set(keys);
  for (const f of RECORDED_FIELDS) f.forget(out, drop);
  return out;
}

/** Shape check of stored originals (a LoopbackRecord's `spec.originals`); an error sentence or undefined. */
export function validateOriginals(value: unknown): string | undefined {
  if (!isObject(value)) return 'expected a JSON object';
  if (value.v !== 1) return 'unsupported record version (expected "v": 1)';
  for (const f of RECORDED_FIELDS) {
    const problem = value[f.name] !== undefined ? f.validate(value[f.name]) : undefined;
    if (problem) return problem;
  }
  return undefined;
}

/** What the originals hold, in words, for a step's line ("2 listener(s), 1 annotation(s)"). */
export function describeOriginals(o: Originals): string {
  const parts = RECORDED_FIELDS.flatMap((f) => (f.summary ? [f.summary] : []))
    .sort((a, b) => a.position - b.position)
    .flatMap((s) => s.text(o) ?? []);
  return parts.length > 0 ? parts.join(', ') : 'nothing new';
}
