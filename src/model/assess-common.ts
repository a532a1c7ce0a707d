// Gates shared by Services and Ingresses: opt-outs and the CLB's existence. Each returns a finished
// Assessment when it decides the verdict, or undefined to let the layer-specific rules run.
import { annotationProblems } from '../api/annotation-checks.js';
import { LoopguardAnnotation, isClbId, readSkip } from '../api/annotations.js';
import { quoteValue } from '../api/text.js';
import { boundLoadBalancerId } from './target-facts.js';
import { assessment, type Assessment } from './assessment-result.js';
import { clbOwnership } from './clb-ownership.js';
import type { ClbFacts, ClbObservation, TargetFacts } from './facts.js';

/**
 * Opt-outs come first: an opted-out target is never touched, whatever else is true of it, and only a bad opt-out
 * value is reported on it. Otherwise every annotation loopguard reads is checked here, once, before any path of the
 * assessment: a bad value is reported whether or not the target's CLB is there yet.
 */
export function skipGate(target: TargetFacts, warnings: string[], ignoreOwn = false): Assessment | undefined {
  // A cluster policy with `skipAnnotation: Ignore` does not let loopguard.dev/skip opt out (docs/cluster-policy.md §6).
  const { skipped } = readSkip(target.annotations, target.kind, { ignoreOwn });
  const problems = annotationProblems(target.annotations, target.kind);
  warnings.push(...problems.filter((p) => skipped === undefined || p.key === LoopguardAnnotation.Skip).map((p) => p.message));
  if (skipped === 'loopguard') {
    return assessment(target, {
      rootCause: 'SkipAnnotation',
      message: 'opted out by loopguard.dev/skip; loopguard reports the target and restores anything it changed',
      warnings,
    });
  }
  if (skipped === 'tke') {
    const key = target.kind === 'Service' ? 'service.cloud.tencent.com/mode' : 'ingress.cloud.tencent.com/mode';
    return assessment(target, {
      rootCause: 'TkeSyncSkipped',
      message: `${key}: skip stops TKE's controller from syncing this ${target.kind}, so loopguard leaves it alone too`,
      warnings,
    });
  }
  return undefined;
}

/** Resolves the observed CLB or decides Pending/Unsupported. */
export function clbGate(
  target: TargetFacts,
  loadBalancerId: string | undefined,
  idAnnotation: string,
  observation: ClbObservation,
  warnings: string[],
): { clb: ClbFacts } | { done: Assessment } {
  if (!loadBalancerId) {
    return {
      done: assessment(target, {
        rootCause: 'ClbNotAssigned',
        message: `waiting for TKE to assign a CLB (annotation ${idAnnotation} not set yet); loopguard re-assesses when it appears`,
        warnings,
      }),
    };
  }
  const written = boundLoadBalancerId(target.annotations, target.kind);
  if (written !== undefined && !isClbId(written)) {
    // Never sent to the CLB API (src/cloud/clb-observer.ts): it names no CLB. The Warning Event says the rest.
    return {
      done: assessment(target, {
        rootCause: 'ClbNotFound',
        loadBalancerId,
        message: `${idAnnotation} is ${quoteValue(written, 40)}, which is not a CLB id (lb-…); waiting for TKE to write the id back`,
        warnings,
      }),
    };
  }
  if (observation.state === 'NotObserved') {
    return {
      done: assessment(target, {
        rootCause: 'ClbNotObserved',
        loadBalancerId,
        message: `CLB ${loadBalancerId} not read yet`,
        warnings,
      }),
    };
  }
  if (observation.state === 'NotFound') {
    return {
      done: assessment(target, {
        rootCause: 'ClbNotFound',
        loadBalancerId,
        message: `CLB ${loadBalancerId} (from ${idAnnotation}) does not exist in this region; waiting for TKE to recreate it or update the annotation`,
        warnings,
      }),
    };
  }
  const clb = observation.clb;
  // Before anything else is concluded from it: the id is user-writable, the CLB may be somebody else's.
  const owner = clbOwnership(target, clb);
  if (owner.state === 'Foreign') {
    return {
      done: assessment(target, {
        rootCause: 'ForeignClb',
        loadBalancerId,
        message: `${owner.why}; ${idAnnotation} is written by TKE — if someone changed it, remove the change and TKE writes it back`,
        warnings,
      }),
    };
  }
  if (owner.state === 'Unverified') {
    return { done: assessment(target, { rootCause: 'ClbOwnershipUnverified', loadBalancerId, message: `${owner.why}; loopguard acts once it can tell the CLB is this ${target.kind}'s`, warnings }) };
  }
  if (clb.status === 0) {
    return {
      done: assessment(target, { rootCause: 'ClbCreating', loadBalancerId, message: `CLB ${loadBalancerId} is still being created`, warnings }),
    };
  }
  if (clb.forward === 0) {
    return {
      done: assessment(target, {
        rootCause: 'ClassicClb',
        loadBalancerId,
        message: `CLB ${loadBalancerId} is a classic CLB; loopguard supports only CLB (Forward=1) instances`,
        warnings,
      }),
    };
  }
  return { clb };
}

export function isPublic(clb: ClbFacts): boolean {
  return clb.loadBalancerType === 'OPEN';
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
