// SetLoadBalancerPassToTarget: a direct write of the CLB attribute; `why` says why not through the Ingress's
// pass-to-target annotation (TKE's interface). Its effect: src/mitigation/steps/set-load-balancer-pass-to-target.ts.
import type { StepKindPlan } from './kind.js';

export interface SetLoadBalancerPassToTargetStep {
  kind: 'SetLoadBalancerPassToTarget';
  loadBalancerId: string;
  to: boolean;
  restore?: boolean;
  why?: string;
}

export const setLoadBalancerPassToTarget: StepKindPlan<SetLoadBalancerPassToTargetStep> = {
  describe: (step) => `${step.restore ? 'restore' : 'set'} CLB ${step.loadBalancerId} LoadBalancerPassToTarget: ${String(step.to)}${step.why ? ` directly (${step.why})` : ''}`,
};
