// How a TencentClbClient is configured: its options and where it sends requests (endpoint parsing).
import type { CloudCredential, CredentialProvider } from './credentials.js';
import type { CloudCallEvent, CloudLogger } from './hooks.js';
import type { RetryPolicy } from './retry.js';
import type { TaskPollPolicy } from './task-waiter.js';
import type { ThrottleOptions } from './throttle.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

export interface TencentClbClientOptions {
  /** e.g. `ap-guangzhou`; sent as X-TC-Region on every call. */
  region: string;
  /** A provider (see credentials.ts `createCredentialProvider`) or a fixed key pair. */
  credentials: CredentialProvider | CloudCredential;
  /**
   * API endpoint override: `host[:port]` or a URL (`http://127.0.0.1:PORT` for the emulator).
   * Default `clb.tencentcloudapi.com` over HTTPS.
   */
  endpoint?: string;
  /** `https` (default) or `http`; a URL endpoint's scheme wins. */
  protocol?: 'https' | 'http';
  /** Per HTTP request. Default 15 s (the SDK's own default is 60 s). */
  requestTimeoutMs?: number;
  /** Per-action budgets; default 10 req/s per action (half the shared 20 req/s quota), adaptive below that. */
  throttle?: ThrottleOptions;
  /** Retries of one call (reads, task polls, write submissions). */
  retry?: Partial<RetryPolicy>;
  /** DescribeTaskStatus polling of async writes. */
  taskPoll?: Partial<TaskPollPolicy>;
  /** CLBs written concurrently (each CLB strictly one write at a time). Default 16. */
  writeConcurrency?: number;
  /**
   * An HTTP(S) proxy URL. Without it the client uses its own agent, so the SDK never picks up a stray
   * `http_proxy` variable (its fetch wrapper would, with no NO_PROXY support).
   */
  proxy?: string;
  /** Structured logs (winston-compatible); secrets are redacted before they reach it. */
  logger?: CloudLogger;
  /** One event per HTTP attempt, for metrics (calls, errors, throttles per action; durations). */
  onCall?: (event: CloudCallEvent) => void;
}

export interface ParsedEndpoint {
  host: string;
  protocol: 'https://' | 'http://';
}

export function parseEndpoint(endpoint: string | undefined, protocol: 'https' | 'http' | undefined): ParsedEndpoint {
  const fallback = protocol === 'http' ? 'http://' : 'https://';
  if (!endpoint) return { host: 'clb.tencentcloudapi.com', protocol: fallback };
  const m = /^(https?):\/\/([^/]+)\/?$/i.exec(endpoint);
  if (m?.[1] && m[2]) return { host: m[2], protocol: m[1].toLowerCase() === 'http' ? 'http://' : 'https://' };
  if (endpoint.includes('/')) throw new TypeError(`CLB endpoint must be host[:port] or scheme://host[:port], got ${endpoint}`);
  return { host: endpoint, protocol: fallback };
}
