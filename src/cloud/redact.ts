// Secret redaction for everything that may reach a log line, an Event or a status message.
// Two layers, because either alone leaks: (1) the exact values of every credential loopguard has
// loaded (registered by the credential providers), wherever they appear; (2) patterns and key names
// that look like secrets (SecretIds start with AKID, TC3 Authorization headers, `secret_key = …`),
// for values loopguard never loaded itself (e.g. a mistyped key quoted in an error message).

const REDACTED = '[REDACTED]';

/** Values shorter than this are not registered: replacing short strings everywhere mangles logs. */
const MIN_SECRET_LENGTH = 8;
const MAX_REGISTERED = 64;
const registered = new Set<string>();

/**
 * Remembers a credential value (SecretId, SecretKey, session token) so that `redactSecrets` removes it
 * from any string. The set is bounded: rotated temporary credentials replace the oldest entries.
 */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < MIN_SECRET_LENGTH || registered.has(value)) return;
  registered.add(value);
  if (registered.size > MAX_REGISTERED) {
    const oldest = registered.values().next().value;
    if (oldest !== undefined) registered.delete(oldest);
  }
}

/** Object keys whose values are never logged, whatever they contain. */
const SENSITIVE_KEY = /secret|passw|token|authorization|signature|credential|private.?key|api.?key|^x-tc-token$/i;

const STRING_PATTERNS: Array<[RegExp, string]> = [
  // TC3 Authorization header value (Credential=<SecretId>/…, Signature=<hex>).
  [/TC3-HMAC-SHA256\s+Credential=[^\s"',]*(?:,\s*SignedHeaders=[^\s"',]*)?(?:,\s*Signature=[0-9a-fA-F]*)?/g, `TC3-HMAC-SHA256 ${REDACTED}`],
  [/(Authorization["']?\s*[:=]\s*["']?)[^"'\r\n]+/gi, `$1${REDACTED}`],
  [/(Signature=)[0-9a-fA-F]{16,}/g, `$1${REDACTED}`],
  // key = value forms: INI profile files, env dumps, query strings, JSON.
  [
    /((?:secret[_-]?id|secret[_-]?key|session[_-]?token|TENCENTCLOUD_SECRET_ID|TENCENTCLOUD_SECRET_KEY|TENCENTCLOUD_SESSION_TOKEN|X-TC-Token|token)["']?\s*[:=]\s*["']?)[^\s"',&}]+/gi,
    `$1${REDACTED}`,
  ],
  // Tencent SecretIds (permanent and temporary) start with AKID.
  [/\bAKID[A-Za-z0-9]{8,}/g, `AKID${REDACTED}`],
];

function redactString(s: string): string {
  let out = s;
  for (const secret of registered) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of STRING_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

const MAX_DEPTH = 10;

function redactValue(value: unknown, seen: WeakMap<object, unknown>, depth: number): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return seen.get(value) ?? '[Circular]';
  if (depth > MAX_DEPTH) return '[Truncated]';
  if (value instanceof Date) return value;
  if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;

  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(redactValue(item, seen, depth + 1));
    return out;
  }
  if (value instanceof Error) {
    // Keep the class (winston's errors() format and instanceof checks still work) but not the text.
    const copy = Object.create(Object.getPrototypeOf(value) as object) as Record<string, unknown>;
    seen.set(value, copy);
    for (const key of Object.getOwnPropertyNames(value)) {
      const v = (value as unknown as Record<string, unknown>)[key];
      copy[key] = SENSITIVE_KEY.test(key) && v != null ? REDACTED : redactValue(v, seen, depth + 1);
    }
    if ('cause' in value) copy['cause'] = redactValue(value.cause, seen, depth + 1);
    return copy;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, v] of Object.entries(value)) {
    out[key] = SENSITIVE_KEY.test(key) && v != null && v !== '' ? REDACTED : redactValue(v, seen, depth + 1);
  }
  return out;
}

/**
 * Returns a copy of `value` (string, plain object, array, Error) with secrets replaced by
 * `[REDACTED]`: values under sensitive keys, registered credential values, SecretIds (AKID…), TC3
 * Authorization headers and `secret_key = …` style assignments. Never throws; cycles are kept.
 */
export function redactSecrets<T>(value: T): T {
  return redactValue(value, new WeakMap(), 0) as T;
}
