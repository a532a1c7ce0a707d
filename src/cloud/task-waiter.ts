// Async CLB writes answer at once with a RequestId; the change lands when the task with TaskId =
// RequestId finishes. DescribeTaskStatus: Status 0 = success, 1 = failed (Message says why),
// 2 = in progress (tencent-cloud.md §3). Polls back off geometrically: most tasks finish within a second
// or two, and every poll spends DescribeTaskStatus quota shared with TKE.
import type { CloudErrorContext } from './errors.js';
import { ClbTaskFailedError, ClbTaskTimeoutError } from './errors.js';
import { sleep as defaultSleep } from './retry.js';

export interface TaskPollPolicy {
  /** Wait before the first poll. */
  initialDelayMs: number;
  /** Each later wait is the previous one times `factor`, capped at `maxDelayMs`. */
  factor: number;
  maxDelayMs: number;
  /** Stop polling (ClbTaskTimeoutError) after this long. */
  timeoutMs: number;
}

export const DEFAULT_TASK_POLL_POLICY: Readonly<TaskPollPolicy> = Object.freeze({
  initialDelayMs: 100,
  factor: 1.5,
  maxDelayMs: 2_000,
  timeoutMs: 120_000,
});

export const TASK_SUCCEEDED = 0;
export const TASK_FAILED = 1;
export const TASK_RUNNING = 2;

export interface TaskStatus {
  status: number;
  message?: string | null;
}

/** The waits before each poll, for a policy (pure; the unit tests check it). */
export function pollDelays(policy: TaskPollPolicy): () => number {
  let next = policy.initialDelayMs;
  return () => {
    const d = next;
    next = Math.min(policy.maxDelayMs, Math.max(1, next * policy.factor));
    return Math.round(d);
  };
}

export interface WaitForTaskOptions {
  policy?: Partial<TaskPollPolicy>;
  signal?: AbortSignal;
  context?: CloudErrorContext;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}

/**
 * Polls `describe(taskId)` until the task finishes. Resolves with the number of polls on success;
 * throws ClbTaskFailedError (Status 1) or ClbTaskTimeoutError. `describe` does its own retries.
 */
export async function waitForTask(
  taskId: string,
  describe: (taskId: string) => Promise<TaskStatus>,
  options: WaitForTaskOptions = {},
): Promise<number> {
  const policy = { ...DEFAULT_TASK_POLL_POLICY, ...options.policy };
  const wait = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const context = options.context ?? {};
  const started = now();
  const nextDelay = pollDelays(policy);
  for (let polls = 1; ; polls++) {
    const delay = nextDelay();
    if (now() + delay - started > policy.timeoutMs) throw new ClbTaskTimeoutError(taskId, now() - started, context);
    await wait(delay, options.signal);
    const { status, message } = await describe(taskId);
    if (status === TASK_SUCCEEDED) return polls;
    if (status === TASK_FAILED) throw new ClbTaskFailedError(taskId, message ?? '', context);
    // TASK_RUNNING, or a status this code does not know: keep polling rather than guess success;
    // the timeout bounds it.
  }
}
