import { requireKeepaliveSnat, requireSource100_64 } from '../capabilities.js';
import type { EmulatorCore } from '../emulator.js';
import { ApiError, ipv6Source100_64, resourceInOperating } from '../errors.js';
import type { HealthCheckContext } from '../health-check.js';
import { applyHealthCheck, defaultHealthCheck } from '../health-check.js';
import type { HealthCheckState, ListenerProtocol, LoadBalancerRecord } from '../model.js';
import { isIpv6, isLayer7 } from '../model.js';
import type { Params } from '../params.js';
import { optObject } from '../params.js';
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
