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
  ['InvalidParameterValue', 'SourceIpType=1 is not supported by IPv6 load balancer lb-1', 'InvalidRequest', false, ['IPv6']],
  ['MissingParameter', 'missing', 'InvalidRequest', false, ['invalid']],
  ['UnknownParameter', 'unknown', 'InvalidRequest', false, ['invalid']],
  ['UnsupportedOperation', 'classic', 'InvalidRequest', false, ['invalid']],
  ['LimitExceeded', 'quota', 'QuotaExceeded', false, ['quota']],
  ['OperationDenied', 'delete protection', 'OperationDenied', false, ['denied']],
  ['FailedOperation', 'something else', 'CloudError', false, ['FailedOperation: something else']],
  ['SomethingNew', 'new', 'CloudError', false, ['SomethingNew']],
];

describe('CLB error classification', () => {
  it.each(TABLE)('%s (%s) → %s, retryable=%s', (code, message, reason, retryable, words) => {
    const info = describeCloudError(apiError(code, message), { ...ctx, request: { LoadBalancerId: 'lb-1', HealthCheck: { SourceIpType: 1 } } });
    expect(info.code).toBe(code);
    expect(info.reason).toBe(reason);
    expect(info.retryable).toBe(retryable);
    expect(info.requestId).toBe('req-1');
    expect(info.action).toBe('ModifyListener');
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
