// Which refusals are a missing CLB capability. Tencent does not publish the codes: a refused capability parameter
// has been seen as `InvalidParameterValue` ("This interface only support HTTP/HTTPS listener"), the keepalive beta
// is "内测中，请提交内测申请" with no code at all (tencent-cloud.md §9 #9, open question 6), and the local emulator uses
// UnauthorizedOperation / FailedOperation / InvalidParameterValue. So a refusal is judged by the parameter it
// refused, whatever the code (src/cloud/README.md "Capability refusals" has the rules as a table).
import type { CloudErrorReason } from './error-types.js';

type Request = Record<string, unknown>;

export interface CapabilityParameter {
  /** The request parameter, as the API spells it (`SourceIpType` sits inside `HealthCheck`). */
  parameter: string;
  /** The struct that holds it, if nested. */
  container?: string;
  /** The request asks for the capability (an enabling value: turning a feature off never needs one). */
  requested(request: Request): boolean;
  /** How a refusal names it. */
  named: RegExp;
  reason: CloudErrorReason;
  /** What was refused, for people: "`SourceIpType=1` (…)". */
  what: string;
  fix: string;
}

const isRecord = (v: unknown): v is Request => typeof v === 'object' && v !== null && !Array.isArray(v);

// The Chinese names in `named` (健康检查源 health-check source, 长连接 keepalive, 默认放通 allowed by default, 跨地域
// cross-region) are written as \u escapes: esbuild leaves a regular expression's characters as they are, and one
// character beyond Latin-1 makes V8 keep the operator bundle's whole source (5.5 MB, kept for the process's life)
// two bytes per character, 10.6 MiB of heap instead of 5.3 (bench/scale's heap snapshot, 2026-11-26).
export const CAPABILITY_PARAMETERS: readonly CapabilityParameter[] = [
  {
    parameter: 'SourceIpType',
    container: 'HealthCheck',
    requested: (r) => isRecord(r['HealthCheck']) && r['HealthCheck']['SourceIpType'] === 1,
    named: /SourceIpType|100\.64|non-VIP health-check source|health-check source IP|\u5065\u5eb7\u68c0\u67e5\u6e90/i,
    reason: 'HealthCheckSourceCapabilityMissing',
    what: 'the 100.64.0.0/10 health-check source (SourceIpType=1)',
    fix:
      'Fix: enable the non-VIP health-check source IP for the account in the CLB console, or file a Tencent Cloud ' +
      'ticket asking for it (IPv6 CLBs never support it); loopguard retries once the policy or the CLB changes.',
  },
  {
    parameter: 'KeepaliveEnable',
    requested: (r) => r['KeepaliveEnable'] === 1,
    named: /Keepalive|\u957f\u8fde\u63a5/i,
    reason: 'KeepaliveCapabilityMissing',
    what: 'keepalive on a layer-7 listener (KeepaliveEnable=1)',
    fix: 'Fix: file a Tencent Cloud ticket to enable the CLB layer-7 SNAT + keepalive capability (七层 SNAT / 长连接) for the account.',
  },
  {
    parameter: 'SnatEnable',
    requested: (r) => r['SnatEnable'] === true,
    named: /SnatEnable|\bSNAT\b|layer-7 SNAT/i,
    reason: 'KeepaliveCapabilityMissing',
    what: 'SNAT on a layer-7 listener (SnatEnable=true)',
    fix: 'Fix: file a Tencent Cloud ticket to enable the CLB layer-7 SNAT + keepalive capability (七层 SNAT / 长连接) for the account.',
  },
  {
    parameter: 'LoadBalancerPassToTarget',
    requested: (r) => r['LoadBalancerPassToTarget'] === true,
    named: /PassToTarget|allow(ing)? traffic from CLB|\u9ed8\u8ba4\u653e\u901a/i,
    reason: 'PassToTargetCapabilityMissing',
    what: '"allow traffic from CLB by default" (LoadBalancerPassToTarget=true)',
    fix:
      'Fix: IPv6 CLBs never support it; otherwise ask Tencent Cloud support to enable it for the account, or allow the ' +
      "CLB's addresses in the nodes' security group and turn l7.allowCLBTrafficByDefault off.",
  },
  {
    parameter: 'SnatPro',
    requested: (r) => r['SnatPro'] === true,
    named: /SnatPro|cross-region|\u8de8\u5730\u57df/i,
    reason: 'SnatProCapabilityMissing',
    what: 'SNAT Pro / cross-region binding 2.0 (SnatPro=true)',
    fix: 'Fix: file a Tencent Cloud ticket to enable cross-region binding 2.0 (SnatPro) for the account.',
  },
];

/** Codes that are never a capability refusal, whatever the message says: quota, busy, auth, missing objects, outages. */
const NEVER =
  /^(RequestLimitExceeded|InternalError|ResourceUnavailable|ResourceInUse|ServiceUnavailable|LimitExceeded|MissingParameter)(\.|$)|^FailedOperation\.(ResourceInOperating|InvalidLBStatus|ResourceInCloning)$|^InvalidParameter\.(LBIdNotFound|ListenerIdNotFound|LocationNotFound|RegionNotFound|FormatError)$|^AuthFailure\.(?!UnauthorizedOperation$)/;
/** Codes a capability refusal arrives under even when the message names no parameter (the emulator's, too). */
const CAPABILITY_CODES = /^(UnauthorizedOperation|FailedOperation|UnsupportedOperation|OperationDenied)(\.|$)/;
/**
 * Codes under which a refusal that names nothing is pinned on the request's only capability parameter. Not
 * UnauthorizedOperation: a CAM denial names no parameter either, and must stay PermissionDenied.
 */
const REFUSAL_CODES = /^(InvalidParameter|InvalidParameterValue|InvalidParameterCombination|UnsupportedOperation|FailedOperation|OperationDenied)(\.|$)/;
/** Ids select what to change; they are never the refused part of a request. */
const IDENTIFIERS = new Set(['LoadBalancerId', 'ListenerId', 'LocationId']);

/** Every parameter name in the request other than `except` (nested ones included, containers too). */
function otherParameterNames(request: Request, except: CapabilityParameter): string[] {
  const names: string[] = [];
  for (const [key, value] of Object.entries(request)) {
    if (key !== except.parameter) names.push(key);
    if (isRecord(value)) for (const nested of Object.keys(value)) if (nested !== except.parameter) names.push(nested);
  }
  return names;
}

/**
 * Whether the capability parameter is all the request asks for: besides the ids, only it (or, nested, only its
 * container). A HealthCheck write counts: loopguard sends back the struct the CLB returned with only SourceIpType
 * changed, so a refusal of it that names no field is a refusal of the source.
 */
function onlyNonTrivial(request: Request, cap: CapabilityParameter): boolean {
  const rest = Object.keys(request).filter((k) => !IDENTIFIERS.has(k));
  return rest.length === 1 && rest[0] === (cap.container ?? cap.parameter);
}

const mentions = (message: string, name: string): boolean => new RegExp(`(^|[^A-Za-z])${name}([^A-Za-z]|$)`).test(message);

/**
 * The capability a refusal is about, or undefined. In order:
 * 1. the request asked for a capability and the message names that parameter — any code but those in NEVER;
 * 2. the message names a capability under a capability code (UnauthorizedOperation, FailedOperation, …) —
 *    also without a request, so callers that pass none (and TKE's relayed messages) are still understood;
 * 3. the message names no parameter at all, the code is a refusal (InvalidParameter*, FailedOperation, …), and
 *    the one thing the request asked for is a capability.
 * Anything else is left to the code table (InvalidRequest, PermissionDenied, …): a refusal naming another
 * parameter, or naming nothing while the request carried several things, cannot be pinned on the capability.
 */
export function capabilityRefusal(code: string, message: string, request?: unknown): CapabilityParameter | undefined {
  if (NEVER.test(code)) return undefined;
  const req = isRecord(request) ? request : undefined;
  const asked = req ? CAPABILITY_PARAMETERS.filter((c) => c.requested(req)) : [];
  const named = asked.find((c) => c.named.test(message));
  if (named) return named;
  const anyNamed = CAPABILITY_PARAMETERS.find((c) => c.named.test(message));
  if (anyNamed) return CAPABILITY_CODES.test(code) ? anyNamed : undefined;
  const [only] = asked;
  if (!req || !only || asked.length !== 1 || !REFUSAL_CODES.test(code) || !onlyNonTrivial(req, only)) return undefined;
  return otherParameterNames(req, only).some((name) => mentions(message, name)) ? undefined : only;
}
