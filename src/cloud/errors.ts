// Typed CLB errors. Every failure of a cloud call (SDK exception, network error, failed async task,
// missing credentials, shutdown) becomes one `ClbError` that says whether retrying can help and, for
// people, what went wrong and how to fix it. Facts: docs/tencent-cloud.md §3 "Error codes"
// and §4 "Errors"; the emulator's capability errors: sim/clb-emulator/capabilities.ts.
import SdkExceptionModule from 'tencentcloud-sdk-nodejs/tencentcloud/common/exception/tencent_cloud_sdk_exception.js';
import { classifyApiError, onLb } from './error-codes.js';
import type { CloudErrorContext, CloudErrorInfo, CloudErrorReason } from './error-types.js';
import { redactSecrets } from './redact.js';

export type { CloudErrorContext, CloudErrorInfo, CloudErrorReason } from './error-types.js';

export class ClbError extends Error implements CloudErrorInfo {
  readonly code: string;
  readonly retryable: boolean;
  readonly reason: CloudErrorReason;
  readonly throttled: boolean;
  readonly action?: string;
  readonly loadBalancerId?: string;
  readonly requestId?: string;
  readonly httpCode?: number;
  /** The message the API (or the network layer) returned, unmodified. */
  readonly apiMessage: string;
  /** Attempts made before giving up (set by the retry loop). */
  attempts = 1;

  constructor(info: CloudErrorInfo & { apiMessage: string }, options?: { cause?: unknown }) {
    super(info.message, options);
    this.name = 'ClbError';
    this.code = info.code;
    this.retryable = info.retryable;
    this.reason = info.reason;
    this.throttled = info.throttled;
    this.apiMessage = info.apiMessage;
    if (info.action !== undefined) this.action = info.action;
    if (info.loadBalancerId !== undefined) this.loadBalancerId = info.loadBalancerId;
    if (info.requestId !== undefined) this.requestId = info.requestId;
    if (info.httpCode !== undefined) this.httpCode = info.httpCode;
  }

  info(): CloudErrorInfo {
    return {
      code: this.code,
      retryable: this.retryable,
      reason: this.reason,
      message: this.message,
      throttled: this.throttled,
      ...(this.action === undefined ? {} : { action: this.action }),
      ...(this.loadBalancerId === undefined ? {} : { loadBalancerId: this.loadBalancerId }),
      ...(this.requestId === undefined ? {} : { requestId: this.requestId }),
      ...(this.httpCode === undefined ? {} : { httpCode: this.httpCode }),
    };
  }
}

/** An async write whose task ended with `Status 1`. Retryable: the write is re-submitted (bounded). */
export class ClbTaskFailedError extends ClbError {
  constructor(
    readonly taskId: string,
    taskMessage: string,
    ctx: CloudErrorContext,
  ) {
    super({
      code: 'TaskFailed',
      retryable: true,
      reason: 'ClbTaskFailed',
      throttled: false,
      apiMessage: taskMessage,
      requestId: taskId,
      ...pickContext(ctx),
      message: `The CLB task ${taskId} of ${ctx.action ?? 'a write'}${onLb(ctx)} failed: ${taskMessage || '(no message)'}`,
    });
    this.name = 'ClbTaskFailedError';
  }
}

/**
 * The task was still running when loopguard stopped polling. Not re-submitted (the write may still
 * land, and a second write would only meet ResourceInOperating); the caller re-reads and requeues.
 */
export class ClbTaskTimeoutError extends ClbError {
  constructor(
    readonly taskId: string,
    waitedMs: number,
    ctx: CloudErrorContext,
  ) {
    super({
      code: 'TaskTimeout',
      retryable: true,
      reason: 'ClbTaskTimeout',
      throttled: false,
      apiMessage: '',
      requestId: taskId,
      ...pickContext(ctx),
      message:
        `The CLB task ${taskId} of ${ctx.action ?? 'a write'}${onLb(ctx)} was still running after ` +
        `${Math.round(waitedMs / 1000)} s; loopguard will read the CLB again and retry if needed.`,
    });
    this.name = 'ClbTaskTimeoutError';
  }
}

/** No credential source produced a key (or a dynamic source failed). */
export class CredentialsError extends ClbError {
  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(
      {
        code: 'CredentialsUnavailable',
        retryable,
        reason: 'CredentialsUnavailable',
        throttled: false,
        apiMessage: message,
        message,
      },
      options,
    );
    this.name = 'CredentialsError';
  }
}

// ---------------------------------------------------------------------------------------------------
// Recognising the SDK's exception

/** The SDK's single exception class (CJS default export: from ESM the default import is the module). */
const SdkException: unknown = (SdkExceptionModule as unknown as { default?: unknown }).default ?? SdkExceptionModule;

interface SdkExceptionShape {
  message: string;
  requestId: string;
  traceId: string;
  code?: string;
  httpCode?: number;
}

/**
 * `instanceof` first; the shape as fallback, because a second copy of the SDK (or a test runner's
 * module registry) gives a different class object with the same behaviour.
 */
export function isSdkException(err: unknown): err is Error & SdkExceptionShape {
  if (!(err instanceof Error)) return false;
  if (typeof SdkException === 'function' && err instanceof (SdkException as new () => Error)) return true;
  const e = err as Partial<SdkExceptionShape>;
  return typeof e.requestId === 'string' && typeof e.traceId === 'string';
}

// ---------------------------------------------------------------------------------------------------
// Converting what a call threw

const NETWORK_PATTERNS = [
  /socket hang up/i,
  /\bEPROTO\b/,
  /ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|ENETUNREACH|EHOSTUNREACH|EAI_AGAIN|ENOTFOUND/,
  /network timeout/i,
  /request to .* failed/i,
  /other side closed|fetch failed|premature close/i,
];

function pickContext(ctx: CloudErrorContext): Pick<CloudErrorInfo, 'action' | 'loadBalancerId'> {
  return {
    ...(ctx.action === undefined ? {} : { action: ctx.action }),
    ...(ctx.loadBalancerId === undefined ? {} : { loadBalancerId: ctx.loadBalancerId }),
  };
}

/** By name, not class: DOMException and AbortError may come from another realm (test VMs, undici). */
function isAbortError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { name, message } = err as { name?: unknown; message?: unknown };
  return name === 'AbortError' || (typeof message === 'string' && /\baborted\b/i.test(message));
}

/**
 * Turns anything a cloud call can throw into a `ClbError` (idempotent). Pass `signal` so that an
 * abort — which the SDK reports as a plain exception — is recognised as such and never retried.
 */
export function toClbError(err: unknown, ctx: CloudErrorContext = {}, signal?: AbortSignal): ClbError {
  if (err instanceof ClbError) return err;
  const base = pickContext(ctx);
  if (signal?.aborted || (isAbortError(err) && !isSdkException(err))) {
    return new ClbError(
      { code: 'Aborted', retryable: false, reason: 'Aborted', throttled: false, apiMessage: errorMessage(err), ...base, message: `${ctx.action ?? 'The CLB call'} was cancelled.` },
      { cause: err },
    );
  }
  if (isSdkException(err)) {
    const requestId = err.requestId || undefined;
    if (err.code) {
      const v = classifyApiError(err.code, err.message, ctx);
      return new ClbError(
        { code: err.code, throttled: false, ...v, apiMessage: err.message, ...base, ...(requestId ? { requestId } : {}) },
        { cause: err },
      );
    }
    if (typeof err.httpCode === 'number') {
      const status = err.httpCode;
      const retryable = status >= 500 || status === 429 || status === 408;
      return new ClbError(
        {
          code: `HTTP${status}`,
          retryable,
          throttled: status === 429,
          reason: status === 429 ? 'Throttled' : retryable ? 'CloudUnavailable' : 'CloudError',
          apiMessage: err.message,
          httpCode: status,
          ...base,
          message: `The CLB API answered ${ctx.action ?? 'the call'} with HTTP ${status} ${err.message}${retryable ? '; retried with backoff.' : '.'}`,
        },
        { cause: err },
      );
    }
    // No code, no status: the request never got an answer (the SDK wraps network errors this way).
    return networkError(err, ctx);
  }
  if (err instanceof Error && NETWORK_PATTERNS.some((p) => p.test(err.message))) return networkError(err, ctx);
  return new ClbError(
    {
      code: 'InternalError',
      retryable: false,
      reason: 'CloudError',
      throttled: false,
      apiMessage: errorMessage(err),
      ...base,
      message: `${ctx.action ?? 'A CLB call'} failed inside loopguard: ${errorMessage(err)}`,
    },
    { cause: err },
  );
}

/**
 * TLS sent to a plain-HTTP server (the local CLB emulator, a sidecar) dies inside OpenSSL as
 * `EPROTO … wrong version number`. No retry can fix that: only the protocol setting can.
 */
const TLS_TO_PLAIN_HTTP = /\bEPROTO\b|wrong version number|WRONG_VERSION_NUMBER|packet length too long|SSL routines:[^:]*:unknown protocol/i;

/** The network layer's text on one line, OpenSSL's `<hex>:error:<hex>:SSL routines:<fn>:<reason>:<file>:<line>` cut to its reason. */
function networkDetail(message: string): string {
  const ssl = /[0-9A-Fa-f]+:error:[0-9A-Fa-f]+:SSL routines:[^:]*:([^:\n]+)[^\n]*/.exec(message);
  const line = (ssl ? message.replace(ssl[0], `TLS ${ssl[1]}`) : message).split('\n')[0]?.trim() ?? '';
  return redactSecrets(line);
}

/** What to check for a connection-level failure, by its cause. */
function networkFix(message: string, endpointSet: boolean): string {
  const endpoint = endpointSet ? '--clb-endpoint (LOOPGUARD_CLB_ENDPOINT)' : 'the CLB API endpoint';
  if (/ECONNREFUSED/.test(message)) return `Nothing accepts connections there: check ${endpoint} and that the server is running.`;
  if (/ENOTFOUND|EAI_AGAIN/.test(message)) return `The host name does not resolve: check ${endpoint} and DNS.`;
  if (/request to http:\/\/[^ ]* failed, reason: socket hang up/.test(message)) {
    return `The server closed the connection: if it speaks HTTPS, set --clb-protocol=https:// (LOOPGUARD_CLB_PROTOCOL); else check ${endpoint}.`;
  }
  return `If it persists, check that ${endpointSet ? 'the endpoint' : 'clb.tencentcloudapi.com'} is reachable from where loopguard runs (in a pod: DNS, NetworkPolicy, egress proxy).`;
}

function networkError(err: Error, ctx: CloudErrorContext): ClbError {
  const where = ctx.endpoint ? ` ${ctx.endpoint}` : '';
  const detail = networkDetail(err.message);
  const customEndpoint = ctx.endpoint !== undefined && !/(^|\.)tencentcloudapi\.com(:\d+)?$/.test(ctx.endpoint);
  if (TLS_TO_PLAIN_HTTP.test(err.message)) {
    return new ClbError(
      {
        code: 'EndpointProtocolMismatch',
        retryable: false,
        reason: 'NetworkError',
        throttled: false,
        apiMessage: err.message,
        ...pickContext(ctx),
        message:
          `${ctx.action ?? 'A CLB call'} spoke HTTPS to the CLB API endpoint${where}, which answers in plain HTTP (${detail}). ` +
          'Fix: set --clb-protocol=http:// (LOOPGUARD_CLB_PROTOCOL=http://) or write the endpoint as http://host:port, ' +
          'as the local CLB emulator needs; for the real CLB API leave --clb-endpoint unset.',
      },
      { cause: err },
    );
  }
  return new ClbError(
    {
      code: 'NetworkError',
      retryable: true,
      reason: 'NetworkError',
      throttled: false,
      apiMessage: err.message,
      ...pickContext(ctx),
      message:
        `${ctx.action ?? 'A CLB call'} got no answer from the CLB API endpoint${where} (${detail}); retried with backoff. ` +
        networkFix(err.message, customEndpoint),
    },
    { cause: err },
  );
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** For conditions and Events: code, whether retrying can help, a CamelCase reason, and cause + fix. */
export function describeCloudError(err: unknown, ctx: CloudErrorContext = {}): CloudErrorInfo {
  return toClbError(err, ctx).info();
}
