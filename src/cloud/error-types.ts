// The vocabulary of CLB errors: the stable reasons and the shape every classified failure takes. Apart from
// errors.ts (the classes) so that the code tables (error-codes.ts, capability-refusals.ts) can name it without
// importing the classes that use them (no import cycle).

import type { CloudErrorReason } from '../api/reasons.js';

export type { CloudErrorReason };

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
