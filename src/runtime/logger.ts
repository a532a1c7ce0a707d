// Structured JSON logs (winston). Secrets never reach a transport: values under secret-looking keys are
// replaced before formatting, whatever object a caller passes in.
import winston from 'winston';

const SECRET_KEY = /secret|password|token|authorization|credential/i;
/** Keys that look secret but only carry identifiers. */
const NOT_SECRET = new Set(['secretId', 'SecretId', 'secretName', 'tokenFile']);

/** Objects under a secret-looking key are walked, not dropped, so that e.g. credential.secretId stays visible. */
function isSecretValue(key: string, value: unknown): boolean {
  if (!SECRET_KEY.test(key) || NOT_SECRET.has(key)) return false;
  return value !== undefined && value !== '' && (value === null || typeof value !== 'object');
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretValue(k, v) ? '[REDACTED]' : redact(v, depth + 1);
  }
  return out;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message') continue;
    const value = info[key];
    info[key] = isSecretValue(key, value) ? '[REDACTED]' : redact(value);
  }
  return info;
});

export type Logger = winston.Logger;

export function createLogger(options: { level?: string; stream?: NodeJS.WritableStream } = {}): Logger {
  return winston.createLogger({
    level: options.level ?? 'info',
    format: winston.format.combine(redactFormat(), winston.format.timestamp(), winston.format.json()),
    transports: [
      options.stream
        ? new winston.transports.Stream({ stream: options.stream })
        : new winston.transports.Console({ stderrLevels: [] }),
    ],
  });
}
