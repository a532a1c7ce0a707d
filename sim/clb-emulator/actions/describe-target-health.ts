import { targetsFor } from '../health.js';
import { isLayer7 } from '../model.js';
import { allowOnly, optStringArray, reqStringArray } from '../params.js';
import type { ActionDefinition } from './types.js';

/**
 * DescribeTargetHealth (tencent-cloud.md §3): ≤ 30 CLB ids, each unknown one is `InvalidParameter.LBIdNotFound`.
 * L4 listeners report through a single pseudo-rule whose `LocationId` is the listener id (the real value for L4 is
 * undocumented). Health semantics: health.ts (or real probes, `EmulatorOptions.targetHealth`).
 */
export const describeTargetHealth: ActionDefinition = {
  async: false,
  run(ctx, params) {
    allowOnly(params, ['LoadBalancerIds', 'ListenerIds', 'LocationIds']);
    const lbIds = reqStringArray(params, 'LoadBalancerIds', 30);
    const listenerIds = optStringArray(params, 'ListenerIds', 100);
    const locationIds = optStringArray(params, 'LocationIds', 100);
    const { store, config } = ctx.core;
    const lbs = lbIds.map((id) => store.lb(id));
    const convergence = config.healthConvergenceMs;
    const real = ctx.core.options.targetHealth;
    return {
      LoadBalancers: lbs.map((lb) => ({
        LoadBalancerId: lb.LoadBalancerId,
        LoadBalancerName: lb.LoadBalancerName,
        Listeners: lb.Listeners.filter((l) => !listenerIds || listenerIds.includes(l.ListenerId)).map((l) => ({
          ListenerId: l.ListenerId,
          ListenerName: l.ListenerName,
          Protocol: l.Protocol,
          Port: l.Port,
          Rules: isLayer7(l.Protocol)
            ? l.Rules.filter((r) => !locationIds || locationIds.includes(r.LocationId)).map((r) => ({
                LocationId: r.LocationId,
                Domain: r.Domain,
                Url: r.Url,
                RuleId: r.LocationId,
                Targets: targetsFor(lb, l, r, ctx.nowMs, convergence, real),
              }))
            : [
                {
                  LocationId: l.ListenerId,
                  Domain: null,
                  Url: null,
                  RuleId: l.ListenerId,
                  Targets: targetsFor(lb, l, undefined, ctx.nowMs, convergence, real),
                },
              ],
        })),
      })),
    };
  },
};
