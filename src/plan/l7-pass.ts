// Pure: the CLB's "allow traffic by default" (LoadBalancerPassToTarget) of an Ingress, through TKE's declarative
// interface first. TKE's ingress controller applies `ingress.cloud.tencent.com/pass-to-target` on every sync
// (tencent-cloud.md §9 #5), so loopguard declares "true" there and waits; it writes the CLB itself only when TKE has not
// applied its declaration within the grace period (the same value, so no write fight), or, on release, when TKE
// no longer syncs the Ingress (`mode: skip`). Removing the annotation leaves the CLB as it is (sim/README.md), so a
// release declares the original value, waits for TKE to apply it, and only then gives the annotation back.
import { IngressAnnotation, type Annotations } from '../api/annotations.js';
import type { Originals } from '../api/originals.js';
import type { L7DesiredState } from '../model/desired-state.js';
import { annotatedByLoopguard, isApplied, tkeGraceOver, type GraceClock } from './originals.js';
import { fieldKey } from '../api/originals.js';
import type { Step } from './steps.js';
import type { SetLoadBalancerPassToTargetStep } from './steps/set-load-balancer-pass-to-target.js';

const KEY = IngressAnnotation.PassToTarget;

export interface PassInput extends GraceClock {
  desired: L7DesiredState;
  originals: Originals | undefined;
  owned: boolean;
}

/**
 * Steps for this round. Ending in a wait for TKE, they block the rest of the target's plan (keepalive must not come
 * before the CLB lets 100.127/16 in).
 */
export function planPassToTarget(input: PassInput): Step[] {
  const { desired, originals, owned } = input;
  const lbId = desired.loadBalancerId;
  if (desired.passToTarget.desired !== true || desired.passToTarget.current !== false) return [];
  const await_: Step = { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: lbId };
  const declared = desired.passToTarget.declared;
  if (declared === undefined) {
    const since = input.now.toISOString();
    const add: Originals = { v: 1, loadBalancer: { passToTarget: false }, annotations: { [KEY]: null }, loadBalancerId: lbId, declaredAt: since };
    return [{ kind: 'AnnotateTarget', set: { [KEY]: 'true' }, originals: add }, { ...await_, since, fallback: true }];
  }
  // "true" the user declared: TKE's to apply, whenever it does; loopguard owns nothing of it.
  if (!owned || !annotatedByLoopguard(originals, KEY)) return [await_];
  // Applied before and off now: changed on the CLB behind TKE's back; TKE's resync puts it back. Its grace period
  // starts when the executor first sees the wait, not at the declaration long ago.
  if (isApplied(originals, fieldKey.passToTarget())) return [await_];
  return waitThenWrite(originals?.declaredAt, input, { kind: 'SetLoadBalancerPassToTarget', loadBalancerId: lbId, to: true });
}

/**
 * TKE's grace period for the declaration made at `declaredAt`: waited out, then loopguard writes the declared value
 * itself (`direct`: the same value, so no write fight).
 */
function waitThenWrite(declaredAt: string | undefined, clock: GraceClock, direct: SetLoadBalancerPassToTargetStep): Step[] {
  if (!tkeGraceOver(declaredAt, clock)) {
    return [{ kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: direct.loadBalancerId, ...(declaredAt ? { since: declaredAt } : {}), fallback: true }];
  }
  return [{ ...direct, why: `TKE did not apply ${KEY}: ${JSON.stringify(String(direct.to))} within ${Math.round(clock.graceMs / 1000)} s` }];
}

export interface PassReleaseInput extends GraceClock {
  originals: Originals;
  annotations: Annotations;
  /** The CLB's current value (undefined: the CLB is not known). */
  current: boolean | undefined;
  loadBalancerId: string;
  /** TKE does not sync the Ingress (`mode: skip`): nothing applies an annotation. */
  tkeSkips: boolean;
}

/** Steps that give the original back; ending in a wait while TKE has yet to apply it (the record must stay). */
export function planPassRelease(input: PassReleaseInput): Step[] {
  const original = input.originals.loadBalancer?.passToTarget;
  if (original === undefined || input.current === undefined || input.current === original) return [];
  const lbId = input.loadBalancerId;
  const direct: SetLoadBalancerPassToTargetStep = { kind: 'SetLoadBalancerPassToTarget', loadBalancerId: lbId, to: original, restore: true };
  const onIngress = input.annotations?.[KEY];
  // Loopguard's declaration still stands: declare the original, so TKE neither undoes a direct restore nor is bypassed.
  if (!annotatedByLoopguard(input.originals, KEY) || input.tkeSkips || onIngress === undefined) {
    return [{ ...direct, ...(input.tkeSkips ? { why: 'TKE does not sync this Ingress (mode: skip)' } : {}) }];
  }
  const wanted = String(original);
  if (onIngress.trim().toLowerCase() !== wanted) {
    const since = input.now.toISOString();
    return [
      { kind: 'AnnotateTarget', set: { [KEY]: wanted }, originals: { v: 1, declaredAt: since }, restore: true },
      { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: lbId, since, fallback: true },
    ];
  }
  return waitThenWrite(input.originals.declaredAt, input, direct);
}
