// Pure: one policy round's plan. For every target the policy manages, the steps from what is observed to what
// the policy wants; for every target it changed but no longer manages (deselected, skipped, taken by another
// policy, policy deleted), the steps that give its originals back. Audit prints this plan; Enforce executes
// exactly it (src/mitigation/executor.ts), so the two can never disagree.
import { setByLoopguardOf, writableEnvoyProxy, writtenAnnotations, type EnvoyProxyRef, type TargetFacts } from '../model/facts.js';
import { ServiceAnnotation, type Annotations } from '../api/annotations.js';
import { assessTarget, type Assessment } from '../model/assessment.js';
import { lostRecordError } from '../model/lost-record.js';
import { holdsAsIs } from '../model/assess-common.js';
import { boundLoadBalancerId } from '../model/target-facts.js';
import { StalledReason } from '../api/reasons.js';
import { targetKey, type ClbFacts, type TargetRef } from '../model/facts.js';
import { planL4Release, planL4Target } from './l4.js';
import type { RejectedCapabilities } from './l7-edits.js';
import { planL7Release, planL7Target, type ConfigView } from './l7.js';
import type { RecordOwnership } from '../model/record-registry.js';
import { fieldKey, recordedFields, type Originals } from '../api/originals.js';
import { annotatedByLoopguard } from './originals.js';
import { sharedClbAssessment, switchedBy, vipStaysBound } from './shared-clb.js';
import { sharedConfigAssessment } from './shared-config.js';
import type { OrphanSnapshot, Snapshot, TargetSnapshot } from './snapshot.js';
import type { Step, TargetPlan } from './steps.js';
import type { AnnotateTargetStep } from './steps/annotate-target.js';

/** What the planner knows of one target besides its assessment. */
export interface TargetView {
  annotations: Annotations;
  /** The target's entry in the registry (its record and the policy it belongs to). */
  ownership?: RecordOwnership;
  clb?: ClbFacts;
  /** When `clb` was read (ms since the epoch). */
  observedAt?: number;
  /** L7: the TkeServiceConfig that governs the Ingress. */
  config?: ConfigView;
  /** Annotations loopguard's field manager wrote on the target (TargetFacts.setByLoopguard). */
  setByLoopguard?: Readonly<Record<string, string>>;
  /** Another Service on the CLB keeps the VIP bound: a release leaves sources on 100.64.0.0/10 (shared-clb.ts). */
  vipBound?: string;
  /** A Gateway's EnvoyProxy, where its annotations are written (`annotations` are that EnvoyProxy's). */
  envoyProxy?: EnvoyProxyRef;
}

export interface ManagedTarget extends TargetView {
  assessment: Assessment;
}

export interface OrphanTarget extends TargetView {
  target: TargetRef;
  loadBalancerId?: string;
  /**
   * The object the record was made for is gone (deleted, or replaced by another of the same name): nothing on it
   * can be restored, and the new object's values must not be touched; the record is only forgotten.
   */
  stale?: boolean;
}

export type PlanInput = Pick<Snapshot, 'owner' | 'now' | 'graceMs'> & { rejected: RejectedCapabilities };

export function planTarget(input: PlanInput, t: ManagedTarget): TargetPlan {
  const a = t.assessment;
  const { originals, owner } = t.ownership ?? {};
  const owned = originals !== undefined && owner === input.owner;
  const base = planHeader(a.target, 'Mitigate');
  const common = { ...t, ...input, originals, owned };
  // An Ingress whose annotations contradict each other (tke-service-config and -auto both set: TargetMisconfigured)
  // gets nothing planned, not even a release.
  const misconfigured = base.layer === 'L7' && a.blockers.some((b) => b.reason === StalledReason.TargetMisconfigured);
  // Nothing wanted (skipped, not applicable, unsupported): what loopguard changed is given back. Pending says nothing
  // about what is wanted: everything stays as it is. A skipped Service's assessment stops before reading the CLB id.
  const release = a.desired?.layer !== base.layer && owned && !holdsAsIs(a) && !misconfigured;
  const lbId = a.loadBalancerId ?? boundLoadBalancerId(t.annotations, 'Service');
  const l7 = base.layer === 'L7' && !misconfigured ? planL7Target(common) : undefined;
  let steps: Step[];
  if (release) steps = releaseSteps(input, { ...t, target: a.target, loadBalancerId: lbId }, originals);
  else if (base.layer === 'L7') steps = l7?.steps ?? [];
  else steps = l4Steps(a.target, t, () => planL4Target(common));
  // loopguard changed the target, yet no record says what (issue 22 #8): reported, never taken for "nothing to restore".
  const error = l7?.error ?? lostRecordError({ ...common, ...a.target, setByLoopguard: t.setByLoopguard, hasRecord: owner !== undefined });
  return { ...base, steps, ...(error ? { error } : {}) };
}

/** The steps that give back what the record says loopguard changed on a target (`loadBalancerId`: its CLB where the record names none). */
function releaseSteps(input: Pick<PlanInput, 'now' | 'graceMs'>, v: OrphanTarget, originals: Originals): Step[] {
  const release = { now: input.now, graceMs: input.graceMs, observedAt: v.observedAt, vipBound: v.vipBound };
  if (v.target.kind === 'Ingress') return planL7Release({ ...release, originals, annotations: v.annotations, clb: v.clb, config: v.config }).steps;
  return l4Steps(v.target, v, () => planL4Release(originals, v.annotations, v.loadBalancerId, release));
}

/** The release of one target this policy changed (empty steps: nothing of this policy's is left on it). */
export function planOrphan(input: Pick<PlanInput, 'owner' | 'now' | 'graceMs'>, o: OrphanTarget): TargetPlan {
  const owner = input.owner;
  const { originals, owner: recorded } = o.ownership ?? {};
  const base = planHeader(o.target, 'Release');
  if (!originals || recorded !== owner) return { ...base, steps: [] };
  if (o.stale) return { ...base, steps: [{ ...givenBack(o, originals), forget: recordedFields(originals), drops: true, restore: true }] };
  return { ...base, steps: releaseSteps(input, o, originals) };
}

/**
 * What a stale record still gives back: nothing on the object (gone, or another of the same name), except a deleted
 * Gateway's key in the EnvoyProxy its record names, which outlives it (`o.envoyProxy`); its CLB went with the Service
 * EG generated for it. A moved Gateway's first step gives back the same way (planMove).
 */
function givenBack(o: OrphanTarget, originals: Originals): Pick<AnnotateTargetStep, 'kind' | 'set' | 'envoyProxy'> {
  if (!o.envoyProxy) return { kind: 'AnnotateTarget', set: {} };
  const set = Object.fromEntries(Object.entries(originals.annotations ?? {}).filter(([k, v]) => (o.annotations?.[k] ?? null) !== v));
  return { kind: 'AnnotateTarget', set, envoyProxy: o.envoyProxy };
}

/**
 * A managed Gateway whose record names another EnvoyProxy than the one in force now (the Gateway was moved, or its
 * class's changed): the key loopguard wrote is given back there and the record forgets it; the next round writes it
 * into the EnvoyProxy in force, recording that one's original. Written into both, a release would give back only
 * the one the record names.
 */
function movedAway(t: TargetSnapshot, owner: string): boolean {
  const recorded = t.ownership?.owner === owner ? t.ownership.originals?.envoyProxy : undefined;
  if (!recorded || t.facts.kind !== 'Gateway') return false;
  const now = t.facts.envoyProxy;
  return now?.namespace !== recorded.namespace || now.name !== recorded.name;
}

/** The first step of a moved Gateway (movedAway): its key back in the EnvoyProxy the record names, then forgotten. */
function planMove(o: OrphanTarget): TargetPlan {
  const originals = o.ownership?.originals ?? { v: 1 };
  const forget = Object.keys(originals.annotations ?? {}).map(fieldKey.annotation);
  return { ...planHeader(o.target, 'Mitigate'), steps: [{ ...givenBack(o, originals), forget, restore: true }] };
}

/** One target's verdict and the plan that carries it out (Audit prints it, Enforce executes it). */
export interface PlannedTarget {
  assessment: Assessment;
  plan: TargetPlan;
}

/** The whole plan of one pass: managed targets, then the releases of targets the policy no longer manages. */
export interface PolicyPlan {
  owner: string;
  targets: PlannedTarget[];
  releases: TargetPlan[];
}

/** The plan's heading for a target: what it is about, at which layer, and why. */
export function planHeader(target: TargetRef, purpose: TargetPlan['purpose']): Omit<TargetPlan, 'steps'> {
  return { target, layer: target.kind === 'Ingress' ? 'L7' : 'L4', purpose };
}

/** The verdict of one gathered target (assessTarget with the snapshot's policy, profile and capabilities). */
export function assessSnapshot(s: Pick<Snapshot, 'spec' | 'profile' | 'capabilities' | 'ignoreSkipAnnotation'>, t: Pick<TargetSnapshot, 'facts' | 'clb'>): Assessment {
  return assessTarget(t.facts, { policy: s.spec, profile: s.profile, clb: t.clb, capabilities: s.capabilities, ...(s.ignoreSkipAnnotation ? { ignoreSkipAnnotation: true } : {}) });
}

/** Where the target's annotations are written and what they are now (writtenAnnotations, writableEnvoyProxy). */
function viaOf(f: TargetFacts): Pick<TargetView, 'annotations' | 'envoyProxy'> {
  return { annotations: writtenAnnotations(f), envoyProxy: writableEnvoyProxy(f) };
}

/**
 * A Service's L4 steps as planned; a Gateway's with their annotations written to its own EnvoyProxy, none without one
 * (nothing can be written).
 */
function l4Steps(target: TargetRef, t: TargetView, steps: () => Step[]): Step[] {
  if (target.kind !== 'Gateway') return steps();
  const envoyProxy = t.envoyProxy;
  if (!envoyProxy) return [];
  // The record names the EnvoyProxy next to the annotations' originals: a restore goes there, the Gateway gone or not.
  return steps().map((s) => {
    if (s.kind !== 'AnnotateTarget') return s;
    const recorded = s.originals?.annotations ? { originals: { ...s.originals, envoyProxy } } : {};
    return Object.keys(s.set).length > 0 ? { ...s, ...recorded, envoyProxy } : { ...s, ...recorded };
  });
}

function managedOf(s: Snapshot, assessment: Assessment, t: TargetSnapshot, releasing: ReadonlySet<string>): ManagedTarget {
  const clb = t.clb.state === 'Found' ? t.clb.clb : undefined;
  const vipBound = vipStaysBound(s, t.facts, t.ownership?.originals?.loadBalancerId ?? t.facts.loadBalancerId, { vips: clb?.vips ?? [], releasing });
  return { assessment, vipBound, ...viaOf(t.facts), ownership: t.ownership, clb, observedAt: t.observedAt, config: t.config, setByLoopguard: setByLoopguardOf(t.facts) };
}

function orphanOf(s: Snapshot, o: OrphanSnapshot, releasing: ReadonlySet<string>): OrphanTarget {
  const f = o.facts;
  const found = o.clb?.state === 'Found' ? o.clb.clb : undefined;
  const vipBound = vipStaysBound(s, f, o.ownership.originals?.loadBalancerId ?? f.loadBalancerId, { vips: found?.vips ?? [], releasing });
  return {
    vipBound,
    target: { kind: f.kind, namespace: f.namespace, name: f.name },
    // A release's EnvoyProxy when the record names one: that one, never the one in force now (a Gateway moved to
    // another EnvoyProxy: that one holds its own values). None when it is gone or another live Gateway's record holds
    // it (OrphanSnapshot.envoyProxy): nothing is written there, so nothing through it is released.
    ...(o.ownership.originals?.envoyProxy ? { annotations: o.envoyProxy?.annotations, envoyProxy: o.envoyProxy?.ref } : viaOf(f)),
    ownership: o.ownership,
    stale: o.stale,
    loadBalancerId: f.loadBalancerId || undefined,
    clb: found,
    observedAt: found ? o.observedAt : undefined,
    config: o.config,
  };
}

/**
 * The verdict of a target once what it shares is accounted for (shared-config.ts, shared-clb.ts). The round applies it
 * again to its after-execution assessment, so the status keeps naming the sharing.
 */
export function sharedVerdict(s: Snapshot, t: TargetSnapshot, assessed: Assessment, switched: ReadonlySet<string> = new Set()): Assessment {
  return sharedConfigAssessment(s, t, assessed) ?? sharedClbAssessment(s, t, assessed, switched) ?? assessed;
}

/**
 * The plan of one pass over a snapshot, pure: every managed target assessed and planned, every orphan's release.
 * Until TkeServiceConfigs are known, Ingresses get no step (an empty plan; their releases wait).
 */
export function planPolicy(s: Snapshot): PolicyPlan {
  // The learned refusals as the L7 planner reads them.
  const rejected = { keepalive: s.capabilities.keepaliveRejected !== undefined, range100_64: s.capabilities.range100_64Rejected !== undefined };
  const input = { owner: s.owner, rejected, now: s.now, graceMs: s.graceMs };
  const assessedAll = s.targets.map((t) => {
    const assessed = assessSnapshot(s, t);
    return { t, assessed, shared: sharedConfigAssessment(s, t, assessed) };
  });
  // Listeners this plan switches to 100.64.0.0/10 (any of its targets): prevent-loopback may count on them.
  const switched = switchedBy(assessedAll.map((x) => x.shared ?? x.assessed));
  const decided = assessedAll.map(({ t, assessed, shared }) => ({ t, assessed, shared, assessment: shared ?? sharedClbAssessment(s, t, assessed, switched) ?? assessed }));
  const releasing = releasingPreventLoopback(s, decided);
  const targets = decided.map(({ t, shared, assessment }): PlannedTarget => {
    if (t.facts.kind === 'Ingress' && !s.configsKnown) return { assessment, plan: { ...planHeader(assessment.target, 'Mitigate'), steps: [] } };
    const held = (): OrphanTarget => orphanOf(s, { ...t, ownership: t.ownership ?? {} }, releasing);
    // A shared config is not changed: what this policy changed through it before is given back, nothing more.
    if (shared) return { assessment, plan: planOrphan(input, held()) };
    if (movedAway(t, s.owner)) return { assessment, plan: planMove(held()) };
    return { assessment, plan: planTarget(input, managedOf(s, assessment, t, releasing)) };
  });
  const orphans = s.configsKnown ? s.orphans : s.orphans.filter((o) => o.facts.kind !== 'Ingress');
  return { owner: s.owner, targets, releases: orphans.map((o) => planOrphan(input, orphanOf(s, o, releasing))).filter((p) => p.steps.length > 0) };
}

/**
 * Targets whose prevent-loopback (loopguard's) this plan takes off: the orphans it releases, and managed targets that
 * no longer want it. Released together, none of them keeps the VIP bound for the others: each takes the annotation
 * off, waits for kube-proxy, then restores (otherwise each would keep 100.64 for the other, and nobody would restore).
 */
function releasingPreventLoopback(s: Snapshot, decided: readonly { t: TargetSnapshot; assessment: Assessment }[]): Set<string> {
  const mine = (o: RecordOwnership | undefined): boolean => o?.owner === s.owner && annotatedByLoopguard(o.originals, ServiceAnnotation.PreventLoopback);
  const out = new Set<string>();
  for (const o of s.orphans) if (mine(o.ownership)) out.add(targetKey(o.facts));
  for (const { t, assessment } of decided) {
    const desired = assessment.desired?.layer === 'L4' ? assessment.desired : undefined;
    if (mine(t.ownership) && !desired?.preventLoopback.desired) out.add(targetKey(t.facts));
  }
  return out;
}
