// src/cloud public surface: the ClbClient interface and its Tencent implementation, credentials,
// typed errors, and the building blocks (budgets, retries) the runtime may want to configure.
export * from './clb-client.js';
export { TencentClbClient } from './tencent-clb-client.js';
export { parseEndpoint, DEFAULT_REQUEST_TIMEOUT_MS } from './tencent-clb-options.js';
export type { TencentClbClientOptions } from './tencent-clb-options.js';
export * from './credentials.js';
export * from './errors.js';
export { classifyApiError } from './error-codes.js';
export * from './hooks.js';
export { DEFAULT_RETRY_POLICY, backoffDelay, resolveRetryPolicy, withRetry } from './retry.js';
export type { RetryEvent, RetryOptions, RetryPolicy } from './retry.js';
export { ActionThrottle, DEFAULT_ACTION_BUDGET, DEFAULT_COOLDOWN_MS, resolveBudget } from './throttle.js';
export type { ActionBudget, ActionQueueStats, ResolvedBudget, ThrottleOptions } from './throttle.js';
export { DEFAULT_TASK_POLL_POLICY } from './task-waiter.js';
export type { TaskPollPolicy } from './task-waiter.js';
export { DEFAULT_WRITE_CONCURRENCY } from './write-gate.js';
