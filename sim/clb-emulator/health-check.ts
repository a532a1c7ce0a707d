import { ApiError, missingParameter } from './errors.js';
import type { HealthCheckState, ListenerProtocol } from './model.js';
import { isLayer7 } from './model.js';
import type { Params } from './params.js';
import { allowOnly, optEnum, optInt, optIntInRange, optString, optSwitch } from './params.js';

/**
 * The `HealthCheck` struct shared by listeners (L4) and rules (L7): defaults, ranges and the update model
 * (tencent-cloud.md §3 "HealthCheck struct").
 *
 * Update model (tencent-cloud.md open question 4 is unresolved): the emulator takes the STRICT reading — a HealthCheck
 * in ModifyListener/ModifyRule replaces the whole struct, and every omitted field falls back to its default. A
 * client that sends only `{SourceIpType: 1}` therefore also resets e.g. a custom IntervalTime or a disabled
 * HealthSwitch. Clients must send the full struct read back from DescribeListeners.
 */

export interface HealthCheckContext {
  /** Listener protocol (for rules: the owning listener's protocol). */
  protocol: ListenerProtocol;
  /** Rules only: backend protocol, decides the default CheckType on HTTPS listeners. */
  forwardType?: string;
  ipv6: boolean;
  /**
   * The account's default `SourceIpType` (tencent-cloud.md §9 #3: 1 for accounts new to CLB since 2023-02-24), used
   * wherever a default applies: a create or a strict-reset modify that leaves the field out, and seeds. Default 0.
   */
  defaultSourceIpType?: number;
}

const FIELDS = [
  'HealthSwitch', 'TimeOut', 'IntervalTime', 'HealthNum', 'UnHealthNum', 'HttpCode', 'HttpCheckPath',
  'HttpCheckDomain', 'HttpCheckMethod', 'CheckPort', 'ContextType', 'SendContext', 'RecvContext', 'CheckType',
  'HttpVersion', 'SourceIpType', 'ExtendedCode',
] as const;

const CHECK_TYPES: Record<ListenerProtocol, readonly string[]> = {
  UDP: ['PING', 'CUSTOM'],
  TCP: ['TCP', 'HTTP', 'CUSTOM'],
  TCP_SSL: ['TCP', 'HTTP'],
  QUIC: ['TCP', 'HTTP'],
  HTTP: ['HTTP', 'GRPC'],
  HTTPS: ['HTTP', 'HTTPS', 'GRPC'],
};

function defaultCheckType(ctx: HealthCheckContext): string {
  switch (ctx.protocol) {
    case 'UDP':
      return 'PING';
    case 'HTTP':
      return 'HTTP';
    case 'HTTPS':
      // "HTTPS 监听器的 CheckType 默认值与后端转发协议一致"
      return ctx.forwardType === 'HTTPS' || ctx.forwardType === 'GRPC' ? ctx.forwardType : 'HTTP';
    default:
      return 'TCP';
  }
}

const isHttpCheck = (checkType: string): boolean => checkType === 'HTTP' || checkType === 'HTTPS';

/**
 * Fields that exist only for HTTP(S) probes (clb_models.d.ts HealthCheck: "仅适用于HTTP/HTTPS转发规则、TCP监听器的HTTP健康检查方式",
 * each "may return null"; HttpVersion only for a TCP listener's HTTP check). On any other check they are null —
 * never a default — and a write that sets one to a non-empty value is refused, as terraform-provider-tencentcloud
 * refuses `health_check_http_code` & co. unless the check is HTTP (tencent-cloud.md §9 #7). That the API refuses
 * rather than ignores, and the code, are assumptions (sim/clb-emulator/CONFORMANCE.md).
 */
const HTTP_ONLY = ['HttpCode', 'HttpCheckPath', 'HttpCheckDomain', 'HttpCheckMethod', 'HttpVersion'] as const;

function clearHttpOnly(hc: HealthCheckState): void {
  for (const field of HTTP_ONLY) hc[field] = null;
}

/**
 * Tencent's own terraform provider fills `HttpCheckPath: ""` and `CheckPort: -1` into every enabled TCP listener
 * check it sends, and `HttpCheckDomain: ""` into a TCP listener's HTTP check without a domain
 * (terraform-provider-tencentcloud `tencentcloud/services/clb/service_tencentcloud_clb.go`, `checkHealthCheckPara` /
 * `checkHealthCheckParaForUpdate`; its acceptance test `TestAccTencentCloudClbListenerTCPWithHTTP` reads the empty
 * path and domain back). The real API evidently accepts them, so an empty string is "not set" here: ignored on a
 * check it does not apply to, kept as sent on an HTTP check (tencent-cloud.md §3 HealthCheck).
 */
const isBlank = (v: unknown): boolean => v === undefined || v === null || v === '';

/**
 * IPv6 CLBs: "IPv6 版本的负载均衡的 TCP 监听器不支持 HTTP 健康检查和自定义方式健康检查；… UDP 监听器不支持自定义方式的健康检查"
 * (CLB doc https://cloud.tencent.com/document/product/214/50011, "限制说明"; tencent-cloud.md §3). The code is assumed.
 */
const IPV6_REFUSED_CHECKS: Partial<Record<ListenerProtocol, readonly string[]>> = { TCP: ['HTTP', 'CUSTOM'], UDP: ['CUSTOM'] };

export function defaultHealthCheck(ctx: HealthCheckContext): HealthCheckState {
  const checkType = defaultCheckType(ctx);
  const http = isHttpCheck(checkType);
  return {
    HealthSwitch: 1,
    TimeOut: 2,
    IntervalTime: 5,
    HealthNum: 3,
    UnHealthNum: 3,
    HttpCode: http ? 31 : null,
    HttpCheckPath: http ? '/' : null,
    HttpCheckDomain: null,
    HttpCheckMethod: http ? 'HEAD' : null,
    CheckPort: null,
    ContextType: null,
    SendContext: null,
    RecvContext: null,
    CheckType: checkType,
    HttpVersion: null,
    // IPv6 CLBs cannot use 100.64 (§9 #4), whatever the account's default.
    SourceIpType: ctx.ipv6 ? 0 : (ctx.defaultSourceIpType ?? 0),
    ExtendedCode: null,
  };
}

/**
 * Validates `input` and returns the resulting state. `base` is what omitted fields become: the defaults for API
 * writes (strict reset model) or the current state for admin drift patches (a console user editing one field).
 * Capability and IPv6 rules are checked by the caller (guards.ts) because drift patches skip them.
 */
export function applyHealthCheck(input: Params, ctx: HealthCheckContext, base: HealthCheckState, label = 'HealthCheck'): HealthCheckState {
  allowOnly(input, FIELDS, `${label}.`);
  const f = (name: string): string => `${label}.${name}`;
  const next: HealthCheckState = { ...base };
  // `input` stays as sent; `p` is what the rules below read (blank HTTP-only fields of a non-HTTP check dropped).
  let p: Params = input;

  next.HealthSwitch = optSwitch(input, 'HealthSwitch', f('HealthSwitch')) ?? next.HealthSwitch;
  next.SourceIpType = optSwitch(input, 'SourceIpType', f('SourceIpType')) ?? next.SourceIpType;
  next.TimeOut = optIntInRange(input, 'TimeOut', 2, 60, f('TimeOut')) ?? next.TimeOut;
  // IPv6 CLBs accept 5–300 only; IPv4 2–300 (tencent-cloud.md §3, clb_models.d.ts HealthCheck.IntervalTime).
  next.IntervalTime = optIntInRange(input, 'IntervalTime', ctx.ipv6 ? 5 : 2, 300, f('IntervalTime')) ?? next.IntervalTime;
  next.HealthNum = optIntInRange(input, 'HealthNum', 2, 10, f('HealthNum')) ?? next.HealthNum;
  next.UnHealthNum = optIntInRange(input, 'UnHealthNum', 2, 10, f('UnHealthNum')) ?? next.UnHealthNum;
  next.HttpCode = optIntInRange(input, 'HttpCode', 1, 31, f('HttpCode')) ?? next.HttpCode;

  const checkType = optEnum(input, 'CheckType', CHECK_TYPES[ctx.protocol], f('CheckType'));
  if (checkType !== undefined && checkType !== next.CheckType) {
    next.CheckType = checkType;
    if (isHttpCheck(checkType)) {
      next.HttpCode ??= 31;
      next.HttpCheckPath ??= '/';
      next.HttpCheckMethod ??= 'HEAD';
    } else {
      // A drift patch moving an HTTP check to TCP/PING/CUSTOM: the HTTP settings stop existing.
      clearHttpOnly(next);
    }
  }
  const refusedOnIpv6 = ctx.ipv6 ? IPV6_REFUSED_CHECKS[ctx.protocol] : undefined;
  if (refusedOnIpv6?.includes(next.CheckType)) {
    throw new ApiError(
      'InvalidParameterValue',
      `${f('CheckType')} ${next.CheckType} is not supported by the ${ctx.protocol} listeners of an IPv6 load balancer; use ${ctx.protocol === 'UDP' ? 'PING' : 'TCP'}.`,
    );
  }
  if (!isHttpCheck(next.CheckType)) {
    const sent = HTTP_ONLY.filter((field) => !isBlank(input[field]));
    if (sent.length > 0) {
      throw new ApiError(
        'InvalidParameterValue',
        `${sent.map(f).join(', ')} can only be set on an HTTP health check (HTTP/HTTPS rules, or CheckType HTTP on a TCP listener); this check is ${next.CheckType}.`,
      );
    }
    p = Object.fromEntries(Object.entries(input).filter(([key]) => !(HTTP_ONLY as readonly string[]).includes(key)));
  }
  if (!isBlank(input['HttpVersion']) && isLayer7(ctx.protocol)) {
    throw new ApiError('InvalidParameterValue', `${f('HttpVersion')} only applies to the HTTP health check of a TCP listener.`);
  }
  const method = optString(p, 'HttpCheckMethod', f('HttpCheckMethod'));
  if (method !== undefined) {
    const upper = method.toUpperCase();
    if (upper !== 'HEAD' && upper !== 'GET') {
      throw new ApiError('InvalidParameterValue', `The value \`${method}\` of \`${f('HttpCheckMethod')}\` is invalid; expected HEAD or GET.`);
    }
    next.HttpCheckMethod = upper;
  }
  const path = optString(p, 'HttpCheckPath', f('HttpCheckPath'));
  if (path !== undefined) {
    if (path !== '' && (!path.startsWith('/') || path.length > 200)) {
      throw new ApiError('InvalidParameterValue', `\`${f('HttpCheckPath')}\` must start with "/" and be at most 200 characters.`);
    }
    next.HttpCheckPath = path;
  }
  next.HttpCheckDomain = optString(p, 'HttpCheckDomain', f('HttpCheckDomain')) ?? next.HttpCheckDomain;
  next.HttpVersion = optEnum(p, 'HttpVersion', ['HTTP/1.0', 'HTTP/1.1'], f('HttpVersion')) ?? next.HttpVersion;
  next.ContextType = optEnum(input, 'ContextType', ['HEX', 'TEXT'], f('ContextType')) ?? next.ContextType;
  next.SendContext = optString(input, 'SendContext', f('SendContext')) ?? next.SendContext;
  next.RecvContext = optString(input, 'RecvContext', f('RecvContext')) ?? next.RecvContext;
  next.ExtendedCode = optString(input, 'ExtendedCode', f('ExtendedCode')) ?? next.ExtendedCode;

  const checkPort = optInt(input, 'CheckPort', f('CheckPort'));
  if (checkPort !== undefined) {
    if (checkPort !== -1 && (checkPort < 1 || checkPort > 65535)) {
      throw new ApiError('InvalidParameterValue.Range', `The value \`${checkPort}\` of \`${f('CheckPort')}\` is out of range [1, 65535] (or -1 to reset).`);
    }
    next.CheckPort = checkPort === -1 ? null : checkPort; // -1 restores "the backend port"
  }

  // "响应超时时间要小于检查间隔时间". A TKE-generated config has timeout 5 / interval 5, so equality is accepted.
  if (next.TimeOut > next.IntervalTime) {
    throw new ApiError(
      'InvalidParameterValue',
      `${f('TimeOut')} (${next.TimeOut}) must not exceed ${f('IntervalTime')} (${next.IntervalTime}).`,
    );
  }
  // TCP-family listeners probing over HTTP need the Host header and HTTP version (clb_models.d.ts HealthCheck:
  // "必填"). The domain must be present, but may be empty: terraform sends "" and reads "" back (isBlank above).
  const l4 = ctx.protocol === 'TCP' || ctx.protocol === 'TCP_SSL' || ctx.protocol === 'QUIC';
  if (l4 && next.CheckType === 'HTTP') {
    if (next.HttpCheckDomain === null) throw missingParameter(f('HttpCheckDomain'));
    if (!next.HttpVersion) throw missingParameter(f('HttpVersion'));
  }
  if (next.CheckType === 'CUSTOM' && !next.ContextType) throw missingParameter(f('ContextType'));
  return next;
}

/** True when the write changes anything that affects probing (resets the health convergence clock). */
export function healthCheckChanged(a: HealthCheckState | null, b: HealthCheckState | null): boolean {
  return JSON.stringify(a) !== JSON.stringify(b);
}
