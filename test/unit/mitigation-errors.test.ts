// The one classifier: every failure of a step becomes {reason, message, permanent}; permanent ones stall the policy.
import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import { InvalidRecordError } from '../../src/model/record-registry.js';
import { toClbError } from '../../src/cloud/errors.js';
import { classifyError } from '../../src/mitigation/errors.js';

const api = (code: number, message: string) => new ApiException(code, 'HTTP', JSON.stringify({ kind: 'Status', message }), {});

describe('classifyError', () => {
  it.each<[number, string, boolean]>([
    [403, 'PermissionDenied', true],
    [422, 'InvalidRequest', true],
    [400, 'InvalidRequest', true],
    [409, 'RetryingAfterError', false],
    [500, 'RetryingAfterError', false],
    [503, 'RetryingAfterError', false],
  ])('HTTP %i from the API server → %s (permanent: %s)', (code, reason, permanent) => {
    const e = classifyError(api(code, 'services "web" is forbidden'), 'patching Service shop/web');
    expect(e).toMatchObject({ reason, permanent });
    expect(e.message).toMatch(/^patching Service shop\/web: /);
    expect(e.message).toContain(`HTTP ${code}: services "web" is forbidden`);
    if (code === 403) expect(e.message).toMatch(/grant the loopguard ServiceAccount/);
  });

  it('an invalid LoopbackRecord is permanent and says how to unblock it', () => {
    const e = classifyError(new InvalidRecordError('service.shop.web', '"v" must be 1'), 'x');
    expect(e).toEqual({ reason: 'InvalidRecord', permanent: true, message: expect.stringMatching(/service\.shop\.web.*delete it to let loopguard record anew/) });
  });

  it.each<[string, string, Record<string, unknown>, string]>([
    ['InvalidParameterValue', 'This interface only support HTTP/HTTPS listener', { LoadBalancerId: 'lb-1', ListenerId: 'lbl-1', KeepaliveEnable: 1 }, 'KeepaliveCapabilityMissing'],
    ['InvalidParameterValue', 'LoadBalancerPassToTarget is not supported by IPv6 load balancer lb-1.', { LoadBalancerId: 'lb-1', LoadBalancerPassToTarget: true }, 'PassToTargetCapabilityMissing'],
    ['UnauthorizedOperation', 'The account has not enabled non-VIP health-check source IP (SourceIpType=1, 100.64.0.0/10)', { LoadBalancerId: 'lb-1', ListenerId: 'lbl-1', HealthCheck: { SourceIpType: 1 } }, 'HealthCheckSourceCapabilityMissing'],
    ['InvalidParameterValue', 'SnatPro is not supported', { LoadBalancerId: 'lb-1', SnatPro: true }, 'SnatProCapabilityMissing'],
  ])('a CLB refusal of a capability (%s "%s") is permanent and named: %j → %s', (code, message, request, reason) => {
    const sdkError = Object.assign(new Error(message), { code, requestId: 'r', traceId: 't' });
    const e = classifyError(toClbError(sdkError, { action: 'ModifyListener', loadBalancerId: 'lb-1', request }), 'step');
    expect(e).toMatchObject({ reason, permanent: true });
    expect(e.message).toMatch(/^step: The CLB refused /);
  });

  it('anything else is a transient cloud failure', () => {
    expect(classifyError(new Error('socket hang up'), 'ModifyListener').permanent).toBe(false);
  });
});
