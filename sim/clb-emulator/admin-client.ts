import type {
  AdminErrorBody, AdminLoadBalancer, AdminState, CallerView, Capabilities, CapabilitiesPatch, EmulatorConfig, FaultPlan,
  ListenerPatch, NodeSpec, RulePatch, SeedLoadBalancer, StatsSnapshot, TaskView, WriteLogEntry,
} from './admin-types.js';

/** Thrown for any non-2xx admin response; `status` is the HTTP status (400 bad input, 404 unknown id, …). */
export class ClbAdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ClbAdminError';
  }
}

/**
 * Typed client of the emulator's admin API (`/_admin/*`), for tests and the TKE simulator. Uses global fetch and
 * depends on no server code, so it can be imported by anything that only knows the emulator's URL.
 */
export class ClbAdminClient {
  /** @param baseUrl e.g. `http://127.0.0.1:PORT` */
  constructor(readonly baseUrl: string) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}/_admin/${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (!res.ok) {
      const message = (parsed as AdminErrorBody | undefined)?.error ?? res.statusText;
      throw new ClbAdminError(res.status, `${method} /_admin/${path}: ${message}`);
    }
    return parsed as T;
  }

  /** Forget all CLBs, tasks, stats and faults; restore start-up config and capabilities. */
  async reset(): Promise<void> {
    await this.call('POST', 'reset');
  }

  state(): Promise<AdminState> {
    return this.call('GET', 'state');
  }

  getLoadBalancer(id: string): Promise<AdminLoadBalancer> {
    return this.call('GET', `loadbalancers/${encodeURIComponent(id)}`);
  }

  /** Create a CLB with listeners/rules synchronously (Status 1, no task). Returns it with generated ids. */
  seedLoadBalancer(spec: SeedLoadBalancer): Promise<AdminLoadBalancer> {
    return this.call('POST', 'loadbalancers', spec);
  }

  async deleteLoadBalancer(id: string): Promise<void> {
    await this.call('DELETE', `loadbalancers/${encodeURIComponent(id)}`);
  }

  /** Mark the CLB's VIP as bound (kube-proxy IPVS) on all nodes, or only on `nodes` (IPs). */
  setVipBound(id: string, bound: boolean, nodes?: string[]): Promise<AdminLoadBalancer> {
    return this.call('PUT', `loadbalancers/${encodeURIComponent(id)}/vip-bound`, nodes ? { bound, nodes } : { bound });
  }

  /** Replace the CLB's backend nodes (targets). Strings are node IPs. */
  setNodes(id: string, nodes: (NodeSpec | string)[]): Promise<AdminLoadBalancer> {
    return this.call('PUT', `loadbalancers/${encodeURIComponent(id)}/nodes`, { nodes });
  }

  /** Drift: change a listener directly, as a console user would (no task, no lock, no capability check). */
  patchListener(lbId: string, listenerId: string, patch: ListenerPatch): Promise<AdminLoadBalancer> {
    return this.call('PATCH', `loadbalancers/${encodeURIComponent(lbId)}/listeners/${encodeURIComponent(listenerId)}`, patch);
  }

  /** Drift: change an L7 rule directly. */
  patchRule(lbId: string, listenerId: string, locationId: string, patch: RulePatch): Promise<AdminLoadBalancer> {
    return this.call(
      'PATCH',
      `loadbalancers/${encodeURIComponent(lbId)}/listeners/${encodeURIComponent(listenerId)}/rules/${encodeURIComponent(locationId)}`,
      patch,
    );
  }

  getCapabilities(): Promise<Capabilities> {
    return this.call('GET', 'capabilities');
  }

  setCapabilities(patch: CapabilitiesPatch): Promise<Capabilities> {
    return this.call('PUT', 'capabilities', patch);
  }

  getConfig(): Promise<EmulatorConfig> {
    return this.call('GET', 'config');
  }

  /** Top-level keys merge; `rpsPerAction` replaces the previous map. Buckets refill on every change. */
  setConfig(patch: Partial<EmulatorConfig>): Promise<EmulatorConfig> {
    return this.call('PUT', 'config', patch);
  }

  getFaults(): Promise<FaultPlan> {
    return this.call('GET', 'faults');
  }

  /** Replace the fault plan and restart its RNG from `plan.seed`. */
  setFaults(plan: FaultPlan): Promise<FaultPlan> {
    return this.call('PUT', 'faults', plan);
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', 'faults');
  }

  stats(): Promise<StatsSnapshot> {
    return this.call('GET', 'stats');
  }

  async resetStats(): Promise<void> {
    await this.call('POST', 'stats/reset');
  }

  /** Remembers the counters as of now under `name` (replacing an older mark of that name) and returns them. */
  markStats(name: string): Promise<StatsSnapshot> {
    return this.call('PUT', `stats/marks/${encodeURIComponent(name)}`);
  }

  /** Counters accumulated since `markStats(name)`; 404 (ClbAdminError) if there is no such mark. */
  statsSince(name: string): Promise<StatsSnapshot> {
    return this.call('GET', `stats/since/${encodeURIComponent(name)}`);
  }

  /** The write log, oldest first: every accepted ModifyListener/ModifyRule with its caller, or those after `since` (a `seq`). */
  writes(since?: number): Promise<WriteLogEntry[]> {
    return this.call('GET', since === undefined ? 'writes' : `writes/since/${since}`);
  }

  /** The configured callers and their SecretIds (never the keys). */
  callers(): Promise<CallerView[]> {
    return this.call('GET', 'callers');
  }

  tasks(): Promise<TaskView[]> {
    return this.call('GET', 'tasks');
  }

  /** Finish every running task now (success, or failure where a taskFailure fault fired). */
  async completeTasks(): Promise<number> {
    return (await this.call<{ completed: number }>('POST', 'tasks/complete')).completed;
  }
}
