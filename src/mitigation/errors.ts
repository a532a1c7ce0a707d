// The one classifier: any failure of a step (Kubernetes ApiException, CLB error, anything else) becomes a
// target outcome error `{reason, message, permanent}`. Permanent errors make the policy Stalled with a message
// that names the cause and the fix; the rest are retried with backoff.
import { ApiException } from '@kubernetes/client-node';
import { StalledReason } from '../api/reasons.js';
import { describeCloudError, type CloudErrorInfo } from '../cloud/index.js';
import { kubeErrorMessage } from '../runtime/kube-errors.js';
import type { TargetError } from '../model/status.js';
import { InvalidRecordError } from '../model/record-registry.js';

/** Refusals that name a capability the account lacks (a ticket): permanent, and Events of their own (executor.ts). */
export const CAPABILITY_MISSING = ['HealthCheckSourceCapabilityMissing', 'KeepaliveCapabilityMissing', 'PassToTargetCapabilityMissing', 'SnatProCapabilityMissing'] as const;

/** Cloud failures that retrying cannot fix. */
const PERMANENT = new Set<string>(['PermissionDenied', 'InvalidRequest', ...CAPABILITY_MISSING, 'CredentialsRejected', 'CredentialsUnavailable', 'ClockSkew', 'QuotaExceeded', 'OperationDenied', 'CloudError']);

/**
 * Whether a failed CLB call is permanent. The client already retried transient failures; what is left as
 * retryable, plus vanished CLBs/listeners (re-observed next round) and task timeouts (re-read), is transient.
 */
export function isPermanent(info: Pick<CloudErrorInfo, 'reason' | 'retryable'>): boolean {
  return !info.retryable && PERMANENT.has(info.reason);
}

/** `what` names the object or call that failed, e.g. "patching Service shop/web". */
export function classifyError(err: unknown, what: string): TargetError {
  if (err instanceof InvalidRecordError) return { reason: 'InvalidRecord', message: err.message, permanent: true };
  if (err instanceof ApiException) {
    if (err.code === 403) return { reason: StalledReason.PermissionDenied, message: `${what}: forbidden (${kubeErrorMessage(err)}); grant the loopguard ServiceAccount this verb (config/rbac)`, permanent: true };
    if (err.code === 400 || err.code === 422) return { reason: StalledReason.InvalidRequest, message: `${what}: rejected by the API server (${kubeErrorMessage(err)})`, permanent: true };
    return { reason: 'RetryingAfterError', message: `${what}: ${kubeErrorMessage(err)}`, permanent: false };
  }
  const info = describeCloudError(err);
  const permanent = isPermanent(info);
  return { reason: permanent ? info.reason : info.retryable ? 'RetryingAfterError' : info.reason, message: `${what}: ${info.message}`, permanent };
}
