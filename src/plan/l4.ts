// Pure L4 planning (Services): from the assessment and the target's record to ordered steps. Originals recorded →
// health-check sources to 100.64 → prevent-loopback; through TKE, or released, in the orders docs/execution.md
// "Ordering (the preconditions)" gives with their reasons (L4, L4 through TKE, L4 release).
import { readBool, ServiceAnnotation, type Annotations, type SourceIpType } from '../api/annotations.js';
import { type Originals } from '../api/originals.js';
import type { HealthCheck, ListenerInfo } from '../cloud/clb-client.js';
import { writableHealthCheck } from '../cloud/clb-mapping.js';
import type { Assessment } from '../model/assessment.js';
import type { L4DesiredState } from '../model/desired-state.js';
import { annotatedByLoopguard, isApplied, sameOriginals, tkeGraceOver, type GraceClock } from './originals.js';
import { fieldKey, isEmptyOriginals, mergeOriginals, withApplied, withoutFields } from '../api/originals.js';
import type { Step } from './steps.js';

export const PREVENT_LOOPBACK = ServiceAnnotation.PreventLoopback;

/** What the planners of a target the policy manages are given (l7.ts adds what an Ingress needs). */
export interface L4TargetInput extends GraceClock {
  assessment: Assessment;
  /** The Service's annotations now. */
  annotations: Annotations;
  /** The originals in the Service's record, when it has one (this policy's, or one to take over). */
  originals?: Originals;
  /** Whether the record belongs to this policy (only then is anything released from it). */
  owned: boolean;
  /**
   * Set while another Service on the CLB carries prevent-loopback (the VIP stays bound): a release keeps the sources
   * (listeners', rules') on 100.64.0.0/10 and forgets their originals; the text says why (shared-clb.ts).
   */
  vipBound?: string;
}

/** What an L4 desired state still wants loopguard to hold (a partial release gives back the rest). */
export interface Keep {
  listeners: ReadonlySet<string>;
  annotation: boolean;
}

export function keptBy(desired: L4DesiredState | undefined): Keep {
  if (!desired) return { listeners: new Set(), annotation: false };
  return {
    listeners: new Set(desired.listeners.filter((l) => l.desiredSourceIpType === 1).map((l) => l.listenerId)),
    annotation: desired.preventLoopback.desired,
  };
}

/**
 * The HealthCheck to write: the listener's full current struct, only `SourceIpType` changed — and nothing the CLB
 * did not return: no nulls, no HTTP-only field on a TCP/UDP check (tencent-cloud.md §9 #7; writableHealthCheck).
 */
export function healthCheckFor(listener: Pick<ListenerInfo, 'healthCheck'>, sourceIpType: SourceIpType): HealthCheck {
  return { ...writableHealthCheck(listener.healthCheck), SourceIpType: sourceIpType };
}

/** Steps for a Service the policy manages and wants something of (planTarget releases one it wants nothing of). */
export function planL4Target(input: L4TargetInput): Step[] {
  const a = input.assessment;
  const desired = a.desired?.layer === 'L4' ? a.desired : undefined;
  if (!desired) return [];
  const steps: Step[] = [];
  let originals = input.originals;
  if (originals && input.owned) {
    // A record of another CLB (TKE gave the Service a new one): its listener originals belong there; give them back
    // (or forget them, if that CLB is gone) before recording the new CLB's.
    const movedClb = originals.loadBalancerId !== undefined && originals.loadBalancerId !== desired.loadBalancerId;
    const keep = movedClb ? { listeners: new Set<string>(), annotation: keptBy(desired).annotation } : keptBy(desired);
    const release = planL4Release(originals, input.annotations, desired.loadBalancerId, { ...input, keep });
    // Waiting for kube-proxy to release the VIP: nothing else goes before the sources are back.
    if (release.at(-1)?.kind === 'AwaitTke') return release;
    if (release.length > 0) {
      steps.push(...release);
      const last = release[release.length - 1];
      const left = last?.kind === 'AnnotateTarget' ? withoutFields(originals, last.forget ?? []) : originals;
      originals = isEmptyOriginals(left) ? undefined : left;
    }
  }
  const onTarget = input.owned || steps.length > 0 ? originals : undefined;

  const switches = a.changes.flatMap((c) => (c.action === 'SetListenerHealthCheckSource' ? [c] : []));
  const addAnnotation = a.changes.some((c) => c.action === 'AddPreventLoopbackAnnotation');
  let merged = originals ?? { v: 1 as const };
  if (switches.length > 0) {
    merged = mergeOriginals(originals, {
      v: 1,
      listeners: Object.fromEntries(switches.map((s) => [s.listenerId, { sourceIpType: s.from }])),
      loadBalancerId: desired.loadBalancerId,
    });
    if (!sameOriginals(merged, onTarget)) steps.push({ kind: 'RecordOriginals', originals: merged });
  }
  // TKE was asked (prevent-loopback on the Service): it gets its grace period first. A source loopguard had applied
  // and finds back on the VIP is drift, corrected at once: TKE does not put the VIP back while asked for 100.64.
  let why: string | undefined;
  // A large CLB under Direct is asked first (LARGE_CLB_LISTENERS): `askedTke` says loopguard's own prevent-loopback
  // asked TKE (its original and the time are recorded).
  const askedTke = desired.sourceSwitch === 'Direct' && input.owned && annotatedByLoopguard(originals, PREVENT_LOOPBACK) && originals?.declaredAt !== undefined;
  const askLarge = desired.sourceSwitch === 'Direct' && addAnnotation && !askedTke && switches.length > LARGE_CLB_LISTENERS;
  // With l4.sourceSwitch: Direct, a prevent-loopback loopguard added itself (a new CLB or listener since) is not the
  // user asking TKE: loopguard writes at once, as it did first.
  const ownAnnotation = desired.sourceSwitch === 'Direct' && annotatedByLoopguard(originals, PREVENT_LOOPBACK) && !askedTke;
  if ((desired.sourceBy === 'TKE' || askLarge) && !ownAnnotation && switches.length > 0 && !switches.some((s) => isApplied(originals, fieldKey.listenerSource(s.listenerId)))) {
    const declaredAt = input.owned ? originals?.declaredAt : undefined;
    const since = declaredAt || input.now.toISOString();
    if (!declaredAt) {
      const ask = mergeOriginals(merged, {
        v: 1,
        ...(addAnnotation ? { annotations: { [PREVENT_LOOPBACK]: input.annotations?.[PREVENT_LOOPBACK] ?? null } } : {}),
        declaredAt: since,
      });
      // The originals and the time TKE was asked, in the patch that asks it (a crash after it still restores).
      if (steps.at(-1)?.kind === 'RecordOriginals') steps.pop();
      steps.push({ kind: 'AnnotateTarget', set: addAnnotation ? { [PREVENT_LOOPBACK]: 'true' } : {}, originals: ask });
    }
    if (!declaredAt || !tkeGraceOver(declaredAt, input)) {
      steps.push({ kind: 'AwaitTke', reason: 'SourceSwitched', loadBalancerId: desired.loadBalancerId, since, fallback: true });
      return steps;
    }
    if (askedTke && input.annotations?.[PREVENT_LOOPBACK] !== undefined && !tkeSwitchedAny(desired, originals)) {
      // TKE does not answer prevent-loopback (an older controller): the VIP is bound while every source is on it.
      // The annotation goes back (kube-proxy unbinds the VIP), its original and `declaredAt` stay recorded, and the
      // next round takes the direct order: every source, then prevent-loopback.
      steps.push({ kind: 'AnnotateTarget', set: { [PREVENT_LOOPBACK]: originals?.annotations?.[PREVENT_LOOPBACK] ?? null }, restore: true });
      return steps;
    }
    why = `TKE did not switch it within ${Math.round(input.graceMs / 1000)} s of prevent-loopback`;
  }
  for (const s of switches) {
    steps.push({
      kind: 'SetListenerHealthCheckSource',
      loadBalancerId: desired.loadBalancerId,
      listenerId: s.listenerId,
      protocol: s.protocol,
      port: s.port,
      to: s.to,
      ...(isApplied(originals, fieldKey.listenerSource(s.listenerId)) ? { drift: true } : {}),
      ...(why ? { why } : {}),
    });
  }

  // After the switches (each task succeeded), every listener the desired state wants on 100.64 is there.
  let final = addAnnotation ? mergeOriginals(merged, { v: 1, annotations: { [PREVENT_LOOPBACK]: input.annotations?.[PREVENT_LOOPBACK] ?? null } }) : merged;
  // Only what is on 100.64 once this plan's switches succeed: seen there, or switched now (a switch held back by a
  // refused capability is not applied, so granting it later is a first change, not drift).
  const switched = new Set(switches.map((c) => c.listenerId));
  const took = desired.listeners
    .filter((l) => l.desiredSourceIpType === 1 && (l.currentSourceIpType === 1 || switched.has(l.listenerId)))
    .map((l) => fieldKey.listenerSource(l.listenerId));
  if (addAnnotation || (desired.preventLoopback.desired && desired.preventLoopback.present)) took.push(fieldKey.annotation(PREVENT_LOOPBACK));
  final = withApplied(final, [...(final.applied ?? []), ...took]);
  // TKE switched them on the user's own prevent-loopback while loopguard waited: TKE's change, not loopguard's. Their
  // originals are forgotten, or a revert would put the VIP back under the user's annotation (every check dropped).
  const byTke = tkeSwitchedForUser(desired, originals, input.owned, switched);
  if (byTke.length > 0) {
    const left = withoutFields(final, byTke);
    steps.push(isEmptyOriginals(left) ? { kind: 'AnnotateTarget', set: {}, forget: byTke, drops: true } : { kind: 'AnnotateTarget', set: {}, originals: left, forget: byTke });
    return steps;
  }
  const written = switches.length > 0 ? merged : onTarget;
  if (addAnnotation || (!isEmptyOriginals(final) && !sameOriginals(final, written))) {
    steps.push({ kind: 'AnnotateTarget', set: addAnnotation ? { [PREVENT_LOOPBACK]: 'true' } : {}, originals: final });
  }
  return steps;
}

/**
 * Listeners to switch on one Service above which Direct asks TKE first (prevent-loopback, then the grace period):
 * loopguard's writes to one CLB go one task at a time (≈ 0.75 s each), and a TKE whose sync puts back its own view
 * of every health-check field (VIP, until prevent-loopback is there) would undo switched listeners before the
 * annotation lands (issue 22 #5: 100 ports, 56 listeners written 3 times). Asked first, TKE's own view is 100.64 and
 * TKE switches them; a TKE that does not answer gets the annotation back after the grace period, and loopguard
 * switches directly (docs/execution.md "Large CLBs"). 20 writes take ≈ 15 s, half the shortest TKE resync modelled.
 */
export const LARGE_CLB_LISTENERS = 20;

/** Whether any listener whose original loopguard recorded as the VIP is on 100.64 now (TKE answered). */
function tkeSwitchedAny(desired: L4DesiredState, originals: Originals | undefined): boolean {
  return desired.listeners.some((l) => l.currentSourceIpType === 1 && originals?.listeners?.[l.listenerId]?.sourceIpType === 0);
}

/**
 * The listener sources loopguard recorded while TKE was asked by the user's prevent-loopback (not loopguard's: the
 * record holds no original of the annotation) that are on 100.64 now without loopguard having written them (not
 * applied, not switched in this plan): TKE switched them. A crash between a late write of loopguard's and its record
 * is indistinguishable and counted as TKE's; the cost is a source left on 100.64 by a revert, never a VIP put back.
 */
function tkeSwitchedForUser(desired: L4DesiredState, originals: Originals | undefined, owned: boolean, switched: ReadonlySet<string>): string[] {
  if (!owned || !originals || desired.sourceBy !== 'TKE' || !desired.preventLoopback.present || annotatedByLoopguard(originals, PREVENT_LOOPBACK)) return [];
  return desired.listeners
    .filter((l) => l.currentSourceIpType === 1 && !switched.has(l.listenerId) && originals.listeners?.[l.listenerId]?.sourceIpType !== undefined)
    .map((l) => fieldKey.listenerSource(l.listenerId))
    .filter((key) => !isApplied(originals, key));
}

/**
 * A release's clock, TKE's grace period (here for its kube-proxy to unbind the VIP once prevent-loopback is off) and
 * bound VIP (another Service on the CLB keeps it bound: the text of why sources stay on 100.64.0.0/10), and what the
 * target still wants held (`keep`: a partial release).
 */
export type ReleaseOptions = Pick<L4TargetInput, 'now' | 'graceMs' | 'vipBound'> & { keep?: Keep };

/**
 * Steps that give back what the record says loopguard changed, except what `keep` still wants: annotations
 * first, then listener sources, then the record (what remains of it, or none). Empty when nothing is released.
 * Without a CLB id the listeners cannot be reached; their entries are dropped with the rest. While the VIP stays bound (`vipBound`:
 * another Service on the CLB; or the Service's own, user-set prevent-loopback) no source goes back to the VIP: it stays on 100.64.0.0/10, forgotten
 * — or, under loopguard's own prevent-loopback in a full release, recorded, the annotation kept with it (`holding`).
 */
export function planL4Release(originals: Originals, annotations: Annotations, loadBalancerId: string | undefined, options: ReleaseOptions): Step[] {
  const { keep, vipBound } = options;
  const restoreAnnotations: Record<string, string | null> = {};
  const remaining: Originals = { v: 1 };
  const forget: string[] = [];
  // Another Service on the CLB keeps the VIP bound, and the prevent-loopback loopguard set is still on this one: it
  // stays, with its record (the originals of it and of the sources it holds). A TKE that puts back its own view of
  // its listeners at each sync (tencent-cloud.md §9 #2) gives them the VIP source unless the Service carries
  // prevent-loopback (§9 #1): taken off, it would have TKE put them back on a VIP that stays bound, every check
  // dropped. It binds nothing the other Service does not (one VIP, bound once), so keeping it costs nothing. Only a
  // full release holds (a policy deleted, a target opted out); whoever takes the record over (a policy that selects
  // the Service) releases it in the safe order once no other Service binds the VIP (docs/execution.md "Shared CLBs").
  const present = readBool(annotations, PREVENT_LOOPBACK);
  const holding = !keep && vipBound !== undefined && annotatedByLoopguard(originals, PREVENT_LOOPBACK) && present.kind === 'value' && present.value;
  for (const [key, original] of Object.entries(originals.annotations ?? {})) {
    if (key === PREVENT_LOOPBACK && (keep?.annotation || holding)) {
      (remaining.annotations ??= {})[key] = original;
      continue;
    }
    forget.push(fieldKey.annotation(key));
    if ((annotations?.[key] ?? null) !== original) restoreAnnotations[key] = original;
  }
  const listenerSteps: Step[] = [];
  // The CLB the originals were read from; the target's annotation may name another one by now.
  const lbId = originals.loadBalancerId ?? loadBalancerId;
  // Under the user's own prevent-loopback, a source loopguard recorded but never saw take effect was TKE's to switch:
  // if it is on 100.64 now, TKE did it, and putting the VIP back would drop every check. Forgotten, not restored.
  const userAsked = present.kind === 'value' && present.value && !annotatedByLoopguard(originals, PREVENT_LOOPBACK);
  // The Service's own prevent-loopback, the user's, stays and keeps the VIP bound: no source goes back to the VIP
  // (a source loopguard wrote after TKE's grace period too), as when another Service binds it.
  const bound = vipBound ?? (userAsked ? "kept on 100.64.0.0/10, originals forgotten: this Service's own prevent-loopback (not loopguard's) keeps the VIP bound on every node" : undefined);
  let kept = 0;
  for (const [listenerId, l] of Object.entries(originals.listeners ?? {})) {
    const rest = { ...l };
    if (l.sourceIpType !== undefined) {
      if (keep?.listeners.has(listenerId) || (holding && l.sourceIpType === 0)) {
        (remaining.listeners ??= {})[listenerId] = rest;
        continue;
      }
      forget.push(fieldKey.listenerSource(listenerId));
      if (bound !== undefined && l.sourceIpType === 0) kept++;
      else if (lbId) {
        listenerSteps.push({ kind: 'SetListenerHealthCheckSource', loadBalancerId: lbId, listenerId, protocol: '', port: 0, to: l.sourceIpType, restore: true });
      }
      delete rest.sourceIpType;
    }
    // Another layer's fields (keepalive) stay recorded.
    if (Object.keys(rest).length > 0) (remaining.listeners ??= {})[listenerId] = rest;
  }
  // Nothing given back (everything kept): no step.
  if (forget.length === 0) return [];
  if (originals.rules) remaining.rules = originals.rules;
  if (originals.loadBalancer) remaining.loadBalancer = originals.loadBalancer;
  if (originals.declaredAt) remaining.declaredAt = originals.declaredAt;
  if (originals.loadBalancerId && (remaining.listeners || remaining.rules || remaining.loadBalancer)) remaining.loadBalancerId = originals.loadBalancerId;
  const left = withApplied(remaining, originals.applied ?? []);
  // kube-proxy unbinds the VIP some time after prevent-loopback goes (it reports nothing loopguard can read): a source
  // put back on the VIP before that has its checks dropped. So taking loopguard's prevent-loopback off records the time
  // (`declaredAt`, in the same patch) and the plan waits the grace period before the sources go back.
  const toVip = listenerSteps.some((s) => s.kind === 'SetListenerHealthCheckSource' && s.to === 0);
  const unbinding = PREVENT_LOOPBACK in restoreAnnotations && restoreAnnotations[PREVENT_LOOPBACK] !== 'true';
  const restore = Object.keys(restoreAnnotations).length > 0 ? [{ kind: 'AnnotateTarget' as const, set: restoreAnnotations, restore: true }] : [];
  if (toVip && lbId && unbinding) {
    // Taking prevent-loopback off now: the patch records when, and the sources wait from then.
    const since = options.now.toISOString();
    return [{ ...restore[0]!, originals: { v: 1, declaredAt: since } }, { kind: 'AwaitTke', reason: 'VipReleased', loadBalancerId: lbId, since, fallback: true }];
  }
  const unboundAt = annotatedByLoopguard(originals, PREVENT_LOOPBACK) && originals.declaredAt ? Math.min(Date.parse(originals.declaredAt), options.now.getTime()) : NaN;
  if (toVip && lbId && options.now.getTime() < unboundAt + options.graceMs) {
    // Taken off within the grace period: the sources still wait, from the time the record holds.
    return [...restore, { kind: 'AwaitTke', reason: 'VipReleased', loadBalancerId: lbId, since: originals.declaredAt!, fallback: true }];
  }
  return [...restore, ...listenerSteps, { kind: 'AnnotateTarget', set: {}, forget, ...(isEmptyOriginals(left) ? { drops: true } : {}), ...(kept > 0 && bound ? { kept: `${kept} listener source(s) ${bound}` } : {}) }];
}
