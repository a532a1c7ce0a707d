/**
 * Async write tasks (tencent-cloud.md §3 "Async (poll DescribeTaskStatus) write APIs", "DescribeTaskStatus").
 *
 * A write is validated when it arrives, answered at once with its RequestId (= TaskId), and its state change is
 * applied only when the task completes (`Status` 2 → 0). That is the stricter of the two possible readings: a
 * client that reads back before the task finished sees the old state. While a task runs it holds a lock on each of
 * its CLBs; other writes to them get `FailedOperation.ResourceInOperating` (guards.ts).
 */

export const TASK_SUCCEEDED = 0;
export const TASK_FAILED = 1;
export const TASK_RUNNING = 2;
export type TaskStatus = typeof TASK_SUCCEEDED | typeof TASK_FAILED | typeof TASK_RUNNING;

export interface TaskView {
  taskId: string;
  action: string;
  loadBalancerIds: string[];
  status: TaskStatus;
  message: string | null;
  startedAtMs: number;
  dueAtMs: number;
}

interface Task extends TaskView {
  apply: () => void;
  onFailure: (() => void) | undefined;
  /** Set when a `taskFailure` fault fired at submission: the task ends Status 1 and changes nothing. */
  failure: string | undefined;
  timer: NodeJS.Timeout | undefined;
}

export interface TaskSpec {
  taskId: string;
  action: string;
  loadBalancerIds: string[];
  apply: () => void;
  /** Undo what the write did at submission (e.g. remove a CLB shown as "creating") when the task fails. */
  onFailure?: () => void;
  failure?: string;
}

/** Finished tasks kept for DescribeTaskStatus; older ones are forgotten (benchmarks create many). */
const MAX_FINISHED = 10_000;

export class TaskRegistry {
  private readonly tasks = new Map<string, Task>();
  private finished = 0;

  constructor(
    private readonly durationMs: () => number,
    private readonly onFinish: (task: TaskView) => void = () => undefined,
  ) {}

  start(spec: TaskSpec): TaskView {
    const now = Date.now();
    const duration = Math.max(0, this.durationMs());
    const task: Task = {
      taskId: spec.taskId,
      action: spec.action,
      loadBalancerIds: [...spec.loadBalancerIds],
      status: TASK_RUNNING,
      message: null,
      startedAtMs: now,
      dueAtMs: now + duration,
      apply: spec.apply,
      onFailure: spec.onFailure,
      failure: spec.failure,
      timer: undefined,
    };
    // The timer makes state change even if nobody polls; settleDue() (called on every request) makes the
    // completion exact regardless of timer jitter.
    task.timer = setTimeout(() => this.finish(task), duration);
    task.timer.unref();
    this.tasks.set(task.taskId, task);
    return view(task);
  }

  get(taskId: string): TaskView | undefined {
    this.settleDue();
    const t = this.tasks.get(taskId);
    return t && view(t);
  }

  /** The running task holding `lbId`, if any. */
  runningOn(lbId: string): TaskView | undefined {
    this.settleDue();
    for (const t of this.tasks.values()) {
      if (t.status === TASK_RUNNING && t.loadBalancerIds.includes(lbId)) return view(t);
    }
    return undefined;
  }

  settleDue(now = Date.now()): void {
    for (const t of this.tasks.values()) {
      if (t.status === TASK_RUNNING && t.dueAtMs <= now) this.finish(t);
    }
  }

  /** Completes every running task now (admin shortcut for tests that do not want to wait). */
  completeAll(): number {
    let n = 0;
    for (const t of this.tasks.values()) {
      if (t.status === TASK_RUNNING) {
        this.finish(t);
        n++;
      }
    }
    return n;
  }

  list(): TaskView[] {
    this.settleDue();
    return [...this.tasks.values()].map(view);
  }

  clear(): void {
    for (const t of this.tasks.values()) clearTimeout(t.timer);
    this.tasks.clear();
    this.finished = 0;
  }

  private finish(task: Task): void {
    if (task.status !== TASK_RUNNING) return;
    clearTimeout(task.timer);
    task.timer = undefined;
    if (task.failure !== undefined) {
      task.status = TASK_FAILED;
      task.message = task.failure;
      task.onFailure?.();
    } else {
      try {
        task.apply();
        task.status = TASK_SUCCEEDED;
      } catch (err) {
        // E.g. the admin deleted the CLB while the task ran.
        task.status = TASK_FAILED;
        task.message = err instanceof Error ? err.message : String(err);
      }
    }
    this.onFinish(view(task));
    this.prune();
  }

  private prune(): void {
    if (++this.finished <= MAX_FINISHED) return;
    for (const [id, t] of this.tasks) {
      if (t.status !== TASK_RUNNING) {
        this.tasks.delete(id);
        this.finished--;
        if (this.finished <= MAX_FINISHED) return;
      }
    }
  }
}

function view(t: Task): TaskView {
  return {
    taskId: t.taskId,
    action: t.action,
    loadBalancerIds: [...t.loadBalancerIds],
    status: t.status,
    message: t.message,
    startedAtMs: t.startedAtMs,
    dueAtMs: t.dueAtMs,
  };
}
