// The one classifier: every failure of a step becomes {reason, message, permanent}; permanent ones stall the policy.
import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import { InvalidRecordError } from '../../src/kube/record-store.js';
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

  it('anything else is a transient cloud failure', () => {
    expect(classifyError(new Error('socket hang up'), 'ModifyListener').permanent).toBe(false);
  });
});
