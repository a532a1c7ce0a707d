// AwaitTke: wait for TKE to create the auto config, to apply declared fields, or to apply restored originals. Past
// TKE's grace period (`graceOver`: a CLB read after it still shows the old values) or on TKE's Warning Event the wait
// ends in a target error (src/mitigation/tke-wait.ts), unless loopguard then writes it itself (`fallback`). Its
// effect: src/mitigation/steps/await-tke.ts.
import type { StepKindPlan } from './kind.js';

/**
 * What the executor waits for TKE to do; the target's plan ends there until a later observation. `VipReleased`: not
 * TKE's controller but TKE's kube-proxy, which unbinds the VIP on every node once prevent-loopback is off; a release
 * puts sources back on the VIP only after TKE's grace period (a bound VIP drops VIP-sourced checks; planL4Release).
 */
export type AwaitReason = 'ConfigCreated' | 'ConfigApplied' | 'OriginalsApplied' | 'PassToTargetApplied' | 'SourceSwitched' | 'VipReleased';

export interface AwaitTkeStep {
  kind: 'AwaitTke';
  reason: AwaitReason;
  loadBalancerId: string;
  config?: string;
  /** When TKE was asked (the grace period's start); without it, the first time the executor saw the wait. */
  since?: string;
  graceOver?: boolean;
  wantsKeepalive?: boolean;
  /** loopguard writes it itself once the grace period is over (a later round plans it): the wait never fails. */
  fallback?: boolean;
}

function describe(step: AwaitTkeStep): string {
  switch (step.reason) {
    case 'ConfigCreated':
      return `wait for TKE to create TkeServiceConfig ${step.config ?? ''}`;
    case 'ConfigApplied':
      return `wait for TKE to apply TkeServiceConfig ${step.config ?? ''} to CLB ${step.loadBalancerId}${step.graceOver ? ' (grace period over)' : ''}`;
    case 'PassToTargetApplied':
      return `wait for TKE to apply ingress.cloud.tencent.com/pass-to-target to CLB ${step.loadBalancerId}`;
    case 'SourceSwitched':
      return `wait for TKE to switch the health-check sources of CLB ${step.loadBalancerId} to 100.64.0.0/10 (its answer to prevent-loopback)`;
    case 'OriginalsApplied':
      return `wait for TKE to restore the originals on CLB ${step.loadBalancerId}`;
    case 'VipReleased':
      return `wait for kube-proxy to release the VIP of CLB ${step.loadBalancerId} (prevent-loopback taken off), then put the health-check sources back on it`;
  }
}

export const awaitTke: StepKindPlan<AwaitTkeStep> = {
  describe,
  wait: { since: (step) => step.since },
};
