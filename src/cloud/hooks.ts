// How src/cloud reports to the runtime without importing winston or prom-client: a logger with the
// shape of winston's (a winston Logger satisfies it as is) and a per-call event the runtime turns
// into counters (cloud calls / errors / throttles per action) and a duration histogram.
import { redactSecrets } from './redact.js';

export interface CloudLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export const silentLogger: CloudLogger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});

export type CallOutcome = 'ok' | 'error' | 'throttled';

/** One HTTP attempt against the CLB API (a retried call produces one event per attempt). */
export interface CloudCallEvent {
  action: string;
  outcome: CallOutcome;
  /** API error code, `HTTP<status>`, `NetworkError`, … when outcome ≠ ok. */
  code?: string;
  durationMs: number;
  loadBalancerId?: string;
}

export type LogLevel = keyof CloudLogger;

/** Logs through `logger` with secrets redacted from message and meta; a failing logger is ignored. */
export function safeLog(logger: CloudLogger, level: LogLevel, message: string, meta: Record<string, unknown> = {}): void {
  try {
    logger[level](redactSecrets(message), redactSecrets(meta));
  } catch {
    // Logging must never break a cloud call.
  }
}
