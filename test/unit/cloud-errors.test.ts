import { describe, expect, it } from '@jest/globals';
import SdkExceptionModule from 'tencentcloud-sdk-nodejs/tencentcloud/common/exception/tencent_cloud_sdk_exception.js';
import {
  KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE, SOURCE_100_64_DISABLED_CODE, SOURCE_100_64_DISABLED_MESSAGE,
} from '../../sim/clb-emulator/capabilities.js';
import type { CloudErrorReason } from '../../src/cloud/errors.js';
import {
  ClbError, ClbTaskFailedError, ClbTaskTimeoutError, CredentialsError, describeCloudError, isSdkException, toClbError,
} from '../../src/cloud/errors.js';

const SdkException = (SdkExceptionModule as unknown as { default: new (msg: string, requestId?: string, traceId?: string) => Error & { code?: string; httpCode?: number } }).default;

function apiError(code: string, message: string): Error {
  const e = new SdkException(message, 'req-1', 'trace-1');
  e.code = code;
  return e;
}

function httpError(status: number, statusText: string): Error {
  const e = new SdkException(statusText, '', 'trace-1');
  e.httpCode = status;
  return e;
}

const ctx = { action: 'ModifyListener', loadBalancerId: 'lb-1', endpoint: 'clb.tencentcloudapi.com' };

/** code, API message → reason, retryable, and words the user-facing message must contain. */
const TABLE: Array<[string, string, CloudErrorReason, boolean, string[]]> = [
  ['RequestLimitExceeded', 'rate of ModifyListener exceeds 20', 'Throttled', true, ['throttled', 'shared with TKE']],
  ['RequestLimitExceeded.UinLimitExceeded', 'uin limit', 'Throttled', true, ['throttled']],
  ['RequestLimitExceeded.GlobalRegionUinLimitExceeded', 'x', 'Throttled', true, ['throttled']],
  ['FailedOperation.ResourceInOperating', 'Loadbalancer(lb-1) is not in normal desState', 'ClbBusy', true, ['busy']],
  ['FailedOperation.InvalidLBStatus', 'status', 'ClbBusy', true, ['busy']],
  // Tencent's common "resource occupied" code; terraform-provider-tencentcloud retries it (common.go retryableErrorCode).
  ['ResourceInUse', 'The resource is in use.', 'ClbBusy', true, ['busy']],
  ['ResourceInUse.LoadBalancer', 'in use', 'ClbBusy', true, ['busy']],
  ['InternalError', 'oops', 'CloudUnavailable', true, ['internally']],
  ['InternalError.UnknownError', 'oops', 'CloudUnavailable', true, ['internally']],
  ['AuthFailure.SecretIdNotFound', 'The SecretId is not found', 'CredentialsRejected', false, ['Secret', 'CAM API key']],
  ['AuthFailure.InvalidSecretId', 'bad', 'CredentialsRejected', false, ['TENCENTCLOUD_SECRET_ID']],
  ['AuthFailure.SignatureFailure', 'sig', 'CredentialsRejected', false, ['SecretKey']],
  ['AuthFailure.SignatureExpire', 'expired', 'ClockSkew', false, ['clock', 'NTP']],
  ['AuthFailure.TokenFailure', 'token', 'CredentialsRejected', true, ['pod identity']],
  ['AuthFailure.MFAFailure', 'mfa', 'CredentialsRejected', false, ['credentials']],
  ['AuthFailure.UnauthorizedOperation', 'not authorized', 'PermissionDenied', false, ['"clb:ModifyListener"', 'CAM']],
  ['UnauthorizedOperation', 'you are not authorized', 'PermissionDenied', false, ['"clb:ModifyListener"']],
  [SOURCE_100_64_DISABLED_CODE, SOURCE_100_64_DISABLED_MESSAGE, 'HealthCheckSourceCapabilityMissing', false, ['100.64.0.0/10', 'ticket', 'console']],
  [KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE, 'KeepaliveCapabilityMissing', false, ['ticket', 'layer-7 SNAT + keepalive']],
  ['InvalidParameter.LBIdNotFound', 'LoadBalancer not exist: lb-1', 'ClbNotFound', false, ['lb-1', 'does not exist']],
  ['InvalidParameter.ListenerIdNotFound', 'Listener not exist', 'ListenerNotFound', false, ['listener']],
  ['InvalidParameter.LocationNotFound', 'Location not exist', 'RuleNotFound', false, ['rule']],
  ['InvalidParameter.RegionNotFound', 'region', 'InvalidRequest', false, ['region']],
  ['InvalidParameter', 'HealthCheck is only applicable to TCP/UDP', 'InvalidRequest', false, ['invalid', 'HealthCheck is only applicable', 'Request:']],
  ['InvalidParameter', 'KeepaliveEnable is only supported by HTTP/HTTPS listeners', 'InvalidRequest', false, ['invalid']],
  ['InvalidParameterValue.Range', 'out of range', 'InvalidRequest', false, ['out of range']],
  ['MissingParameter', 'missing', 'InvalidRequest', false, ['invalid']],
  ['UnknownParameter', 'unknown', 'InvalidRequest', false, ['invalid']],
  ['UnsupportedOperation', 'classic', 'InvalidRequest', false, ['invalid']],
  ['LimitExceeded', 'quota', 'QuotaExceeded', false, ['quota']],
  ['OperationDenied', 'delete protection', 'OperationDenied', false, ['denied']],
  ['FailedOperation', 'something else', 'CloudError', false, ['FailedOperation: something else']],
  ['SomethingNew', 'new', 'CloudError', false, ['SomethingNew']],
];

/** A full TCP health check as read back, with only SourceIpType changed: what loopguard's L4 write sends. */
const FULL_HC = { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: 1 };
const LISTENER = { LoadBalancerId: 'lb-1', ListenerId: 'lbl-1' };
const REAL_L7_ONLY = 'This interface only support HTTP/HTTPS listener'; // tencent-cloud.md §9 #9 (terraform-provider-tencentcloud #37)

/**
 * Capability refusals are judged by the refused parameter, whatever the code (tencent-cloud.md §9 #9): code, API message,
 * request sent (undefined: none known) → reason, words the message must contain.
 */
const CAPABILITY_TABLE: Array<[string, string, Record<string, unknown> | undefined, CloudErrorReason, string[]]> = [
  // The real wording, the only non-trivial parameter being the capability.
  ['InvalidParameterValue', REAL_L7_ONLY, { ...LISTENER, KeepaliveEnable: 1 }, 'KeepaliveCapabilityMissing', ['KeepaliveEnable=1', 'ticket', REAL_L7_ONLY]],
  // The same refusal when the request asked for several things cannot be pinned on keepalive.
  ['InvalidParameterValue', REAL_L7_ONLY, { ...LISTENER, ListenerName: 'web', KeepaliveEnable: 1 }, 'InvalidRequest', ['Request:']],
  // A message in Chinese naming the capability pins it, whatever else the request asked (the names are \u escapes in
  // the source, see capability-refusals.ts).
  ['InvalidParameterValue', '当前账号不支持七层长连接', { ...LISTENER, ListenerName: 'web', KeepaliveEnable: 1 }, 'KeepaliveCapabilityMissing', ['KeepaliveEnable=1']],
  ['InvalidParameterValue', '健康检查源IP不支持', { ...LISTENER, ListenerName: 'web', HealthCheck: FULL_HC }, 'HealthCheckSourceCapabilityMissing', ['SourceIpType=1']],
  // Turning a feature off needs no capability.
  ['InvalidParameterValue', REAL_L7_ONLY, { ...LISTENER, KeepaliveEnable: 0 }, 'InvalidRequest', []],
  // The emulator's capability errors, and the same without a request (TKE relays them, callers may not pass one).
  [KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE, { ...LISTENER, SnatEnable: true }, 'KeepaliveCapabilityMissing', ['SnatEnable=true', 'layer-7 SNAT + keepalive']],
  [KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE, undefined, 'KeepaliveCapabilityMissing', ['ticket']],
  [SOURCE_100_64_DISABLED_CODE, SOURCE_100_64_DISABLED_MESSAGE, { ...LISTENER, HealthCheck: FULL_HC }, 'HealthCheckSourceCapabilityMissing', ['SourceIpType=1', '100.64.0.0/10', 'console']],
  ['InvalidParameterValue', 'SourceIpType=1 (health-check source 100.64.0.0/10) is not supported by IPv6 load balancer lb-1; use SourceIpType=0.', { ...LISTENER, HealthCheck: FULL_HC }, 'HealthCheckSourceCapabilityMissing', ['IPv6', '100.64.0.0/10']],
  ['InvalidParameterValue', 'LoadBalancerPassToTarget is not supported by IPv6 load balancer lb-1.', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'PassToTargetCapabilityMissing', ['LoadBalancerPassToTarget=true', 'allow traffic from CLB by default']],
  ['UnsupportedOperation', 'The operation is not supported.', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'PassToTargetCapabilityMissing', ['LoadBalancerPassToTarget=true']],
  ['InvalidParameterValue', 'SnatPro is not supported in this region', { LoadBalancerId: 'lb-1', SnatPro: true }, 'SnatProCapabilityMissing', ['SnatPro=true', 'ticket']],
  // A generic refusal of loopguard's health-check write: the struct is the CLB's own but for SourceIpType.
  ['FailedOperation', 'operation failed', { ...LISTENER, HealthCheck: FULL_HC }, 'HealthCheckSourceCapabilityMissing', ['SourceIpType=1']],
  // A refusal that names another parameter (or the whole struct) is a bad request.
  ['InvalidParameterValue.Range', 'The value `99` of `HealthCheck.TimeOut` is out of range [2, 60].', { ...LISTENER, HealthCheck: FULL_HC }, 'InvalidRequest', ['TimeOut']],
  ['InvalidParameter', 'HealthCheck is only applicable to TCP/UDP/TCP_SSL/QUIC listeners.', { ...LISTENER, HealthCheck: FULL_HC }, 'InvalidRequest', ['Request:']],
  // A CAM denial names no parameter either: never pinned on the capability.
  ['UnauthorizedOperation', 'you are not authorized to perform operation (clb:ModifyLoadBalancerAttributes)', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'PermissionDenied', ['CAM']],
  // Throttling, busy CLBs and missing objects stay what they are.
  ['RequestLimitExceeded', 'KeepaliveEnable: too many requests', { ...LISTENER, KeepaliveEnable: 1 }, 'Throttled', []],
  ['FailedOperation.ResourceInOperating', 'Loadbalancer(lb-1) is not in normal desState', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'ClbBusy', []],
  ['ResourceInUse', 'LoadBalancerPassToTarget: resource in use', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'ClbBusy', []],
  ['InvalidParameter.LBIdNotFound', 'LoadBalancer not exist: lb-1', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'ClbNotFound', []],
];

describe('CLB error classification', () => {
  it.each(TABLE)('%s (%s) → %s, retryable=%s', (code, message, reason, retryable, words) => {
    // A request that asks for no capability: the code and the message alone decide (capability table below).
    const info = describeCloudError(apiError(code, message), { ...ctx, request: { LoadBalancerId: 'lb-1', HealthCheck: { HealthSwitch: 1, SourceIpType: 0 } } });
    expect(info.code).toBe(code);
    expect(info.reason).toBe(reason);
    expect(info.retryable).toBe(retryable);
    expect(info.requestId).toBe('req-1');
    expect(info.action).toBe('ModifyListener');
    for (const w of words) expect(info.message).toContain(w);
  });

  it.each(CAPABILITY_TABLE)('capability: %s %j with %j → %s', (code, message, request, reason, words) => {
    const info = describeCloudError(apiError(code, message), { ...ctx, ...(request ? { request } : {}) });
    expect(info.reason).toBe(reason);
    expect(info.code).toBe(code);
    for (const w of words) expect(info.message).toContain(w);
  });

  it('marks only RequestLimitExceeded as throttled', () => {
    expect(toClbError(apiError('RequestLimitExceeded', 'x')).throttled).toBe(true);
    expect(toClbError(apiError('FailedOperation.ResourceInOperating', 'x')).throttled).toBe(false);
    expect(toClbError(httpError(429, 'Too Many Requests')).throttled).toBe(true);
  });

  it.each([
    [503, 'Service Unavailable', true, 'CloudUnavailable'],
    [500, 'Internal Server Error', true, 'CloudUnavailable'],
    [502, 'Bad Gateway', true, 'CloudUnavailable'],
    [404, 'Not Found', false, 'CloudError'],
    [413, 'Payload Too Large', false, 'CloudError'],
  ] as const)('HTTP %d is retryable=%s', (status, text, retryable, reason) => {
    const e = toClbError(httpError(status, text), ctx);
    expect(e.code).toBe(`HTTP${status}`);
    expect(e.httpCode).toBe(status);
    expect(e.retryable).toBe(retryable);
    expect(e.reason).toBe(reason);
  });

  it.each([
    'request to http://127.0.0.1:1/ failed, reason: socket hang up',
    'request to https://clb.tencentcloudapi.com/ failed, reason: connect ECONNREFUSED 1.2.3.4:443',
    'network timeout at: https://clb.tencentcloudapi.com/',
    'request to https://clb.tencentcloudapi.com/ failed, reason: getaddrinfo EAI_AGAIN clb.tencentcloudapi.com',
  ])('network failure "%s" is retryable', (message) => {
    const e = toClbError(new SdkException(message, '', 'trace'), ctx);
    expect(e.reason).toBe('NetworkError');
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('clb.tencentcloudapi.com');
  });

  it('treats an aborted call as Aborted, never retryable', () => {
    const ac = new AbortController();
    ac.abort();
    const e = toClbError(new SdkException('The user aborted a request.', '', 't'), ctx, ac.signal);
    expect(e.reason).toBe('Aborted');
    expect(e.retryable).toBe(false);
    expect(toClbError(new DOMException('The queue was cleared', 'AbortError')).reason).toBe('Aborted');
  });

  it('recognises the SDK exception by class and by shape', () => {
    expect(isSdkException(apiError('X', 'y'))).toBe(true);
    expect(isSdkException(Object.assign(new Error('x'), { requestId: '', traceId: '' }))).toBe(true);
    expect(isSdkException(new Error('x'))).toBe(false);
  });

  it('keeps ClbErrors as they are and wraps unknown throwables as permanent', () => {
    const original = new ClbTaskFailedError('task-1', 'backend busy', ctx);
    expect(toClbError(original)).toBe(original);
    const bug = toClbError(new TypeError('x is undefined'), ctx);
    expect(bug.retryable).toBe(false);
    expect(bug.reason).toBe('CloudError');
  });

  it('describes task failures and timeouts', () => {
    const failed = new ClbTaskFailedError('task-1', 'InternalError: the task failed', ctx);
    expect(failed).toBeInstanceOf(ClbError);
    expect(failed.info()).toMatchObject({ reason: 'ClbTaskFailed', retryable: true, code: 'TaskFailed', requestId: 'task-1' });
    expect(failed.message).toContain('the task failed');
    const timeout = new ClbTaskTimeoutError('task-2', 65_000, ctx);
    expect(timeout.info()).toMatchObject({ reason: 'ClbTaskTimeout', retryable: true });
    expect(timeout.message).toContain('65 s');
  });

  it('credential errors name the fix', () => {
    const e = new CredentialsError('No Tencent Cloud credentials found', false);
    expect(describeCloudError(e)).toMatchObject({ reason: 'CredentialsUnavailable', retryable: false });
  });

  it('quotes the request of an invalid call without secrets', () => {
    const info = describeCloudError(apiError('InvalidParameter', 'bad'), {
      ...ctx,
      request: { LoadBalancerId: 'lb-1', SecretKey: 'shhh-very-secret', Note: 'AKIDabcdefghijklmnop' },
    });
    expect(info.message).toContain('lb-1');
    expect(info.message).not.toContain('shhh-very-secret');
    expect(info.message).not.toContain('AKIDabcdefghijklmnop');
  });
});
