import { accountSourceIpType } from '../capabilities.js';
import { ApiError, missingParameter } from '../errors.js';
import { buildListener, portsClash } from '../factories.js';
import { defaultHealthCheck } from '../health-check.js';
import type { ListenerRecord } from '../model.js';
import { isIpv6, isLayer7, LISTENER_PROTOCOLS } from '../model.js';
import { allowOnly, optArray, optBool, optEnum, optIntInRange, optObject, optStringArray, optSwitch, reqString } from '../params.js';
import {
  checkKeepaliveSnat, checkSourceIp, ensureUnlocked, L7_HEALTH_CHECK_MESSAGE, liveLb, readHealthCheck, readListenerSession, readTargetType,
  startTask,
} from './guards.js';
import type { ActionDefinition } from './types.js';

/**
 * CreateListener (async, tencent-cloud.md §3, §5: `Ports` max 50 per call). Listener ids are returned at once; the
 * listeners appear when the task completes. `Certificate` is accepted and ignored (not part of the loopback model).
 */
const ALLOWED = [
  'LoadBalancerId', 'Ports', 'Protocol', 'ListenerNames', 'HealthCheck', 'Certificate', 'SessionExpireTime', 'Scheduler',
  'KeepaliveEnable', 'SnatEnable', 'SessionType', 'DeregisterTargetRst', 'IdleConnectTimeout', 'TargetType',
];

export const createListener: ActionDefinition = {
  async: true,
  run(ctx, params) {
    allowOnly(params, ALLOWED);
    const { core } = ctx;
    const lbId = reqString(params, 'LoadBalancerId');
    const lb = core.store.lb(lbId);
    const protocol = optEnum(params, 'Protocol', LISTENER_PROTOCOLS);
    if (!protocol) throw missingParameter('Protocol');
    const rawPorts = optArray(params, 'Ports', 50);
    if (!rawPorts || rawPorts.length === 0) throw missingParameter('Ports');
    const ports = rawPorts.map((p, i) => {
      if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 65535) {
        throw new ApiError('InvalidParameterValue.Range', `Ports.${i} must be an integer in [1, 65535].`);
      }
      return p;
    });
    if (new Set(ports).size !== ports.length) throw new ApiError('InvalidParameterValue.Duplicate', 'Ports contains duplicates.');
    const names = optStringArray(params, 'ListenerNames', 50);
    if (names && names.length !== ports.length) {
      throw new ApiError('InvalidParameterValue.Length', 'ListenerNames must have one name per port.');
    }
    for (const port of ports) {
      const clash = lb.Listeners.find((l) => l.Port === port && portsClash(l.Protocol, protocol));
      if (clash) throw new ApiError('InvalidParameter.PortCheckFailed', `Port ${port} is already used by listener ${clash.ListenerId}.`);
    }
    const l7 = isLayer7(protocol);
    if (l7 && params['HealthCheck'] !== undefined) throw new ApiError('InvalidParameter', L7_HEALTH_CHECK_MESSAGE);
    // Without a HealthCheck, or without its SourceIpType, the listener gets the account's default source (§9 #3).
    const hcCtx = { protocol, ipv6: isIpv6(lb), defaultSourceIpType: accountSourceIpType(core.capabilities) };
    const healthCheck = readHealthCheck(params, hcCtx);
    optObject(params, 'Certificate');
    const session = readListenerSession(params, protocol);
    readTargetType(params, protocol);
    const scheduler = optEnum(params, 'Scheduler', ['WRR', 'LEAST_CONN', 'IP_HASH']);
    const keepalive = optSwitch(params, 'KeepaliveEnable');
    const snat = optBool(params, 'SnatEnable');
    const sessionType = optEnum(params, 'SessionType', ['NORMAL', 'QUIC_CID']);
    const deregisterRst = optBool(params, 'DeregisterTargetRst');
    const idle = optIntInRange(params, 'IdleConnectTimeout', 10, 1980);

    checkSourceIp(core, lb, healthCheck);
    checkKeepaliveSnat(core, protocol, keepalive, snat);
    ensureUnlocked(core, [lbId]);

    const listeners: ListenerRecord[] = ports.map((port, i) =>
      buildListener(
        {
          name: names?.[i],
          protocol,
          port,
          healthCheck: l7 ? null : (healthCheck ?? defaultHealthCheck(hcCtx)),
          keepalive,
          snat,
          scheduler,
          sessionExpireTime: session,
          sessionType,
          deregisterTargetRst: deregisterRst,
          idleConnectTimeout: idle,
        },
        ctx.nowMs,
      ),
    );
    startTask(ctx, 'CreateListener', [lbId], () => {
      const target = liveLb(core, lbId);
      const now = Date.now();
      for (const l of listeners) target.Listeners.push({ ...l, healthChangedAtMs: now });
    });
    return { ListenerIds: listeners.map((l) => l.ListenerId) };
  },
};
