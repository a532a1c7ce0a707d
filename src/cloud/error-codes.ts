// The classification table for CLB API error codes: which are worth retrying, the CamelCase reason,
// and a message with cause and fix. Sources: tencent-cloud.md §3 "Error codes" (CLB product codes, common
// codes, per-API lists) and §9 #9. The real codes for missing capabilities are undocumented, so those
// are judged by the refused parameter (capability-refusals.ts), whatever the code.
import { capabilityRefusal } from './capability-refusals.js';
import type { CloudErrorContext, CloudErrorInfo } from './error-types.js';
import { redactSecrets } from './redact.js';


/** ` on CLB lb-x` when the call concerns one CLB. */
export function onLb(ctx: CloudErrorContext): string {
  return ctx.loadBalancerId ? ` on CLB ${ctx.loadBalancerId}` : '';
}

function quoteRequest(request: unknown): string {
  if (request === undefined) return '';
  let text: string;
  try {
    text = JSON.stringify(redactSecrets(request));
  } catch {
    return '';
  }
  return ` Request: ${text.length > 600 ? `${text.slice(0, 600)}…` : text}.`;
}

export type Verdict = Pick<CloudErrorInfo, 'reason' | 'retryable'> & { message: string; throttled?: boolean };

/**
 * The classification table for API error codes. `msg` is the API's message, `what` names the call
 * ("ModifyListener on CLB lb-x"). Order matters: capability refusals are checked before the generic
 * code they arrive under; `ctx.request` (the parameters sent) is what tells them apart.
 */
export function classifyApiError(code: string, msg: string, ctx: CloudErrorContext = {}): Verdict {
  const action = ctx.action ?? 'the call';
  const what = `${action}${onLb(ctx)}`;
  const quoted = `${code}: ${msg}`;

  if (code.startsWith('RequestLimitExceeded')) {
    return {
      reason: 'Throttled',
      retryable: true,
      throttled: true,
      message:
        `The CLB API throttled ${what} (${quoted}). loopguard backs off and retries; if this persists, lower ` +
        `loopguard's request budget for ${action}: the 20 requests/s per action are shared with TKE's controllers.`,
    };
  }
  // ResourceInUse is Tencent Cloud API 3.0's common "resource is occupied" code; Tencent's terraform provider retries
  // it for every product (tencentcloud/common/common.go retryableErrorCode, tencent-cloud.md §3 "Error codes"), as
  // loopguard retries the CLB's own busy code.
  if (
    code === 'FailedOperation.ResourceInOperating' || code === 'FailedOperation.InvalidLBStatus' || code === 'FailedOperation.ResourceInCloning' ||
    code === 'ResourceInUse' || code.startsWith('ResourceInUse.')
  ) {
    return {
      reason: 'ClbBusy',
      retryable: true,
      message: `The CLB is busy with another task (${quoted}); loopguard retries ${what} when it is done.`,
    };
  }
  // Before the generic codes: a capability refusal may arrive as InvalidParameterValue, FailedOperation, … (§9 #9).
  const capability = capabilityRefusal(code, msg, ctx.request);
  if (capability) {
    return { reason: capability.reason, retryable: false, message: `The CLB refused ${capability.what} for ${what} (${quoted}). ${capability.fix}` };
  }
  if (code === 'AuthFailure.UnauthorizedOperation' || code.startsWith('UnauthorizedOperation')) {
    const grant = ctx.action ? `"clb:${ctx.action}"` : 'the clb:* action named in the message';
    return {
      reason: 'PermissionDenied',
      retryable: false,
      message:
        `CAM does not allow ${what} for loopguard's credentials (${quoted}). Fix: grant ${grant} in the CAM policy ` +
        'of the user or role whose key loopguard uses (loopguard needs clb:DescribeLoadBalancers, clb:DescribeListeners, ' +
        'clb:DescribeTargetHealth, clb:DescribeTaskStatus, clb:ModifyListener, clb:ModifyRule and, if enabled, ' +
        'clb:ModifyLoadBalancerAttributes).',
    };
  }
  if (code === 'AuthFailure.SignatureExpire') {
    return {
      reason: 'ClockSkew',
      retryable: false,
      message:
        `The CLB API rejected the request timestamp (${quoted}): the clock of loopguard's node is more than 5 minutes ` +
        'off. Fix: synchronise the node clock (NTP/chrony).',
    };
  }
  if (code === 'AuthFailure.TokenFailure') {
    // Temporary credentials can expire between fetch and use; the provider refreshes, so one retry may help.
    return {
      reason: 'CredentialsRejected',
      retryable: true,
      message:
        `The temporary credential token was rejected (${quoted}). Fix: check the CVM role or TKE pod identity (OIDC) ` +
        'configuration, or TENCENTCLOUD_SESSION_TOKEN if a static token is set.',
    };
  }
  if (code === 'AuthFailure.SecretIdNotFound' || code === 'AuthFailure.InvalidSecretId') {
    return {
      reason: 'CredentialsRejected',
      retryable: false,
      message:
        `The CLB API does not know loopguard's SecretId (${quoted}). Fix: check the credentials Secret ` +
        '(TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY): the CAM API key may be mistyped, disabled or deleted.',
    };
  }
  if (code === 'AuthFailure.SignatureFailure') {
    return {
      reason: 'CredentialsRejected',
      retryable: false,
      message:
        `The CLB API could not verify loopguard's signature (${quoted}). Fix: the SecretKey does not match the SecretId; ` +
        'check TENCENTCLOUD_SECRET_KEY in the credentials Secret.',
    };
  }
  if (code.startsWith('AuthFailure')) {
    return {
      reason: 'CredentialsRejected',
      retryable: false,
      message:
        `Authentication with the CLB API failed (${quoted}). Fix: check the credentials loopguard uses (the Secret, ` +
        'the CAM key, the node clock).',
    };
  }
  if (code === 'InvalidParameter.LBIdNotFound' || (code === 'ResourceNotFound' && /load ?balancer|lb-/i.test(msg))) {
    return {
      reason: 'ClbNotFound',
      retryable: false,
      message: `${ctx.loadBalancerId ? `CLB ${ctx.loadBalancerId}` : 'The CLB'} does not exist (${quoted}): it was deleted, or the id on the target is wrong.`,
    };
  }
  if (code === 'InvalidParameter.ListenerIdNotFound') {
    return { reason: 'ListenerNotFound', retryable: false, message: `The listener of ${what} does not exist (${quoted}); loopguard re-reads the CLB.` };
  }
  if (code === 'InvalidParameter.LocationNotFound') {
    return { reason: 'RuleNotFound', retryable: false, message: `The forwarding rule of ${what} does not exist (${quoted}); loopguard re-reads the CLB.` };
  }
  if (code === 'InvalidParameter.RegionNotFound' || code === 'UnsupportedRegion') {
    return {
      reason: 'InvalidRequest',
      retryable: false,
      message: `The CLB API does not serve the configured region (${quoted}). Fix: set loopguard's region to the cluster's region (e.g. ap-guangzhou).`,
    };
  }
  if (code.startsWith('InternalError') || code === 'ResourceUnavailable' || code === 'ServiceUnavailable') {
    return { reason: 'CloudUnavailable', retryable: true, message: `The CLB API failed internally for ${what} (${quoted}); retried with backoff.` };
  }
  if (code.startsWith('LimitExceeded')) {
    return {
      reason: 'QuotaExceeded',
      retryable: false,
      message: `A CLB resource quota was exceeded by ${what} (${quoted}). Fix: raise the quota in the CLB console or by ticket.`,
    };
  }
  if (code === 'OperationDenied' || code.startsWith('OperationDenied.')) {
    return { reason: 'OperationDenied', retryable: false, message: `The CLB denied ${what} (${quoted}).` };
  }
  if (
    code.startsWith('InvalidParameter') ||
    code.startsWith('MissingParameter') ||
    code.startsWith('UnknownParameter') ||
    code.startsWith('UnsupportedOperation') ||
    code === 'InvalidAction' ||
    code === 'NoSuchVersion' ||
    code === 'ActionOffline' ||
    code === 'UnsupportedProtocol'
  ) {
    return {
      reason: 'InvalidRequest',
      retryable: false,
      message: `The CLB API rejected ${what} as invalid (${quoted}).${quoteRequest(ctx.request)}`,
    };
  }
  return { reason: 'CloudError', retryable: false, message: `The CLB API returned an error for ${what} (${quoted}).` };
}

