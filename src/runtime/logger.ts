// Structured JSON logs (winston). Secrets never reach a transport: every field, the message included, goes
// through the same redaction policy as the cloud layer's own logging (src/cloud/redact.ts), whatever object
// a caller passes in.
import winston from 'winston';
import type { CloudLogger } from '../cloud/hooks.js';
import { redactSecrets } from '../cloud/redact.js';
import { scrubLogValue } from './kube-errors.js';

/** JSON drops an Error's non-enumerable name and message; keep them (the stack stays out of the log line). */
function serialisable(value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

// One walk over every field: secrets redacted, and client-node's API errors cut to status and message (their
// text embeds the full response headers).
const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level') continue;
    info[key] = serialisable(scrubLogValue(redactSecrets({ [key]: info[key] })[key]));
  }
  return info;
});

export type Logger = winston.Logger;

/** What a component logs through: a winston Logger satisfies it, a test passes a recorder. */
export type LogSink = Pick<CloudLogger, 'info' | 'warn' | 'error'>;

export function createLogger(options: { level?: string; stream?: NodeJS.WritableStream } = {}): Logger {
  return winston.createLogger({
    level: options.level ?? 'info',
    format: winston.format.combine(redactFormat(), winston.format.timestamp(), winston.format.json()),
    transports: [options.stream ? new winston.transports.Stream({ stream: options.stream }) : new winston.transports.Console({ stderrLevels: [] })],
  });
}
