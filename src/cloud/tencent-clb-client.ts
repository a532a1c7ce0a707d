// ClbClient on the unmodified tencentcloud-sdk-nodejs (CLB client only: loading the SDK root costs
// ~0.5 s and 28 MB for 262 services, tencent-cloud.md §4). Layering of one call:
//   write gate (per-CLB order, bounded CLBs)  →  retry loop  →  action budget (p-queue)  →  SDK request
// and for writes, inside the gate and the retry loop: submit → prove it landed (DescribeTaskStatus, or a
// DescribeListeners read that shows it, whichever action has room: proof.ts) until done.
import http from 'node:http';
import https from 'node:https';
import { Client } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_client.js';
import type {
  DescribeListenersRequest, DescribeListenersResponse, DescribeLoadBalancersRequest, DescribeLoadBalancersResponse,
  DescribeTargetHealthRequest, DescribeTargetHealthResponse, DescribeTaskStatusRequest, DescribeTaskStatusResponse,
  ModifyListenerRequest, ModifyListenerResponse, ModifyLoadBalancerAttributesRequest, ModifyLoadBalancerAttributesResponse,
  ModifyRuleRequest, ModifyRuleResponse,
} from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { batches, MAX_LISTENER_IDS, MAX_LOAD_BALANCER_IDS, MAX_PAGE_SIZE, MAX_TARGET_HEALTH_IDS, MAX_VIPS, paginate } from './batching.js';
import type {
  CallOptions, ClbClient, DescribeListenersOptions, HealthCheck, ListenerInfo, LoadBalancerHealthInfo, LoadBalancerInfo, WriteResult,
} from './clb-client.js';
import { toListenerInfo, toLoadBalancerHealthInfo, toLoadBalancerInfo, writableHealthCheck } from './clb-mapping.js';
import type { CredentialProvider } from './credentials.js';
import { StaticCredentialProvider } from './credentials.js';
import type { CloudErrorContext } from './errors.js';
import { ClbError, toClbError } from './errors.js';
import type { CloudCallEvent, CloudLogger } from './hooks.js';
import { safeLog, silentLogger } from './hooks.js';
import type { RetryPolicy } from './retry.js';
import { resolveRetryPolicy, withRetry } from './retry.js';
import type { VisibilityState } from './proof.js';
import { chooseProof, INITIAL_VISIBILITY, needsConfirmation, onConfirmation, shows } from './proof.js';
import { ActionThrottle } from './throttle.js';
import type { TaskPollPolicy, TaskStatus } from './task-waiter.js';
import { DEFAULT_TASK_POLL_POLICY, TASK_RUNNING, TASK_SUCCEEDED, waitForTask } from './task-waiter.js';
import { ClbWriteGate, DEFAULT_WRITE_CONCURRENCY } from './write-gate.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, parseEndpoint, type ParsedEndpoint, type TencentClbClientOptions } from './tencent-clb-options.js';

/** Request/response types per action this client uses (the SDK's `request()` is untyped). */
interface ClbActions {
  DescribeLoadBalancers: [DescribeLoadBalancersRequest, DescribeLoadBalancersResponse];
  DescribeListeners: [DescribeListenersRequest, DescribeListenersResponse];
  DescribeTargetHealth: [DescribeTargetHealthRequest, DescribeTargetHealthResponse];
  DescribeTaskStatus: [DescribeTaskStatusRequest, DescribeTaskStatusResponse];
  ModifyListener: [ModifyListenerRequest, ModifyListenerResponse];
  ModifyRule: [ModifyRuleRequest, ModifyRuleResponse];
  ModifyLoadBalancerAttributes: [ModifyLoadBalancerAttributesRequest, ModifyLoadBalancerAttributesResponse];
}
type Action = keyof ClbActions;
/** The async writes (each lands when its task ends). */
type WriteAction = 'ModifyListener' | 'ModifyRule' | 'ModifyLoadBalancerAttributes';
/** What proves each write landed: the task's status, or (listener and rule writes) a listener read that shows it. */
const PROVEN_BY: Record<WriteAction, readonly Action[]> = {
  ModifyListener: ['DescribeTaskStatus', 'DescribeListeners'],
  ModifyRule: ['DescribeTaskStatus', 'DescribeListeners'],
  ModifyLoadBalancerAttributes: ['DescribeTaskStatus'],
};

/** A write that a listener read can show: its listener, and whether a read of it shows the write. */
interface ReadProof {
  listenerId: string;
  shownIn: (listener: ListenerInfo) => boolean;
}

export class TencentClbClient implements ClbClient {
  private readonly sdk: Client;
  private readonly credentials: CredentialProvider;
  private readonly throttle: ActionThrottle;
  private readonly gate: ClbWriteGate;
  private readonly retryPolicy: RetryPolicy;
  private readonly taskPoll: TaskPollPolicy;
  private readonly logger: CloudLogger;
  private readonly endpoint: ParsedEndpoint;
  private readonly agent: http.Agent | undefined;
  private readonly onCall: ((event: CloudCallEvent) => void) | undefined;
  /** Whether a listener read that shows a write proves its task ended (proof.ts): learned from confirmations. */
  private visibility: VisibilityState = INITIAL_VISIBILITY;

  constructor(options: TencentClbClientOptions) {
    if (!options.region) throw new TypeError('TencentClbClient needs a region');
    this.credentials = 'getCredential' in options.credentials ? options.credentials : new StaticCredentialProvider(options.credentials);
    this.endpoint = parseEndpoint(options.endpoint, options.protocol);
    // Each async write needs a proof that it landed (proof.ts): writes go no faster than those proofs can be answered.
    this.throttle = new ActionThrottle({ pacedWith: PROVEN_BY, ...options.throttle });
    this.gate = new ClbWriteGate(options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY);
    this.retryPolicy = resolveRetryPolicy(options.retry);
    this.taskPoll = { ...DEFAULT_TASK_POLL_POLICY, ...options.taskPoll };
    this.logger = options.logger ?? silentLogger;
    this.onCall = options.onCall;
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new TypeError(`requestTimeoutMs must be positive, got ${timeoutMs}`);
    if (!options.proxy) {
      const agentOptions = { keepAlive: true, maxSockets: 64 };
      this.agent = this.endpoint.protocol === 'http://' ? new http.Agent(agentOptions) : new https.Agent(agentOptions);
    }
    const credentials = this.credentials;
    this.sdk = new Client({
      // The SDK asks on every request, so refreshed temporary credentials are used as they rotate.
      credential: { getCredential: () => credentials.getCredential() },
      region: options.region,
      profile: {
        httpProfile: {
          protocol: this.endpoint.protocol,
          endpoint: this.endpoint.host,
          reqTimeout: timeoutMs / 1000,
          ...(this.agent ? { agent: this.agent } : { proxy: options.proxy as string }),
        },
      },
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  async describeLoadBalancers(ids: readonly string[], options: CallOptions = {}): Promise<LoadBalancerInfo[]> {
    const pages = await Promise.all(
      batches(ids, MAX_LOAD_BALANCER_IDS).map((batch) =>
        this.pagedLoadBalancers({ LoadBalancerIds: batch }, options.signal),
      ),
    );
    const byId = new Map(pages.flat().map((lb) => [lb.loadBalancerId, lb]));
    // In the order asked for, so callers and logs are deterministic.
    return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
  }

  async describeLoadBalancersByVip(vips: readonly string[], options: CallOptions = {}): Promise<LoadBalancerInfo[]> {
    const pages = await Promise.all(
      batches(vips, MAX_VIPS).map((batch) => this.pagedLoadBalancers({ LoadBalancerVips: batch }, options.signal)),
    );
    return [...new Map(pages.flat().map((lb) => [lb.loadBalancerId, lb])).values()];
  }

  private async pagedLoadBalancers(filter: DescribeLoadBalancersRequest, signal?: AbortSignal): Promise<LoadBalancerInfo[]> {
    const sdkLbs = await paginate(async (offset, limit) => {
      const resp = await this.call('DescribeLoadBalancers', { ...filter, Offset: offset, Limit: limit }, {}, signal);
      return { items: resp.LoadBalancerSet ?? [], total: resp.TotalCount ?? 0 };
    }, MAX_PAGE_SIZE);
    return sdkLbs.map(toLoadBalancerInfo);
  }

  async describeListeners(loadBalancerId: string, options: DescribeListenersOptions & CallOptions = {}): Promise<ListenerInfo[]> {
    requireId('loadBalancerId', loadBalancerId);
    const base: DescribeListenersRequest = {
      LoadBalancerId: loadBalancerId,
      ...(options.protocol ? { Protocol: options.protocol } : {}),
      ...(options.port === undefined ? {} : { Port: options.port }),
    };
    const requests = options.listenerIds
      ? batches(options.listenerIds, MAX_LISTENER_IDS).map((ids) => ({ ...base, ListenerIds: ids }))
      : [base];
    const responses = await Promise.all(
      requests.map((req) => this.call('DescribeListeners', req, { loadBalancerId }, options.signal)),
    );
    return responses.flatMap((r) => (r.Listeners ?? []).map(toListenerInfo));
  }

  async describeTargetHealth(loadBalancerIds: readonly string[], options: CallOptions = {}): Promise<LoadBalancerHealthInfo[]> {
    const results = await Promise.all(
      batches(loadBalancerIds, MAX_TARGET_HEALTH_IDS).map((batch) => this.targetHealthBatch(batch, options.signal)),
    );
    return results.flat();
  }

  /**
   * One unknown id fails the whole DescribeTargetHealth batch (LBIdNotFound). Drop the id the message
   * names, or bisect when it names none, so a deleted CLB costs a call or a few, not the batch.
   */
  private async targetHealthBatch(batch: string[], signal?: AbortSignal): Promise<LoadBalancerHealthInfo[]> {
    if (batch.length === 0) return [];
    try {
      const resp = await this.call('DescribeTargetHealth', { LoadBalancerIds: batch }, {}, signal);
      return (resp.LoadBalancers ?? []).map(toLoadBalancerHealthInfo);
    } catch (err) {
      if (!(err instanceof ClbError) || err.reason !== 'ClbNotFound') throw err;
      if (batch.length === 1) return [];
      const named = batch.filter((id) => err.apiMessage.includes(id));
      if (named.length > 0) return this.targetHealthBatch(batch.filter((id) => !named.includes(id)), signal);
      const mid = Math.ceil(batch.length / 2);
      const halves = await Promise.all([this.targetHealthBatch(batch.slice(0, mid), signal), this.targetHealthBatch(batch.slice(mid), signal)]);
      return halves.flat();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writes

  modifyListenerHealthCheck(loadBalancerId: string, listenerId: string, healthCheck: HealthCheck, options: CallOptions = {}): Promise<WriteResult> {
    requireId('listenerId', listenerId);
    const hc = requireHealthCheck(healthCheck);
    return this.write(
      'ModifyListener',
      loadBalancerId,
      { LoadBalancerId: loadBalancerId, ListenerId: listenerId, HealthCheck: hc },
      options,
      { listenerId, shownIn: (l) => l.listenerId === listenerId && shows(l.healthCheck, hc) },
    );
  }

  modifyRuleHealthCheck(
    loadBalancerId: string,
    listenerId: string,
    locationId: string,
    healthCheck: HealthCheck,
    options: CallOptions = {},
  ): Promise<WriteResult> {
    requireId('listenerId', listenerId);
    requireId('locationId', locationId);
    const hc = requireHealthCheck(healthCheck);
    return this.write(
      'ModifyRule',
      loadBalancerId,
      { LoadBalancerId: loadBalancerId, ListenerId: listenerId, LocationId: locationId, HealthCheck: hc },
      options,
      { listenerId, shownIn: (l) => l.listenerId === listenerId && l.rules.some((r) => r.locationId === locationId && shows(r.healthCheck, hc)) },
    );
  }

  modifyListenerKeepalive(loadBalancerId: string, listenerId: string, enable: boolean, options: CallOptions = {}): Promise<WriteResult> {
    requireId('listenerId', listenerId);
    return this.write(
      'ModifyListener',
      loadBalancerId,
      { LoadBalancerId: loadBalancerId, ListenerId: listenerId, KeepaliveEnable: enable ? 1 : 0 },
      options,
      { listenerId, shownIn: (l) => l.listenerId === listenerId && l.keepaliveEnable === (enable ? 1 : 0) },
    );
  }

  modifyLoadBalancerPassToTarget(loadBalancerId: string, enable: boolean, options: CallOptions = {}): Promise<WriteResult> {
    return this.write(
      'ModifyLoadBalancerAttributes',
      loadBalancerId,
      { LoadBalancerId: loadBalancerId, LoadBalancerPassToTarget: enable },
      options,
    );
  }

  /**
   * Holds the CLB's turn for the whole write: submit, then prove it landed (`prover`, proof.ts). A busy CLB
   * (another writer, e.g. TKE) or a failed task means submitting again, within the retry policy. A task
   * that is still running when polling times out is NOT resubmitted (ClbTaskTimeoutError goes to the
   * caller), and neither is a write whose polling itself failed: the task may well have succeeded.
   * `stopping` drops the write while it waits for its turn or budget, never once submitted (CallOptions).
   */
  private write<A extends WriteAction>(action: A, loadBalancerId: string, request: ClbActions[A][0], options: CallOptions, readProof?: ReadProof): Promise<WriteResult> {
    const { signal, stopping } = options;
    requireId('loadBalancerId', loadBalancerId);
    const ctx: CloudErrorContext = { action, loadBalancerId, request, endpoint: this.endpoint.host };
    const started = Date.now();
    return this.gate.run(
      loadBalancerId,
      async () => {
        const pollFailures = new WeakSet<ClbError>();
        const result = await withRetry(
          async (attempt) => {
            // The fence right before sending: a write that waited for its turn through a pause must not go out late.
            if (options.mayWrite && !options.mayWrite()) {
              throw new ClbError({ code: 'Aborted', retryable: false, reason: 'Aborted', throttled: false, apiMessage: 'not the leader', action, loadBalancerId, message: `${action} was not sent: this replica is no longer the leader.` });
            }
            const resp = await this.attempt(action, request, ctx, signal, stopping);
            const taskId = resp.RequestId ?? '';
            const pollCtx: CloudErrorContext = { action, loadBalancerId };
            try {
              await waitForTask(taskId, this.prover(loadBalancerId, pollCtx, readProof, signal), {
                policy: this.taskPoll,
                context: pollCtx,
                ...(signal ? { signal } : {}),
              });
            } catch (err) {
              const e = toClbError(err, pollCtx, signal);
              // Accepted, only the wait ends (shutdown): name the task, a change may still land on the CLB.
              if (e.reason === 'Aborted') safeLog(this.logger, 'warn', 'Stopped waiting for a CLB task', { action, loadBalancerId, taskId, note: 'the task may still finish; the next round reads the CLB again' });
              if (e.reason !== 'ClbTaskFailed') pollFailures.add(e);
              throw e;
            }
            return { taskId, attempts: attempt };
          },
          {
            policy: this.retryPolicy,
            ...(signal ? { signal } : {}),
            toError: (err) => toClbError(err, ctx, signal),
            // Any polling failure but a failed task (timeouts included) ends the write: the task may have succeeded.
            shouldRetry: (e) => e.retryable && !pollFailures.has(e),
            onRetry: ({ error, attempt, delayMs }) => this.logRetry(error, attempt, delayMs),
          },
        ).catch((err: unknown) => this.logFailure(err));
        safeLog(this.logger, 'info', 'CLB write done', {
          action,
          loadBalancerId,
          taskId: result.taskId,
          attempts: result.attempts,
          durationMs: Date.now() - started,
        });
        return result;
      },
      signal,
      stopping,
    );
  }

  /**
   * The proof of one write, asked again until its task is done (waitForTask): each time DescribeTaskStatus, or a read of
   * the written listener when the polls have no room and DescribeListeners has more (proof.ts chooseProof). A read that does not show the
   * write counts as "still running", and the next proof asks the task (only it tells a failed task). A read that shows
   * it proves the write once reads are known to show values only at completion; until then (and in a world where they
   * show early) DescribeTaskStatus confirms it.
   */
  private prover(loadBalancerId: string, ctx: CloudErrorContext, readProof: ReadProof | undefined, signal?: AbortSignal): (taskId: string) => Promise<TaskStatus> {
    let lastReadMissed = false;
    return async (taskId) => {
      const via = chooseProof(
        { DescribeTaskStatus: this.throttle.load('DescribeTaskStatus'), DescribeListeners: this.throttle.load('DescribeListeners') },
        { readable: readProof !== undefined, lastReadMissed, visibility: this.visibility.visibility },
      );
      if (via === 'DescribeTaskStatus' || !readProof) {
        lastReadMissed = false;
        return this.taskStatus(taskId, ctx, signal);
      }
      const listeners = await this.describeListeners(loadBalancerId, { listenerIds: [readProof.listenerId], ...(signal ? { signal } : {}) });
      if (!listeners.some(readProof.shownIn)) {
        lastReadMissed = true;
        return { status: TASK_RUNNING };
      }
      if (!needsConfirmation(this.visibility)) return { status: TASK_SUCCEEDED };
      const confirmed = await this.taskStatus(taskId, ctx, signal);
      const before = this.visibility.visibility;
      this.visibility = onConfirmation(this.visibility, confirmed.status);
      if (this.visibility.visibility !== before) {
        safeLog(this.logger, this.visibility.visibility === 'early' ? 'warn' : 'info', 'Learned when a CLB write shows in a listener read', {
          visibility: this.visibility.visibility,
          loadBalancerId,
          taskId,
          taskStatus: confirmed.status,
          note: this.visibility.visibility === 'early' ? 'a written value showed before its task ended: every write is now proven by DescribeTaskStatus' : 'a listener read that shows a write now proves it (docs/tencent-cloud.md §3)',
        });
      }
      return confirmed;
    };
  }

  private async taskStatus(taskId: string, ctx: CloudErrorContext, signal?: AbortSignal): Promise<TaskStatus> {
    const resp = await this.call('DescribeTaskStatus', { TaskId: taskId }, ctx, signal);
    return { status: resp.Status ?? 2, message: resp.Message ?? null };
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing

  /** One call with retries (reads and task polls). */
  private call<A extends Action>(action: A, request: ClbActions[A][0], ctx: CloudErrorContext, signal?: AbortSignal): Promise<ClbActions[A][1]> {
    const fullCtx: CloudErrorContext = { ...ctx, action, request, endpoint: this.endpoint.host };
    return withRetry(() => this.attempt(action, request, fullCtx, signal), {
      policy: this.retryPolicy,
      ...(signal ? { signal } : {}),
      toError: (err) => toClbError(err, fullCtx, signal),
      onRetry: ({ error, attempt, delayMs }) => this.logRetry(error, attempt, delayMs),
    }).catch((err: unknown) => this.logFailure(err));
  }

  /** One HTTP attempt within the action's budget (`stopping` ends the wait); reports the outcome; slows the action down on throttling. */
  private async attempt<A extends Action>(
    action: A,
    request: ClbActions[A][0],
    ctx: CloudErrorContext,
    signal?: AbortSignal,
    stopping?: AbortSignal,
  ): Promise<ClbActions[A][1]> {
    // Resolve credentials first: the SDK would wrap a provider failure into a code-less exception
    // that looks like a network error.
    await this.credentials.getCredential();
    return this.throttle.run(
      action,
      async () => {
        const started = performance.now();
        try {
          const resp = (await this.sdk.request(action, request, signal ? { signal } : {})) as ClbActions[A][1];
          this.report({ action, outcome: 'ok', durationMs: performance.now() - started, ...lbOf(ctx) });
          return resp;
        } catch (err) {
          const e = toClbError(err, ctx, signal);
          if (e.reason !== 'Aborted') {
            this.report({ action, outcome: e.throttled ? 'throttled' : 'error', code: e.code, durationMs: performance.now() - started, ...lbOf(ctx) });
          }
          if (e.throttled) this.throttle.slowDown(action);
          throw e;
        }
      },
      { ...(signal ? { signal } : {}), ...(stopping ? { stopping } : {}) },
    );
  }

  private report(event: CloudCallEvent): void {
    try {
      this.onCall?.(event);
    } catch (err) {
      safeLog(this.logger, 'warn', 'onCall hook failed', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  private logRetry(error: ClbError, attempt: number, delayMs: number): void {
    safeLog(this.logger, error.throttled ? 'info' : 'debug', 'retrying CLB call', {
      action: error.action,
      loadBalancerId: error.loadBalancerId,
      code: error.code,
      reason: error.reason,
      attempt,
      delayMs,
    });
  }

  /** Callers report failures (status, Events); this debug line is for following one call through. */
  private logFailure(err: unknown): never {
    const e = err instanceof ClbError ? err : toClbError(err);
    if (e.reason !== 'Aborted') {
      safeLog(this.logger, 'debug', 'CLB call failed', {
        action: e.action,
        loadBalancerId: e.loadBalancerId,
        code: e.code,
        reason: e.reason,
        retryable: e.retryable,
        attempts: e.attempts,
        requestId: e.requestId,
      });
    }
    throw e;
  }

  reserve(action: string, options: CallOptions = {}): Promise<void> {
    if (!this.throttle.congested(action)) return Promise.resolve();
    // Ahead of queued calls (a cold start queues thousands of reads): the wait is then about the queue's concurrency
    // over the rate, not the whole backlog.
    return this.throttle.run(action, () => Promise.resolve(), { priority: 1, ...(options.signal ? { signal: options.signal } : {}), ...(options.stopping ? { stopping: options.stopping } : {}) });
  }

  /** Per action called so far, the rate (req/s) calls are sent at now: the budget, or less after throttling. */
  rateLimits(): Record<string, number> {
    return this.throttle.rates();
  }

  close(): Promise<void> {
    this.throttle.close();
    this.agent?.destroy();
    return Promise.resolve();
  }
}

function lbOf(ctx: CloudErrorContext): { loadBalancerId?: string } {
  return ctx.loadBalancerId ? { loadBalancerId: ctx.loadBalancerId } : {};
}

function requireId(name: string, value: string): void {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${name} must be a non-empty string`);
}

/** The struct as it goes on the wire: nothing null, nothing that does not apply to the check (writableHealthCheck). */
function requireHealthCheck(hc: HealthCheck): HealthCheck {
  const clean = writableHealthCheck(hc);
  if (Object.keys(clean).length === 0) throw new TypeError('healthCheck must be the full HealthCheck struct read from the CLB');
  return clean;
}
