import { ApiError, ipv6PassToTarget } from '../errors.js';
import { isIpv6 } from '../model.js';
import { allowOnly, optBool, optString, reqString } from '../params.js';
import { ensureUnlocked, liveLb, startTask } from './guards.js';
import type { ActionDefinition } from './types.js';

/**
 * ModifyLoadBalancerAttributes (async, tencent-cloud.md §3): `LoadBalancerPassToTarget` ("allow traffic from CLB by
 * default"; refused on IPv6 CLBs, tencent-cloud.md §3 HealthCheck paragraph), `LoadBalancerName`, `DeleteProtect`,
 * `SnatPro` (cross-region binding 2.0, NOT listener SNAT — stored only).
 */
export const modifyLoadBalancerAttributes: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ['LoadBalancerId', 'LoadBalancerName', 'LoadBalancerPassToTarget', 'DeleteProtect', 'SnatPro']);
    const { core } = ctx;
    const lbId = reqString(params, 'LoadBalancerId');
    const lb = core.store.lb(lbId);
    const name = optString(params, 'LoadBalancerName');
    if (name !== undefined && (name.length < 1 || name.length > 80)) {
      throw new ApiError('InvalidParameterValue.Length', 'LoadBalancerName must be 1–80 characters.');
    }
    const passToTarget = optBool(params, 'LoadBalancerPassToTarget');
    if (passToTarget !== undefined && isIpv6(lb)) throw ipv6PassToTarget(lbId);
    const deleteProtect = optBool(params, 'DeleteProtect');
    const snatPro = optBool(params, 'SnatPro');
    ensureUnlocked(core, [lbId]);
    startTask(ctx, 'ModifyLoadBalancerAttributes', [lbId], () => {
      const target = liveLb(core, lbId);
      if (name !== undefined) target.LoadBalancerName = name;
      if (passToTarget !== undefined) target.LoadBalancerPassToTarget = passToTarget;
      if (deleteProtect !== undefined) target.DeleteProtect = deleteProtect;
      if (snatPro !== undefined) target.SnatPro = snatPro;
    });
    return {};
  },
};
