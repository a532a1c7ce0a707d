import { accountSourceIpType } from '../capabilities.js';
import { ApiError } from '../errors.js';
import { healthCheckChanged } from '../health-check.js';
import { isIpv6, isLayer7 } from '../model.js';
import { allowOnly, optBool, optEnum, optIntInRange, optString, optSwitch, reqString } from '../params.js';
import {
  checkKeepaliveSnat, checkSourceIp, ensureUnlocked, L7_HEALTH_CHECK_MESSAGE, liveLb, readHealthCheck, readListenerSession, readTargetType,
  startTask,
} from './guards.js';
import type { ActionDefinition } from './types.js';
import { changedFields } from '../write-log.js';

/**
 * ModifyListener (async, tencent-cloud.md §3): `HealthCheck` only for TCP/UDP/TCP_SSL/QUIC (L7 → `InvalidParameter`,
 * use ModifyRule), `KeepaliveEnable` only for HTTP/HTTPS, `SnatEnable` stored but not readable through
 * DescribeListeners (as in the real output model). Changes become visible when the task completes.
 */
const ALLOWED = [
  'LoadBalancerId', 'ListenerId', 'ListenerName', 'SessionExpireTime', 'HealthCheck', 'Scheduler', 'KeepaliveEnable',
  'SnatEnable', 'DeregisterTargetRst', 'SessionType', 'IdleConnectTimeout', 'TargetType',
];

export const modifyListener: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ALLOWED);
    const { core } = ctx;
    const lbId = reqString(params, 'LoadBalancerId');
    const listenerId = reqString(params, 'ListenerId');
    const lb = core.store.lb(lbId);
    const listener = core.store.listener(lb, listenerId);
    const l7 = isLayer7(listener.Protocol);
    const l4Only = (name: string): void => {
      if (l7 && params[name] !== undefined) {
        throw new ApiError('InvalidParameter', `${name} is only applicable to TCP/UDP/TCP_SSL/QUIC listeners.`);
      }
    };

    const name = optString(params, 'ListenerName');
    if (name !== undefined && (name.length < 1 || name.length > 80)) {
      throw new ApiError('InvalidParameterValue.Length', 'ListenerName must be 1–80 characters.');
    }
    if (l7 && params['HealthCheck'] !== undefined) throw new ApiError('InvalidParameter', L7_HEALTH_CHECK_MESSAGE);
    const healthCheck = readHealthCheck(params, { protocol: listener.Protocol, ipv6: isIpv6(lb), defaultSourceIpType: accountSourceIpType(core.capabilities) });
    const session = readListenerSession(params, listener.Protocol);
    readTargetType(params, listener.Protocol);
    l4Only('Scheduler');
    const scheduler = optEnum(params, 'Scheduler', ['WRR', 'LEAST_CONN', 'IP_HASH']);
    l4Only('DeregisterTargetRst');
    const deregisterRst = optBool(params, 'DeregisterTargetRst');
    l4Only('SessionType');
    const sessionType = optEnum(params, 'SessionType', ['NORMAL', 'QUIC_CID']);
    l4Only('IdleConnectTimeout');
    const idle = optIntInRange(params, 'IdleConnectTimeout', 10, 1980);
    const keepalive = optSwitch(params, 'KeepaliveEnable');
    const snat = optBool(params, 'SnatEnable');

    checkSourceIp(core, lb, healthCheck);
    checkKeepaliveSnat(core, listener.Protocol, keepalive, snat);
    ensureUnlocked(core, [lbId]);

    core.stats.listenerWrite(lbId, listenerId);
    core.writeLog.accepted({ caller: ctx.caller, action: 'ModifyListener', loadBalancerId: lbId, listenerId, locationId: null, taskId: ctx.requestId });
    startTask(ctx, 'ModifyListener', [lbId], () => {
      const target = core.store.listener(liveLb(core, lbId), listenerId);
      const before = structuredClone(target);
      if (name !== undefined) target.ListenerName = name;
      if (healthCheck && healthCheckChanged(target.HealthCheck, healthCheck)) {
        target.HealthCheck = healthCheck;
        target.healthChangedAtMs = Date.now();
      }
      if (session !== undefined) target.SessionExpireTime = session;
      if (scheduler !== undefined) target.Scheduler = scheduler;
      if (deregisterRst !== undefined) target.DeregisterTargetRst = deregisterRst;
      if (sessionType !== undefined) target.SessionType = sessionType;
      if (idle !== undefined) target.IdleConnectTimeout = idle;
      if (keepalive !== undefined) target.KeepaliveEnable = keepalive;
      if (snat !== undefined) target.SnatEnable = snat;
      core.writeLog.changed(ctx.requestId, changedFields(before, target));
    });
    return {};
  },
};
