// The vocabulary of CLB errors: the stable reasons and the shape every classified failure takes. Apart from
// errors.ts (the classes) so that the code tables (error-codes.ts, capability-refusals.ts) can name it without
// importing the classes that use them (no import cycle).

/**
 * CamelCase reasons, stable (they end up in condition reasons, Events and metrics labels). Where
 * src/api/reasons.ts has a Stalled reason for the same cause the value is identical, so the
 * controllers can pass it through.
 */
export type CloudErrorReason =
  // retryable
  | 'Throttled' // RequestLimitExceeded*: our budget or someone sharing the quota (TKE's controllers)
  | 'ClbBusy' // another task holds the CLB (ResourceInOperating)
  | 'CloudUnavailable' // InternalError, HTTP 5xx
  | 'NetworkError' // reset, refused, DNS, request timeout
  | 'ClbTaskFailed' // the async task ended with Status 1
  | 'ClbTaskTimeout' // the async task did not finish in time (it may still finish)
  // permanent: need a person
  | 'CredentialsUnavailable' // no credential source worked
  | 'CredentialsRejected' // AuthFailure.*: wrong/disabled key, bad token
  | 'ClockSkew' // AuthFailure.SignatureExpire
  | 'PermissionDenied' // CAM: grant clb:<Action>
  | 'HealthCheckSourceCapabilityMissing' // 100.64.0.0/10 source not enabled for the account
  | 'KeepaliveCapabilityMissing' // L7 SNAT + keepalive not whitelisted
  | 'PassToTargetCapabilityMissing' // LoadBalancerPassToTarget refused (IPv6 CLB, or not offered to the account)
  | 'SnatProCapabilityMissing' // SnatPro (cross-region binding 2.0) refused
  | 'ClbNotFound'
  | 'ListenerNotFound'
  | 'RuleNotFound'
  | 'InvalidRequest' // InvalidParameter*, MissingParameter, UnsupportedOperation, …
  | 'QuotaExceeded' // LimitExceeded (resource quota, not the request rate)
  | 'OperationDenied'
  | 'CloudError' // an API error code we do not know
  | 'Aborted'; // shutdown / caller cancelled

export interface CloudErrorContext {
  /** CLB API action, e.g. `ModifyListener`. */
  action?: string;
  loadBalancerId?: string;
  /** Host (and port) of the API endpoint, for network errors. */
  endpoint?: string;
  /**
   * The request parameters; quoted (redacted, truncated) in InvalidRequest messages, and what tells a
   * capability refusal from a bad request (capability-refusals.ts).
   */
  request?: unknown;
}

export interface CloudErrorInfo {
  /** The API error code, `HTTP<status>`, or a loopguard code (`NetworkError`, `TaskFailed`, …). */
  code: string;
  retryable: boolean;
  reason: CloudErrorReason;
  /** Cause and fix, for condition messages and Events. */
  message: string;
  /** True for RequestLimitExceeded*: back off the action, wait ≥ 1 s before retrying. */
  throttled: boolean;
  action?: string;
  loadBalancerId?: string;
  requestId?: string;
  httpCode?: number;
}
