import { LISTENER_PROTOCOLS } from '../model.js';
import { allowOnly, optEnum, optIntInRange, optStringArray, reqString } from '../params.js';
import { renderListener } from '../render.js';
import type { ActionDefinition } from './types.js';

/**
 * DescribeListeners (tencent-cloud.md §3): L4 listeners carry `HealthCheck`, L7 listeners carry `Rules[]` each with its
 * own `HealthCheck`, and `KeepaliveEnable`. Unknown CLB → `InvalidParameter.LBIdNotFound`; unknown listener ids
 * are filtered out, not errors.
 */
export const describeListeners: ActionDefinition = {
  async: false,
  run(ctx, params) {
    allowOnly(params, ['LoadBalancerId', 'ListenerIds', 'Protocol', 'Port']);
    const lbId = reqString(params, 'LoadBalancerId');
    const ids = optStringArray(params, 'ListenerIds', 100);
    const protocol = optEnum(params, 'Protocol', LISTENER_PROTOCOLS);
    const port = optIntInRange(params, 'Port', 1, 65535);
    const lb = ctx.core.store.lb(lbId);
    const listeners = lb.Listeners.filter(
      (l) => (!ids || ids.includes(l.ListenerId)) && (!protocol || l.Protocol === protocol) && (port === undefined || l.Port === port),
    );
    return { Listeners: listeners.map(renderListener), TotalCount: listeners.length };
  },
};
