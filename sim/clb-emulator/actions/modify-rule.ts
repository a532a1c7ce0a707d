import { accountSourceIpType } from '../capabilities.js';
import { ApiError } from '../errors.js';
import { healthCheckChanged } from '../health-check.js';
import { isIpv6, isLayer7 } from '../model.js';
import { allowOnly, optEnum, optIntInRange, optString, reqString } from '../params.js';
import { checkSourceIp, ensureUnlocked, liveLb, readHealthCheck, startTask } from './guards.js';
import type { ActionDefinition } from './types.js';
import { changedFields } from '../write-log.js';

/**
 * ModifyRule (async, tencent-cloud.md §3): the per-rule health check of HTTP/HTTPS listeners (incl. SourceIpType).
 * Same strict HealthCheck reset model as ModifyListener (health-check.ts).
 */
const ALLOWED = ['LoadBalancerId', 'ListenerId', 'LocationId', 'Url', 'HealthCheck', 'Scheduler', 'SessionExpireTime', 'ForwardType'];

export const modifyRule: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ALLOWED);
    const { core } = ctx;
    const lbId = reqString(params, 'LoadBalancerId');
    const listenerId = reqString(params, 'ListenerId');
    const locationId = reqString(params, 'LocationId');
    const lb = core.store.lb(lbId);
    const listener = core.store.listener(lb, listenerId);
    if (!isLayer7(listener.Protocol)) {
      throw new ApiError('InvalidParameter', `Listener ${listenerId} is ${listener.Protocol}; rules exist only on HTTP/HTTPS listeners.`);
    }
    const rule = core.store.rule(listener, locationId);

    const url = optString(params, 'Url');
    if (url !== undefined && (!url.startsWith('/') || url.length > 200)) {
      throw new ApiError('InvalidParameterValue', 'Url must start with "/" and be 1–200 characters.');
    }
    if (url !== undefined && listener.Rules.some((r) => r !== rule && r.Domain === rule.Domain && r.Url === url)) {
      throw new ApiError('InvalidParameterValue.Duplicate', `A rule for ${rule.Domain}${url} already exists.`);
    }
    const forwardType = optEnum(params, 'ForwardType', ['HTTP', 'HTTPS', 'GRPC']);
    if (forwardType !== undefined && listener.Protocol !== 'HTTPS') {
      throw new ApiError('InvalidParameter', 'ForwardType can only be changed on rules of HTTPS listeners.');
    }
    const healthCheck = readHealthCheck(params, {
      protocol: listener.Protocol,
      forwardType: forwardType ?? rule.ForwardType,
      ipv6: isIpv6(lb),
      defaultSourceIpType: accountSourceIpType(core.capabilities),
    });
    const scheduler = optEnum(params, 'Scheduler', ['WRR', 'LEAST_CONN', 'IP_HASH']);
    const session = optIntInRange(params, 'SessionExpireTime', 0, 86400);
    if (session !== undefined && session !== 0 && session < 30) {
      throw new ApiError('InvalidParameterValue.Range', 'SessionExpireTime must be 0 or 30–86400.');
    }

    checkSourceIp(core, lb, healthCheck);
    ensureUnlocked(core, [lbId]);

    core.stats.ruleWrite(lbId, listenerId, locationId);
    core.writeLog.accepted({ caller: ctx.caller, action: 'ModifyRule', loadBalancerId: lbId, listenerId, locationId, taskId: ctx.requestId });
    startTask(ctx, 'ModifyRule', [lbId], () => {
      const target = core.store.rule(core.store.listener(liveLb(core, lbId), listenerId), locationId);
      const before = structuredClone(target);
      if (url !== undefined) target.Url = url;
      if (forwardType !== undefined) target.ForwardType = forwardType;
      if (healthCheck && healthCheckChanged(target.HealthCheck, healthCheck)) {
        target.HealthCheck = healthCheck;
        target.healthChangedAtMs = Date.now();
      }
      if (scheduler !== undefined) target.Scheduler = scheduler;
      if (session !== undefined) target.SessionExpireTime = session;
      core.writeLog.changed(ctx.requestId, changedFields(before, target));
    });
    return {};
  },
};
