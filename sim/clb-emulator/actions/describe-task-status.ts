import { ApiError, missingParameter } from '../errors.js';
import { allowOnly, optString } from '../params.js';
import type { ActionDefinition } from './types.js';

/**
 * DescribeTaskStatus (tencent-cloud.md §3): TaskId = RequestId of the async call; Status 2 running, 0 success,
 * 1 failed with Message. Unknown TaskId → `InvalidParameter` (real code undocumented). DealName is not modelled.
 */
export const describeTaskStatus: ActionDefinition = {
  async: false,
  run(ctx, params) {
    allowOnly(params, ['TaskId', 'DealName']);
    const taskId = optString(params, 'TaskId');
    const dealName = optString(params, 'DealName');
    if (!taskId) {
      if (dealName) throw new ApiError('InvalidParameter', `DealName ${dealName} not found (the emulator has no deals).`);
      throw missingParameter('TaskId');
    }
    const task = ctx.core.tasks.get(taskId);
    if (!task) throw new ApiError('InvalidParameter', `TaskId ${taskId} not found.`);
    return { Status: task.status, LoadBalancerIds: task.loadBalancerIds, Message: task.message };
  },
};
