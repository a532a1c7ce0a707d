import type { EmulatorCore } from '../emulator.js';
import type { Params } from '../params.js';

export interface ActionContext {
  core: EmulatorCore;
  /** Also the TaskId of an async write. */
  requestId: string;
  /** Set when a `taskFailure` fault fired for this request (async writes only). */
  taskFailure: string | undefined;
  nowMs: number;
  /** Who sent it (the caller name of its SecretId), for the write log. */
  caller: string;
}

export type ActionResult = Record<string, unknown>;

export interface ActionDefinition {
  /** Async writes answer at once and complete through a task (DescribeTaskStatus). */
  async: boolean;
  run(ctx: ActionContext, params: Params): ActionResult;
}
