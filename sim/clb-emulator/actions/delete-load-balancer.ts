import { ApiError } from '../errors.js';
import { allowOnly, optBool, reqStringArray } from '../params.js';
import { ensureUnlocked, startTask } from './guards.js';
import type { ActionDefinition } from './types.js';

/**
 * DeleteLoadBalancer (async, ≤ 20 ids): the CLBs stay listed (locked) until the task completes. A CLB with
 * delete protection is refused with `OperationDenied` (code chosen by the emulator).
 */
export const deleteLoadBalancer: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ['LoadBalancerIds', 'ForceDelete']);
    const { core } = ctx;
    const ids = [...new Set(reqStringArray(params, 'LoadBalancerIds', 20))];
    optBool(params, 'ForceDelete');
    for (const id of ids) {
      if (core.store.lb(id).DeleteProtect) {
        throw new ApiError('OperationDenied', `Loadbalancer(${id}) has delete protection enabled; disable DeleteProtect first.`);
      }
    }
    ensureUnlocked(core, ids);
    startTask(ctx, 'DeleteLoadBalancer', ids, () => ids.forEach((id) => core.store.remove(id)));
    return {};
  },
};
