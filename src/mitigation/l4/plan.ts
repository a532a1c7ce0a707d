// Pure planning for the L4 mitigation: which listeners to write, the HealthCheck to send (as read, only
// SourceIpType changed), the originals record to keep before the first write, and the ordered steps that
// release (revert) what loopguard changed. No I/O here, so every decision is unit-tested on plain data.
// Order (architecture §5, tke-clb.md §3): originals → health-check sources → prevent-loopback; revert is the
// inverse: prevent-loopback off → sources restored → bookkeeping dropped.
import {
  LoopguardAnnotation,
  ServiceAnnotation,
  readOriginals,
  type Annotations,
  type OriginalsRecord,
  type SourceIpType,
} from '../../api/annotations.js';
import type { HealthCheck, ListenerInfo } from '../../cloud/clb-client.js';
import type { Assessment } from '../../model/assessment.js';
import type { L4DesiredState } from '../../model/desired-state.js';

export const PREVENT_LOOPBACK = ServiceAnnotation.PreventLoopback;

/** `<namespace>/<name>` of a policy, as written to `loopguard.dev/policy`. */
export function ownerOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The originals record on a Service, or undefined when absent/invalid. */
export function originalsOf(annotations: Annotations): OriginalsRecord | undefined {
  const r = readOriginals(annotations);
  return r.kind === 'value' ? r.value : undefined;
}

/** Whether loopguard keeps bookkeeping on this Service for `owner`. */
export function ownedBy(annotations: Annotations, owner: string): boolean {
  return annotations?.[LoopguardAnnotation.Policy] === owner && annotations[LoopguardAnnotation.Originals] !== undefined;
}

/**
 * Whether this Service's listeners were already converged before the current run, as far as the Service itself
 * can tell: loopguard adds prevent-loopback only after every listener it depends on read back on 100.64, so an
 * annotation loopguard set (its original, recorded, was not "true") that is still there means "was converged". Lets a
 * restarted operator call a VIP source it finds there drift, though it never saw the listener itself.
 */
export function convergedBefore(record: OriginalsRecord | undefined, annotations: Annotations): boolean {
  const original = record?.annotations?.[PREVENT_LOOPBACK];
  return original !== undefined && original !== 'true' && annotations?.[PREVENT_LOOPBACK] === 'true';
}

export interface ListenerSwitch {
  listenerId: string;
  protocol: string;
  port: number;
  from: SourceIpType;
  to: SourceIpType;
}

export interface EnforcePlan {
  loadBalancerId: string;
  /** ModifyListener calls, in order. */
  switches: ListenerSwitch[];
  /** Add `prevent-loopback: "true"` after every switch is confirmed. */
  addAnnotation: boolean;
  /** Every listener the annotation depends on (all must read back SourceIpType 1 before it is added). */
  requiredOnRange: string[];
}

/** What an Enforce assessment asks the L4 layer to do; undefined when it manages nothing or nothing is left. */
export function planEnforce(a: Assessment): EnforcePlan | undefined {
  const desired = a.desired;
  if (!desired || desired.layer !== 'L4') return undefined;
  const switches: ListenerSwitch[] = [];
  let addAnnotation = false;
  for (const c of a.changes) {
    if (c.action === 'SetListenerHealthCheckSource') {
      switches.push({ listenerId: c.listenerId, protocol: c.protocol, port: c.port, from: c.from, to: c.to });
    } else if (c.action === 'AddPreventLoopbackAnnotation') addAnnotation = true;
  }
  if (switches.length === 0 && !addAnnotation) return undefined;
  return {
    loadBalancerId: desired.loadBalancerId,
    switches,
    addAnnotation,
    requiredOnRange: desired.listeners.map((l) => l.listenerId),
  };
}

/** The HealthCheck to write: the listener's full current struct, only `SourceIpType` changed. */
export function healthCheckFor(listener: ListenerInfo, sourceIpType: SourceIpType): HealthCheck {
  return { ...(listener.healthCheck ?? {}), SourceIpType: sourceIpType };
}

/**
 * The originals record after adding what `plan` is about to change. Existing entries win (the first
 * recorded value is the original; a later run must never overwrite it with loopguard's own value).
 * Returns undefined when nothing new needs recording.
 */
export function mergeOriginals(
  existing: OriginalsRecord | undefined,
  plan: Pick<EnforcePlan, 'switches' | 'addAnnotation'>,
  currentAnnotations: Annotations,
): OriginalsRecord | undefined {
  const record: OriginalsRecord = {
    ...(existing ?? { v: 1 }),
    v: 1,
    ...(existing?.listeners ? { listeners: { ...existing.listeners } } : {}),
    ...(existing?.annotations ? { annotations: { ...existing.annotations } } : {}),
  };
  let changed = existing === undefined;
  for (const s of plan.switches) {
    const listeners = (record.listeners ??= {});
    if (listeners[s.listenerId]?.sourceIpType !== undefined) continue;
    listeners[s.listenerId] = { ...(listeners[s.listenerId] ?? {}), sourceIpType: s.from };
    changed = true;
  }
  if (plan.addAnnotation) {
    const annotations = (record.annotations ??= {});
    if (!(PREVENT_LOOPBACK in annotations)) {
      annotations[PREVENT_LOOPBACK] = currentAnnotations?.[PREVENT_LOOPBACK] ?? null;
      changed = true;
    }
  }
  return changed ? record : undefined;
}

export type ReleaseStep =
  | { step: 'RestoreAnnotation'; key: string; value: string | null }
  | { step: 'RestoreListener'; listenerId: string; sourceIpType: SourceIpType }
  | { step: 'WriteRecord'; record: OriginalsRecord | null };

export interface ReleaseOptions {
  /** Listener ids loopguard still wants on 100.64 (not restored); default none (full revert). */
  keepListeners?: ReadonlySet<string>;
  /** Keep the prevent-loopback annotation loopguard added; default false. */
  keepAnnotation?: boolean;
}

/**
 * Ordered steps to give back what the record says loopguard changed: the annotation first (so kube-proxy
 * stops binding the VIP before any source goes back to it), then the listeners, then the record itself (or
 * what remains of it). Only recorded values are touched; a recorded annotation already back at its original
 * value is left alone. Empty when nothing is to be released.
 */
export function planRelease(record: OriginalsRecord, currentAnnotations: Annotations, opts: ReleaseOptions = {}): ReleaseStep[] {
  const steps: ReleaseStep[] = [];
  const remaining: OriginalsRecord = { v: 1 };
  let released = false;
  for (const [key, original] of Object.entries(record.annotations ?? {})) {
    if (key === PREVENT_LOOPBACK && opts.keepAnnotation) {
      (remaining.annotations ??= {})[key] = original;
      continue;
    }
    released = true;
    const current = currentAnnotations?.[key] ?? null;
    if (current !== original) steps.push({ step: 'RestoreAnnotation', key, value: original });
  }
  for (const [listenerId, l] of Object.entries(record.listeners ?? {})) {
    const rest = { ...l };
    if (l.sourceIpType !== undefined) {
      if (opts.keepListeners?.has(listenerId)) {
        (remaining.listeners ??= {})[listenerId] = rest;
        continue;
      }
      released = true;
      steps.push({ step: 'RestoreListener', listenerId, sourceIpType: l.sourceIpType });
      delete rest.sourceIpType;
    }
    // Another layer's fields (keepalive) stay recorded.
    if (Object.keys(rest).length > 0) (remaining.listeners ??= {})[listenerId] = rest;
  }
  if (!released) return [];
  if (record.rules) remaining.rules = record.rules;
  if (record.loadBalancer) remaining.loadBalancer = record.loadBalancer;
  const empty = !remaining.annotations && !remaining.listeners && !remaining.rules && !remaining.loadBalancer;
  steps.push({ step: 'WriteRecord', record: empty ? null : remaining });
  return steps;
}

/** The listeners (and the annotation) an L4 desired state still wants loopguard to hold. */
export function keptBy(desired: L4DesiredState | undefined): Required<ReleaseOptions> {
  if (!desired) return { keepListeners: new Set(), keepAnnotation: false };
  return {
    keepListeners: new Set(desired.listeners.filter((l) => l.desiredSourceIpType === 1).map((l) => l.listenerId)),
    keepAnnotation: desired.preventLoopback.desired,
  };
}
