// What Services and Ingresses share: the gates (opt-outs, the CLB's existence and ownership), each deciding a cause
// or letting the layer-specific rules run, and the one way a decision becomes an Assessment.
import { annotationProblems } from '../api/annotation-checks.js';
import { IngressAnnotation, LoopguardAnnotation, ServiceAnnotation, isClbId, readSkip } from '../api/annotations.js';
import { boundLoadBalancerId } from './target-facts.js';
import { assessment, type Assessment, type AssessmentContext } from './assessment-result.js';
import type { Cause, GateCause } from './cause.js';
import { renderCause } from './cause-text.js';
import { clbOwnership } from './clb-ownership.js';
import type { ClbFacts, ClbObservation, IngressFacts, ServiceFacts, TargetFacts } from './facts.js';
import { alternativesOf } from './topology.js';

/** A target's decision, before any prose: its cause, what loopguard would change (if anything) and what is in effect. */
export interface Decision {
  cause: Cause;
  warnings: readonly string[];
  mitigations?: Assessment['mitigations'];
  plan?: Required<Pick<Assessment, 'desired' | 'changes' | 'blockers'>>;
}

/** The Assessment of a decision: the cause rendered (cause-text.ts), its verdict from the catalogue. */
export function assessed(target: TargetFacts, d: Decision): Assessment {
  const { cause } = d;
  const { message, advice } = renderCause(cause);
  const loadBalancerId = 'at' in cause ? cause.at.lb : 'lb' in cause ? cause.lb : undefined;
  return assessment(target, {
    rootCause: cause.id,
    message,
    ...(loadBalancerId !== undefined ? { loadBalancerId } : {}),
    ...(d.mitigations ? { mitigations: d.mitigations } : {}),
    ...d.plan,
    advice,
    alternatives: 'layer' in cause ? alternativesOf(target, cause) : [],
    warnings: d.warnings,
  });
}

/**
 * Opt-outs come first: an opted-out target is never touched, whatever else is true of it, and only a bad opt-out
 * value is reported on it. Otherwise every annotation loopguard reads is checked here, once, before any path of the
 * assessment: a bad value is reported whether or not the target's CLB is there yet.
 */
export function skipGate(target: TargetFacts, ctx: Pick<AssessmentContext, 'ignoreSkipAnnotation'>): { warnings: string[]; cause?: GateCause } {
  // A cluster policy with `skipAnnotation: Ignore` does not let loopguard.dev/skip opt out (docs/cluster-policy.md §6).
  const { skipped } = readSkip(target.annotations, target.kind, { ignoreOwn: ctx.ignoreSkipAnnotation === true });
  const problems = annotationProblems(target.annotations, target.kind);
  const warnings = problems.filter((p) => skipped === undefined || p.key === LoopguardAnnotation.Skip).map((p) => p.message);
  if (skipped === 'loopguard') return { warnings, cause: { id: 'SkipAnnotation' } };
  if (skipped === 'tke') return { warnings, cause: { id: 'TkeSyncSkipped', kind: target.kind } };
  return { warnings };
}

/** Resolves the target's observed CLB, or decides Pending, Conflict (a foreign CLB) or Unsupported. */
export function clbGate(target: ServiceFacts | IngressFacts, observation: ClbObservation): { clb: ClbFacts } | { cause: GateCause } {
  const idAnnotation = target.kind === 'Service' ? ServiceAnnotation.LoadBalancerId : IngressAnnotation.LoadBalancerId;
  const written = boundLoadBalancerId(target.annotations, target.kind);
  // Facts built by target-facts.ts carry the parsed id; plain-data facts (tests, manifests) may only have the annotation.
  const lb = target.loadBalancerId ?? written;
  if (!lb) return { cause: { id: 'ClbNotAssigned', idAnnotation } };
  // Never sent to the CLB API (src/cloud/clb-observer.ts): it names no CLB. The Warning Event says the rest.
  if (written !== undefined && !isClbId(written)) return { cause: { id: 'ClbNotFound', lb, idAnnotation, notAnId: written } };
  if (observation.state === 'NotObserved') return { cause: { id: 'ClbNotObserved', lb } };
  if (observation.state === 'NotFound') return { cause: { id: 'ClbNotFound', lb, idAnnotation } };
  const clb = observation.clb;
  // Before anything else is concluded from it: the id is user-writable, the CLB may be somebody else's.
  const owner = clbOwnership(target, clb);
  if (owner.state === 'Foreign') return { cause: { id: 'ForeignClb', lb, idAnnotation, why: owner.why } };
  if (owner.state === 'Unverified') return { cause: { id: 'ClbOwnershipUnverified', lb, kind: target.kind, why: owner.why } };
  if (clb.status === 0) return { cause: { id: 'ClbCreating', lb } };
  if (clb.forward === 0) return { cause: { id: 'ClassicClb', lb } };
  return { clb };
}

/** `IPV6` (NAT64) and `IPv6FullChain` CLBs: 100.64.0.0/10 is IPv4-only (tencent-cloud.md §3). */
export function isIpv6(clb: ClbFacts): boolean {
  return /ipv6/i.test(clb.addressIpVersion ?? '');
}

/**
 * Targets whose state says nothing about what loopguard should give back: Pending (not read yet) and a foreign CLB
 * (the id may be forged; the record's CLB is not in question). Their records are kept as they are, nothing written.
 */
export function holdsAsIs(a: { verdict: string; rootCause: { id: string } }): boolean {
  return a.verdict === 'Pending' || a.rootCause.id === 'ForeignClb';
}
