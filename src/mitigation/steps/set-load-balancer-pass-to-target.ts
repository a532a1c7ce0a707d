// SetLoadBalancerPassToTarget (src/plan/steps/set-load-balancer-pass-to-target.ts) carried out: ModifyLoadBalancerAttributes.
import { EventReason } from '../../api/reasons.js';
import type { SetLoadBalancerPassToTargetStep } from '../../plan/steps/set-load-balancer-pass-to-target.js';
import { DONE, writeOptions, writeOrForget, type StepEffect } from './effect.js';

export const setLoadBalancerPassToTarget: StepEffect<SetLoadBalancerPassToTargetStep> = {
  async apply(deps, _owner, _target, step, signal) {
    await writeOrForget(deps, step.loadBalancerId, () => deps.clb.modifyLoadBalancerPassToTarget(step.loadBalancerId, step.to, writeOptions(deps, signal)));
    deps.observer.passToTargetWritten(step.loadBalancerId, step.to);
    return DONE;
  },
  event: (step) => ({ type: 'Normal', reason: step.restore ? EventReason.OriginalsRestored : EventReason.ClbTrafficAllowedByDefault }),
};
