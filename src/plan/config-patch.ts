// Pure: the JSON patch (RFC 6902) that sets loopguard's fields in a TkeServiceConfig, and nothing else.
// The listener list belongs to TKE's ingress controller (docs/architecture.md §5 "Never clobber"), so loopguard never replaces it:
// every op addresses one field (`keepaliveEnable` of one l7Listener, `healthCheck.sourceIpType` of one rule),
// each index is pinned by `test` ops on the element's identity (protocol/port, domain, url), and the whole
// patch by a `test` on /metadata/resourceVersion. A fragment that does not exist yet (hand-made configs) is
// added with only loopguard's field declared, appended with `-`, never by rewriting its parent list.
// Every rule `healthCheck` loopguard writes carries `enable` (TKE's reference marks it required), as the CLB rule's
// switch is now; a fragment that lacks it gets it beside `sourceIpType` (docs/execution.md "healthCheck.enable").

import { ADDED_LEVELS, type AddedLevel } from '../api/originals.js';
import type { JsonPatchOp } from '../api/json-patch.js';

/** One field loopguard wants to hold a value in the config. `domain` is the CLB rule's Domain (the VIP for a host-less rule). */
export type FieldEdit =
  | { kind: 'keepalive'; protocol: string; port: number; value: 0 | 1 }
  | { kind: 'ruleSource'; protocol: string; port: number; domain: string; url: string; value: 0 | 1; enable: boolean };

/** A rule-source edit: `enable` is the CLB rule's current HealthSwitch (on when the CLB does not say). */
export type RuleSourceEdit = Extract<FieldEdit, { kind: 'ruleSource' }>;

interface RuleFragment {
  url?: unknown;
  healthCheck?: unknown;
  [field: string]: unknown;
}
interface DomainFragment {
  domain?: unknown;
  rules?: unknown;
  [field: string]: unknown;
}
interface ListenerFragment {
  protocol?: unknown;
  port?: unknown;
  keepaliveEnable?: unknown;
  domains?: unknown;
  [field: string]: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function arrayOf<T>(v: unknown): T[] | undefined {
  return Array.isArray(v) ? (v as T[]) : undefined;
}

function sameListenerFragment(f: ListenerFragment, protocol: string, port: number): boolean {
  return typeof f.protocol === 'string' && f.protocol.toUpperCase() === protocol.toUpperCase() && f.port === port;
}

/** Config domain "" (or absent) is the CLB's default domain, whose CLB rule Domain is the VIP (tencent-cloud.md §1). */
function sameDomainFragment(configDomain: unknown, clbDomain: string, vip: string | undefined): boolean {
  const d = (typeof configDomain === 'string' ? configDomain : '').toLowerCase();
  const r = clbDomain.toLowerCase();
  return d === r || (d === '' && vip !== undefined && r === vip.toLowerCase());
}

function indexIn<T>(list: T[] | undefined, match: (x: T) => boolean): number {
  return list ? list.findIndex((x) => isObject(x) && match(x)) : -1;
}

/**
 * The fragments on the way to an edit's field in `spec`, as far as they exist: each list, the index of the edit's
 * element in it (-1: none) and that element, and a rule's `healthCheck` object (`hc`); a keepalive edit's path ends
 * at its listener.
 */
function pathOf(spec: unknown, edit: FieldEdit, vip: string | undefined) {
  const lb = isObject(spec) && isObject(spec.loadBalancer) ? spec.loadBalancer : undefined;
  const listeners = arrayOf<ListenerFragment>(lb?.l7Listeners);
  const li = indexIn(listeners, (f) => sameListenerFragment(f, edit.protocol, edit.port));
  const l = listeners?.[li];
  if (!l || edit.kind !== 'ruleSource') return { lb, listeners, li, l, di: -1, ri: -1 };
  const domains = arrayOf<DomainFragment>(l.domains);
  const di = indexIn(domains, (x) => sameDomainFragment(x.domain, edit.domain, vip));
  const d = domains?.[di];
  const rules = arrayOf<RuleFragment>(d?.rules);
  const ri = indexIn(rules, (x) => x.url === edit.url);
  const r = rules?.[ri];
  return { lb, listeners, li, l, domains, di, d, rules, ri, r, hc: isObject(r?.healthCheck) ? r.healthCheck : undefined };
}

/** The value the config currently declares for an edit's field (undefined: not declared / fragment missing). */
export function declaredValue(spec: unknown, edit: FieldEdit, vip: string | undefined): number | undefined {
  const { l, hc } = pathOf(spec, edit, vip);
  const value = edit.kind === 'keepalive' ? l?.keepaliveEnable : hc?.sourceIpType;
  return typeof value === 'number' ? value : undefined;
}

/**
 * Whether declaring the edit adds `healthCheck.enable` to a `healthCheck` object the config already has (a
 * fragment loopguard creates carries it anyway): the rule's fragment exists and lacks it (docs/tencent-cloud.md §1).
 */
export function enableMissing(spec: unknown, edit: FieldEdit, vip: string | undefined): boolean {
  const { hc } = pathOf(spec, edit, vip);
  return hc !== undefined && hc.enable === undefined;
}

/**
 * What `buildConfigPatch` would add to `spec` to declare the edit's field: undefined when the field is declared
 * (whatever its value), else the outermost fragment it creates (see `AddedLevel`).
 */
export function addedLevel(spec: unknown, edit: FieldEdit, vip: string | undefined): AddedLevel | undefined {
  if (!isObject(spec)) return 'spec';
  const p = pathOf(spec, edit, vip);
  if (!p.lb) return 'loadBalancer';
  if (!p.listeners) return 'listeners';
  if (!p.l) return 'listener';
  if (edit.kind === 'keepalive') return p.l.keepaliveEnable !== undefined ? undefined : 'field';
  if (!p.domains) return 'domains';
  if (!p.d) return 'domain';
  if (!p.rules) return 'rules';
  if (!p.r) return 'rule';
  if (!p.hc) return 'healthCheck';
  return p.hc.sourceIpType !== undefined ? undefined : 'field';
}

/**
 * A declaration loopguard added (recorded as `AddedLevel`) to take out of the config again on revert; `enableAdded`:
 * it also added `healthCheck.enable` to a `healthCheck` object that was there (that field goes alone).
 */
export interface Removal {
  edit: FieldEdit;
  level?: AddedLevel;
  enableAdded?: boolean;
}

/**
 * Ops that take out of `spec` what loopguard added for each removal: the field, or the whole fragment it created
 * (a list or object it created goes only when nothing else is left in it). Each removal is planned against the
 * spec as the previous ones leave it, so indices stay right and a fragment already gone is skipped. Every
 * remove is pinned by identity tests. Without resourceVersion guard (see `guardedPatch`).
 */
export function buildRemovalPatch(spec: unknown, removals: readonly Removal[], vip: string | undefined): JsonPatchOp[] {
  let doc: { spec: unknown } = { spec: structuredClone(spec) };
  const all: JsonPatchOp[] = [];
  for (const r of removals) {
    const ops = removalOps(doc.spec, r, vip);
    if (ops.length === 0) continue;
    doc = applyJsonPatch(doc, ops);
    all.push(...ops);
  }
  return all;
}

function removalOps(spec: unknown, { edit, level: recorded, enableAdded }: Removal, vip: string | undefined): JsonPatchOp[] {
  // Only `enable` added: nothing else of the rule's declaration goes.
  const level: AddedLevel | 'none' = recorded ?? 'none';
  const atLeast = (than: AddedLevel): boolean => level !== 'none' && ADDED_LEVELS.indexOf(level) >= ADDED_LEVELS.indexOf(than);
  const { lb, listeners, li, l, domains, di, d, rules, ri, r, hc } = pathOf(spec, edit, vip);
  if (!lb || !listeners || !l) return [];
  const base = '/spec/loadBalancer/l7Listeners';
  const lp = `${base}/${li}`;
  const ops: JsonPatchOp[] = [{ op: 'test', path: `${lp}/protocol`, value: l.protocol }, { op: 'test', path: `${lp}/port`, value: l.port }];
  // Containers loopguard created go when empty; tested so a concurrent addition fails the patch.
  const removeListener = (): JsonPatchOp[] => {
    const out: JsonPatchOp[] = [...ops, { op: 'remove', path: lp }];
    if (!atLeast('listeners') || listeners.length > 1) return out;
    out.push({ op: 'test', path: base, value: [] }, { op: 'remove', path: base });
    if (!atLeast('loadBalancer') || Object.keys(lb).length > 1) return out;
    out.push({ op: 'test', path: '/spec/loadBalancer', value: {} }, { op: 'remove', path: '/spec/loadBalancer' });
    if (!atLeast('spec') || Object.keys(spec as object).length > 1) return out;
    out.push({ op: 'test', path: '/spec', value: {} }, { op: 'remove', path: '/spec' });
    return out;
  };
  if (atLeast('listener')) return removeListener();
  if (edit.kind === 'keepalive') return level === 'none' || l.keepaliveEnable === undefined ? [] : [...ops, { op: 'remove', path: `${lp}/keepaliveEnable` }];

  if (!domains || !d) return [];
  const dp = `${lp}/domains/${di}`;
  if (d.domain !== undefined) ops.push({ op: 'test', path: `${dp}/domain`, value: d.domain });
  if (atLeast('domain')) {
    ops.push({ op: 'remove', path: dp });
    if (level === 'domains' && domains.length === 1) ops.push({ op: 'test', path: `${lp}/domains`, value: [] }, { op: 'remove', path: `${lp}/domains` });
    return ops;
  }
  if (!rules || !r) return [];
  const rp = `${dp}/rules/${ri}`;
  ops.push({ op: 'test', path: `${rp}/url`, value: r.url });
  if (atLeast('rule')) {
    ops.push({ op: 'remove', path: rp });
    if (level === 'rules' && rules.length === 1) ops.push({ op: 'test', path: `${dp}/rules`, value: [] }, { op: 'remove', path: `${dp}/rules` });
    return ops;
  }
  if (!hc) return [];
  const fields: string[] = [];
  if (level === 'healthCheck' || level === 'field') fields.push('sourceIpType');
  if (level === 'healthCheck' || enableAdded) fields.push('enable');
  // A healthCheck loopguard created goes whole, unless someone has declared more in it since: then only its fields.
  if (level === 'healthCheck' && Object.keys(hc).every((k) => fields.includes(k))) return [...ops, { op: 'remove', path: `${rp}/healthCheck` }];
  const present = fields.filter((f) => hc[f] !== undefined);
  return present.length === 0 ? [] : [...ops, ...present.map((f): JsonPatchOp => ({ op: 'remove', path: `${rp}/healthCheck/${f}` }))];
}

/** The edits whose field does not hold the wanted value in `spec`, or whose rule `healthCheck` lacks `enable`. */
export function pendingEdits(spec: unknown, edits: readonly FieldEdit[], vip: string | undefined): FieldEdit[] {
  return edits.filter((e) => declaredValue(spec, e, vip) !== e.value || enableMissing(spec, e, vip));
}

/** A rule fragment loopguard adds; its `healthCheck` (also where a rule has none): the source, and the switch as the CLB has it. */
function newRule(e: RuleSourceEdit): { url: string; healthCheck: Record<string, unknown> } {
  return { url: e.url, healthCheck: { enable: e.enable, sourceIpType: e.value } };
}

/** New domain fragments holding the edits' rules, one per config domain, in first-seen order. */
function newDomains(edits: readonly RuleSourceEdit[], vip: string | undefined): { domain: string; rules: RuleFragment[] }[] {
  const domains: { domain: string; rules: RuleFragment[] }[] = [];
  for (const e of edits) {
    // The config's domain for a CLB rule: "" for the VIP's default domain.
    const domain = vip !== undefined && e.domain.toLowerCase() === vip.toLowerCase() ? '' : e.domain;
    let d = domains.find((x) => x.domain.toLowerCase() === domain.toLowerCase());
    if (!d) domains.push((d = { domain, rules: [] }));
    d.rules.push(newRule(e));
  }
  return domains;
}

function ruleEdits(edits: readonly FieldEdit[]): RuleSourceEdit[] {
  return edits.filter((e): e is RuleSourceEdit => e.kind === 'ruleSource');
}

/**
 * Ops that make `spec` declare every edit's value; empty when it already does. Without resourceVersion guard
 * (see `guardedPatch`). Existing fragments get single-field ops behind identity tests; missing ones are added.
 */
export function buildConfigPatch(spec: unknown, edits: readonly FieldEdit[], vip: string | undefined): JsonPatchOp[] {
  const todo = pendingEdits(spec, edits, vip);
  if (todo.length === 0) return [];
  const ops: JsonPatchOp[] = [];
  if (!isObject(spec)) ops.push({ op: 'add', path: '/spec', value: {} });
  const { lb, listeners } = pathOf(spec, todo[0] as FieldEdit, vip);
  if (!lb) ops.push({ op: 'add', path: '/spec/loadBalancer', value: {} });
  const base = '/spec/loadBalancer/l7Listeners';

  // Group by listener, keeping first-seen order so the output is deterministic.
  const byListener = new Map<string, FieldEdit[]>();
  for (const e of todo) {
    const key = `${e.protocol.toUpperCase()}:${e.port}`;
    byListener.set(key, [...(byListener.get(key) ?? []), e]);
  }
  const newListeners: ListenerFragment[] = [];
  for (const group of byListener.values()) {
    const first = group[0] as FieldEdit;
    const { li, l } = pathOf(spec, first, vip);
    if (!l) {
      const f: ListenerFragment = { protocol: first.protocol.toUpperCase(), port: first.port };
      for (const e of group) if (e.kind === 'keepalive') f.keepaliveEnable = e.value;
      const domains = newDomains(ruleEdits(group), vip);
      if (domains.length > 0) f.domains = domains;
      newListeners.push(f);
      continue;
    }
    const lp = `${base}/${li}`;
    ops.push({ op: 'test', path: `${lp}/protocol`, value: l.protocol }, { op: 'test', path: `${lp}/port`, value: l.port });
    for (const e of group) if (e.kind === 'keepalive') ops.push({ op: 'add', path: `${lp}/keepaliveEnable`, value: e.value });
    ops.push(...ruleOps(spec, lp, l, ruleEdits(group), vip));
  }
  if (newListeners.length > 0) {
    if (!listeners) ops.push({ op: 'add', path: base, value: newListeners });
    else for (const f of newListeners) ops.push({ op: 'add', path: `${base}/-`, value: f });
  }
  return ops;
}

function ruleOps(spec: unknown, lp: string, l: ListenerFragment, edits: readonly RuleSourceEdit[], vip: string | undefined): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const inNewDomains: RuleSourceEdit[] = [];
  const appendRules = new Map<number, { d: DomainFragment; rules: RuleFragment[] }>();
  for (const e of edits) {
    const { di, d, ri, r, hc } = pathOf(spec, e, vip);
    if (!d) {
      inNewDomains.push(e);
      continue;
    }
    if (!r) {
      const append = appendRules.get(di) ?? { d, rules: [] };
      append.rules.push(newRule(e));
      appendRules.set(di, append);
      continue;
    }
    const dp = `${lp}/domains/${di}`;
    const rp = `${dp}/rules/${ri}`;
    if (d.domain !== undefined) ops.push({ op: 'test', path: `${dp}/domain`, value: d.domain });
    ops.push({ op: 'test', path: `${rp}/url`, value: r.url });
    if (!hc) {
      ops.push({ op: 'add', path: `${rp}/healthCheck`, value: newRule(e).healthCheck });
      continue;
    }
    if (hc.sourceIpType !== e.value) ops.push({ op: 'add', path: `${rp}/healthCheck/sourceIpType`, value: e.value });
    if (hc.enable === undefined) ops.push({ op: 'add', path: `${rp}/healthCheck/enable`, value: e.enable });
  }
  for (const [di, { d, rules: added }] of appendRules) {
    const dp = `${lp}/domains/${di}`;
    if (d.domain !== undefined) ops.push({ op: 'test', path: `${dp}/domain`, value: d.domain });
    if (arrayOf(d.rules)) for (const r of added) ops.push({ op: 'add', path: `${dp}/rules/-`, value: r });
    else ops.push({ op: 'add', path: `${dp}/rules`, value: added });
  }
  const domains = newDomains(inNewDomains, vip);
  if (domains.length > 0) {
    if (arrayOf(l.domains)) for (const d of domains) ops.push({ op: 'add', path: `${lp}/domains/-`, value: d });
    else ops.push({ op: 'add', path: `${lp}/domains`, value: domains });
  }
  return ops;
}

/** Applies a patch to a plain object (add/replace/remove/test), for tests and for re-checking a plan. Throws on a failed test. */
export function applyJsonPatch<T>(doc: T, ops: readonly JsonPatchOp[]): T {
  const root = structuredClone(doc) as unknown;
  const wrapper: { root: unknown } = { root };
  for (const o of ops) {
    const segments = o.path === '' ? [] : o.path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let parent: unknown = wrapper;
    let key: string = 'root';
    for (const s of segments) {
      parent = (parent as Record<string, unknown>)[key];
      key = s;
      if (parent === undefined || parent === null || typeof parent !== 'object') throw new Error(`path ${o.path}: parent missing`);
    }
    const container = parent as Record<string, unknown> | unknown[];
    if (o.op === 'test') {
      const current = Array.isArray(container) ? container[Number(key)] : container[key];
      if (JSON.stringify(current) !== JSON.stringify(o.value)) throw new Error(`test failed at ${o.path}`);
    } else if (o.op === 'remove') {
      if (Array.isArray(container)) container.splice(Number(key), 1);
      else delete container[key];
    } else if (Array.isArray(container)) {
      if (key === '-') container.push(o.value);
      else if (o.op === 'add') container.splice(Number(key), 0, o.value);
      else container[Number(key)] = o.value;
    } else {
      container[key] = o.value;
    }
  }
  return wrapper.root as T;
}
