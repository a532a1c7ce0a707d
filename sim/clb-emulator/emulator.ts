import type { Capabilities } from './capabilities.js';
import type { EmulatorConfig } from './admin-types.js';
import { FaultInjector } from './faults.js';
import type { ResolvedOptions } from './options.js';
import { ClbStore } from './state.js';
import { Stats } from './stats.js';
import { TaskRegistry, TASK_SUCCEEDED } from './tasks.js';
import { ActionThrottle } from './throttle.js';
import { WriteLog } from './write-log.js';

/** Everything one emulator instance knows; shared by the API pipeline, the actions and the admin routes. */
export class EmulatorCore {
  readonly store = new ClbStore();
  readonly stats = new Stats();
  readonly writeLog = new WriteLog();
  readonly throttle: ActionThrottle;
  readonly faults: FaultInjector;
  readonly tasks: TaskRegistry;
  config: EmulatorConfig;
  capabilities: Capabilities;

  constructor(readonly options: ResolvedOptions) {
    this.config = initialConfig(options);
    this.capabilities = { ...options.capabilities };
    this.throttle = new ActionThrottle(() => this.config);
    this.faults = new FaultInjector(options.faultSeed);
    if (options.faults) this.faults.set(options.faults);
    this.tasks = new TaskRegistry(
      () => this.config.taskDurationMs,
      (t) => {
        const status = t.status === TASK_SUCCEEDED ? 'succeeded' : 'failed';
        this.stats.task(status);
        this.writeLog.finished(t.taskId, status);
      },
    );
  }

  /** Back to the start-up state: no CLBs, tasks, stats or faults; start-up config and capabilities. */
  reset(): void {
    this.tasks.clear();
    this.store.clear();
    this.stats.reset();
    this.writeLog.clear();
    this.throttle.reset();
    this.config = initialConfig(this.options);
    this.capabilities = { ...this.options.capabilities };
    if (this.options.faults) this.faults.set(this.options.faults);
    else this.faults.clear();
  }

  setConfig(patch: Partial<EmulatorConfig>): EmulatorConfig {
    this.config = {
      taskDurationMs: patch.taskDurationMs ?? this.config.taskDurationMs,
      rps: patch.rps ?? this.config.rps,
      rpsPerAction: patch.rpsPerAction ? { ...patch.rpsPerAction } : this.config.rpsPerAction,
      healthConvergenceMs: patch.healthConvergenceMs ?? this.config.healthConvergenceMs,
    };
    this.throttle.reset();
    return this.config;
  }

  close(): void {
    this.tasks.clear();
  }
}

function initialConfig(o: ResolvedOptions): EmulatorConfig {
  return {
    taskDurationMs: o.taskDurationMs,
    rps: o.rps,
    rpsPerAction: { ...o.rpsPerAction },
    healthConvergenceMs: o.healthConvergenceMs,
  };
}
