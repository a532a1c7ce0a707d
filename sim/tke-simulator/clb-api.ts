// The CLB calls the simulator makes, through the unmodified tencentcloud-sdk-nodejs (as TKE's controllers use
// Tencent's Go SDK). Writes are async: each waits for its task (DescribeTaskStatus with TaskId = RequestId,
// tencent-cloud.md §3), and `ResourceInOperating` / `RequestLimitExceeded` are retried with backoff, as
// tkestack/tke-extend-network-controller does (tencent-cloud.md §3 "Error codes").
import http from 'node:http';
import https from 'node:https';
import { Client } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_client.js';
import type {
  CreateListenerRequest,
  CreateLoadBalancerRequest,
  CreateRuleRequest,
  Listener,
  LoadBalancer,
  ModifyListenerRequest,
  ModifyLoadBalancerAttributesRequest,
  ModifyRuleRequest,
} from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';

export interface ClbConnection {
  /** `host:port` of the CLB API (the emulator's `endpoint`). */
  endpoint: string;
  /** `http://` for the local emulator; the SDK default is https. */
  protocol?: string;
  region: string;
  credentials: { secretId: string; secretKey: string };
}

/** A CLB API error, rendered the way Tencent's Go SDK prints it (which is what TKE's Events quote). */
export class ClbError extends Error {
  constructor(
    readonly action: string,
    readonly code: string,
    readonly detail: string,
    readonly requestId: string,
  ) {
    super(`[TencentCloudSDKError] Code=${code}, Message=${detail}, RequestId=${requestId}`);
    this.name = 'ClbError';
  }
}

const RETRYABLE = /^(FailedOperation\.ResourceInOperating|RequestLimitExceeded(\..*)?|InternalError)$/;

function toClbError(action: string, err: unknown): ClbError {
  if (err instanceof ClbError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: unknown; requestId?: unknown; httpCode?: unknown };
  // Network failures and HTTP 5xx carry no API code; treat them as transient server errors.
  const code = typeof e.code === 'string' && e.code ? e.code : 'InternalError';
  const message = typeof e.message === 'string' ? e.message : String(err);
  return new ClbError(action, code, message, typeof e.requestId === 'string' ? e.requestId : '');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Client-side pacing per action (no bursts), below CLB's 20 requests/s per action (tencent-cloud.md §3 "Rate
 * limits"), so a resync of many objects queues instead of tripping `RequestLimitExceeded` — and leaves most
 * of the account's quota to the operator under test, which shares it.
 */
class Pacer {
  private readonly next = new Map<string, number>();
  constructor(private readonly rps: number) {}

  async take(action: string): Promise<void> {
    if (this.rps <= 0) return;
    const now = Date.now();
    const at = Math.max(now, this.next.get(action) ?? 0);
    this.next.set(action, at + 1000 / this.rps);
    if (at > now) await sleep(at - now);
  }
}

export interface ClbApiOptions {
  /** Requests per second per action this client allows itself; default 10, 0 = unpaced. */
  rps?: number;
  /** Attempts per call for retryable errors (ResourceInOperating, RequestLimitExceeded, transport errors). */
  maxAttempts?: number;
  /** Give up waiting for an async task after this long. */
  taskTimeoutMs?: number;
}

export class ClbApi {
  private readonly client: Client;
  private readonly maxAttempts: number;
  private readonly taskTimeoutMs: number;
  private readonly pacer: Pacer;

  constructor(conn: ClbConnection, options: ClbApiOptions = {}) {
    this.client = new Client({
      credential: { secretId: conn.credentials.secretId, secretKey: conn.credentials.secretKey },
      region: conn.region,
      // An agent of our own: without one the SDK routes through any http_proxy in the environment.
      profile: {
        httpProfile: {
          protocol: conn.protocol ?? 'http://',
          endpoint: conn.endpoint,
          reqTimeout: 30,
          agent: (conn.protocol ?? 'http://') === 'http://' ? new http.Agent() : new https.Agent(),
        },
      },
    });
    this.maxAttempts = options.maxAttempts ?? 8;
    this.taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
    this.pacer = new Pacer(options.rps ?? 10);
  }

  /** Calls an action, retrying transient errors with exponential backoff (200 ms → 5 s, jittered). */
  private async call<T>(action: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.pacer.take(action);
        return await fn();
      } catch (err) {
        const e = toClbError(action, err);
        if (!RETRYABLE.test(e.code) || attempt >= this.maxAttempts) throw e;
        await sleep(Math.min(5_000, 200 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));
      }
    }
  }

  private async waitTask(action: string, requestId: string | undefined): Promise<void> {
    if (!requestId) throw new ClbError(action, 'InternalError', 'async call returned no RequestId', '');
    const deadline = Date.now() + this.taskTimeoutMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
      const res = await this.call('DescribeTaskStatus', () => this.client.DescribeTaskStatus({ TaskId: requestId }));
      if (res.Status === 0) return;
      if (res.Status === 1) throw new ClbError(action, 'FailedOperation', `task failed: ${res.Message ?? ''}`, requestId);
      if (Date.now() > deadline) throw new ClbError(action, 'InternalError', `task still running after ${this.taskTimeoutMs} ms`, requestId);
      await sleep(delay);
    }
  }

  /** Runs an async write and waits for its task; retries the whole write while the CLB is busy. */
  private async write<T extends { RequestId?: string }>(action: string, fn: () => Promise<T>): Promise<T> {
    const res = await this.call(action, fn);
    await this.waitTask(action, res.RequestId);
    return res;
  }

  async describeLoadBalancer(id: string): Promise<LoadBalancer | undefined> {
    const res = await this.call('DescribeLoadBalancers', () => this.client.DescribeLoadBalancers({ LoadBalancerIds: [id] }));
    return res.LoadBalancerSet?.find((lb) => lb.LoadBalancerId === id);
  }

  /** The CLBs carrying tag `key=value` (DescribeLoadBalancers filter `tag:<key>`). */
  async describeLoadBalancersByTag(key: string, value: string): Promise<LoadBalancer[]> {
    const res = await this.call('DescribeLoadBalancers', () => this.client.DescribeLoadBalancers({ Filters: [{ Name: `tag:${key}`, Values: [value] }] }));
    return res.LoadBalancerSet ?? [];
  }

  /**
   * Creates a CLB. `onCreated` runs with the new ID before the task is awaited, so the caller can record it
   * (on the Service) first: a CLB whose creation task is slow or times out is then found again, not duplicated.
   */
  async createLoadBalancer(req: CreateLoadBalancerRequest, onCreated: (id: string) => Promise<void>): Promise<string> {
    const res = await this.call('CreateLoadBalancer', () => this.client.CreateLoadBalancer(req));
    const id = res.LoadBalancerIds?.[0];
    if (!id) throw new ClbError('CreateLoadBalancer', 'InternalError', 'no LoadBalancerIds in the response', res.RequestId ?? '');
    await onCreated(id);
    await this.waitTask('CreateLoadBalancer', res.RequestId);
    return id;
  }

  async deleteLoadBalancer(id: string): Promise<void> {
    await this.write('DeleteLoadBalancer', () => this.client.DeleteLoadBalancer({ LoadBalancerIds: [id] }));
  }

  async describeListeners(loadBalancerId: string): Promise<Listener[]> {
    const res = await this.call('DescribeListeners', () => this.client.DescribeListeners({ LoadBalancerId: loadBalancerId }));
    return res.Listeners ?? [];
  }

  async createListener(req: CreateListenerRequest): Promise<void> {
    await this.write('CreateListener', () => this.client.CreateListener(req));
  }

  async deleteListener(loadBalancerId: string, listenerId: string): Promise<void> {
    await this.write('DeleteListener', () => this.client.DeleteListener({ LoadBalancerId: loadBalancerId, ListenerId: listenerId }));
  }

  async createRule(req: CreateRuleRequest): Promise<void> {
    await this.write('CreateRule', () => this.client.CreateRule(req));
  }

  async deleteRules(loadBalancerId: string, listenerId: string, locationIds: string[]): Promise<void> {
    await this.write('DeleteRule', () =>
      this.client.DeleteRule({ LoadBalancerId: loadBalancerId, ListenerId: listenerId, LocationIds: locationIds }),
    );
  }

  async modifyListener(req: ModifyListenerRequest): Promise<void> {
    await this.write('ModifyListener', () => this.client.ModifyListener(req));
  }

  async modifyLoadBalancerAttributes(req: ModifyLoadBalancerAttributesRequest): Promise<void> {
    await this.write('ModifyLoadBalancerAttributes', () => this.client.ModifyLoadBalancerAttributes(req));
  }

  async modifyRule(req: ModifyRuleRequest): Promise<void> {
    await this.write('ModifyRule', () => this.client.ModifyRule(req));
  }
}

/** Errors worth retrying later (busy CLB, throttling, transport); the rest are final answers from CLB. */
export function isTransient(err: unknown): boolean {
  return !(err instanceof ClbError) || RETRYABLE.test(err.code);
}

/** Not-found errors of CLB lookups by ID (tencent-cloud.md §3: matched by code or message). */
export function isNotFound(err: unknown): boolean {
  return (
    err instanceof ClbError &&
    (err.code === 'InvalidParameter.LBIdNotFound' ||
      err.code === 'ResourceNotFound' ||
      /LoadBalancer not exist|LB not exist/i.test(err.detail))
  );
}
