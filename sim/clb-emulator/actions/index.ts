import { createListener } from './create-listener.js';
import { createLoadBalancer } from './create-load-balancer.js';
import { createRule } from './create-rule.js';
import { deleteLoadBalancer } from './delete-load-balancer.js';
import { describeListeners } from './describe-listeners.js';
import { describeLoadBalancers } from './describe-load-balancers.js';
import { describeTargetHealth } from './describe-target-health.js';
import { describeTaskStatus } from './describe-task-status.js';
import { modifyListener } from './modify-listener.js';
import { modifyLoadBalancerAttributes } from './modify-load-balancer-attributes.js';
import { modifyRule } from './modify-rule.js';
import type { ActionDefinition } from './types.js';

export type { ActionContext, ActionDefinition, ActionResult } from './types.js';

/** Every CLB action the emulator speaks; anything else is `InvalidAction`. */
export const ACTIONS: Readonly<Record<string, ActionDefinition>> = Object.freeze({
  DescribeLoadBalancers: describeLoadBalancers,
  DescribeListeners: describeListeners,
  DescribeTargetHealth: describeTargetHealth,
  DescribeTaskStatus: describeTaskStatus,
  ModifyListener: modifyListener,
  ModifyRule: modifyRule,
  ModifyLoadBalancerAttributes: modifyLoadBalancerAttributes,
  CreateLoadBalancer: createLoadBalancer,
  CreateListener: createListener,
  CreateRule: createRule,
  DeleteLoadBalancer: deleteLoadBalancer,
});

export function findAction(name: string): ActionDefinition | undefined {
  return Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
}
