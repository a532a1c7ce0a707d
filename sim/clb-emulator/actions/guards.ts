import { requireKeepaliveSnat, requireSource100_64 } from '../capabilities.js';
import type { EmulatorCore } from '../emulator.js';
import { ApiError, ipv6Source100_64, resourceInOperating } from '../errors.js';
import type { HealthCheckContext } from '../health-check.js';
import { applyHealthCheck, defaultHealthCheck } from '../health-check.js';
import type { HealthCheckState, ListenerProtocol, LoadBalancerRecord } from '../model.js';
import { isIpv6, isLayer7 } from '../model.js';
import type { Params } from '../params.js';
import { optEnum, optIntInRange, optObject } from '../params.js';
import type { ActionContext } from './types.js';

/** Rules every write action shares: the per-CLB lock, IPv6 and capability checks, starting the task. */

export function ensureUnlocked(core: EmulatorCore, lbIds: readonly string[]): void {
  for (const id of lbIds) {
    if (core.tasks.runningOn(id)) throw resourceInOperating(id);
  }
}

/**
 * `SourceIpType = 1` is refused on IPv6 CLBs (tencent-cloud.md §3: "IPv6 CLBs cannot use 100.64") and when the account
 * lacks the 100.64 capability. IPv6 is checked first: it can never work, whatever the account.
 */
export function checkSourceIp(core: EmulatorCore, lb: LoadBalancerRecord, hc: HealthCheckState | undefined): void {
  if (!hc || hc.SourceIpType !== 1) return;
  if (isIpv6(lb)) throw ipv6Source100_64(lb.LoadBalancerId);
  requireSource100_64(core.capabilities);
}

/** `KeepaliveEnable` is HTTP/HTTPS-only; `KeepaliveEnable=1` and `SnatEnable=true` need the L7 capability. */
export function checkKeepaliveSnat(
  core: EmulatorCore,
  protocol: ListenerProtocol,
  keepalive: number | undefined,
  snat: boolean | undefined,
): void {
  // The code and wording a refused protocol/parameter combination was seen with (tencent-cloud.md §9 #9).
  if (keepalive !== undefined && !isLayer7(protocol)) throw new ApiError('InvalidParameterValue', 'This interface only support HTTP/HTTPS listener');
  if (keepalive === 1 || snat === true) requireKeepaliveSnat(core.capabilities);
}

/**
 * Listener `SessionExpireTime`: "此参数仅适用于TCP/UDP监听器" (clb_models.d.ts CreateListenerRequest and
 * ModifyListenerRequest; terraform-provider-tencentcloud refuses `session_expire_time` on other listeners too,
 * resource_tc_clb_listener.go). Range "30~3600, 默认 0". The code is CLB's documented one for "相关协议不支持对应操作"
 * (tencentcloud-sdk-go clb/v20180317/errors.go `InvalidParameter.ProtocolCheckFailed`); that this refusal uses it is
 * assumed (tencent-cloud.md §3).
 */
export function readListenerSession(params: Params, protocol: ListenerProtocol): number | undefined {
  if (params['SessionExpireTime'] !== undefined && protocol !== 'TCP' && protocol !== 'UDP') {
    throw new ApiError('InvalidParameter.ProtocolCheckFailed', `SessionExpireTime is only applicable to TCP/UDP listeners; this listener is ${protocol}.`);
  }
  const session = optIntInRange(params, 'SessionExpireTime', 0, 3600);
  if (session !== undefined && session !== 0 && session < 30) {
    throw new ApiError('InvalidParameterValue.Range', 'SessionExpireTime must be 0 or 30–3600.');
  }
  return session;
}

/**
 * `TargetType` (CreateListener/ModifyListener, and `RuleInput` of CreateRule): NODE binds ordinary nodes, which is
 * all the emulator models; terraform-provider-tencentcloud sends `NODE` on every layer-4 CreateListener and every
 * CreateRule (resource_tc_clb_listener.go, resource_tc_clb_listener_rule.go). Target groups are not modelled. On a
 * listener the SDK says "此参数仅适用于TCP/UDP监听器。七层监听器应在转发规则中设置" — terraform sends it to TCP_SSL/QUIC
 * listeners as well, so only layer 7 is refused (code assumed).
 */
export function readTargetType(params: Params, protocol: ListenerProtocol | undefined, label = 'TargetType'): void {
  const type = optEnum(params, 'TargetType', ['NODE', 'TARGETGROUP', 'TARGETGROUP-V2'], label);
  if (type === undefined) return;
  if (protocol !== undefined && isLayer7(protocol)) {
    throw new ApiError('InvalidParameter', `${label} of a layer-7 (HTTP/HTTPS) listener is set per rule (CreateRule).`);
  }
  if (type !== 'NODE') throw new ApiError('UnknownParameter', `${label} ${type} is not modelled by the CLB emulator (no target groups).`);
}

export const L7_HEALTH_CHECK_MESSAGE =
  'The health check of a layer-7 (HTTP/HTTPS) listener is configured per rule (ModifyRule); HealthCheck is only applicable to TCP/UDP/TCP_SSL/QUIC listeners.';

/** Reads an optional `HealthCheck` parameter with the strict reset model (omitted fields → defaults). */
export function readHealthCheck(params: Params, ctx: HealthCheckContext, label = 'HealthCheck'): HealthCheckState | undefined {
  const input = optObject(params, 'HealthCheck', label);
  return input && applyHealthCheck(input, ctx, defaultHealthCheck(ctx), label);
}

export function startTask(
  ctx: ActionContext,
  action: string,
  lbIds: readonly string[],
  apply: () => void,
  onFailure?: () => void,
): void {
  ctx.core.tasks.start({
    taskId: ctx.requestId,
    action,
    loadBalancerIds: [...lbIds],
    apply,
    ...(onFailure ? { onFailure } : {}),
    ...(ctx.taskFailure === undefined ? {} : { failure: ctx.taskFailure }),
  });
  ctx.core.stats.task('started');
}

/**
 * The task applies to the CLB as it exists at completion; if the admin removed it meanwhile the task fails.
 */
export function liveLb(core: EmulatorCore, lbId: string): LoadBalancerRecord {
  const lb = core.store.find(lbId);
  if (!lb) throw new Error(`LoadBalancer ${lbId} no longer exists.`);
  return lb;
}
