// The one secret-redaction policy for everything that may reach a log line, an Event or a status message.
// winston's format (src/runtime/logger.ts) and the cloud layer (safeLog, quoted requests, error texts) both
// call `redactSecrets`, so a cloud log line, which passes through both, comes out as it would through one:
// the function is idempotent.
//
// The policy:
// 1. By key, at any depth: the value under a key that names a secret (SecretKey, password, token,
//    Authorization, Signature, private or API key) becomes `[REDACTED]`, whatever its type. Inside a
//    `credential(s)` container every field is redacted, whatever its name (`key`, `value`, …), except a
//    SecretId (rule 2), so that the id stays recognisable and nothing else of the credential shows.
// 2. SecretIds are masked, not dropped: an operator debugging a CAM problem must be able to tell which key
//    was used, but a log must not hold a whole credential half. Every AKID… value, the value under a SecretId
//    key, and a registered SecretId keep a short prefix (`AKIDab12***`), wherever they appear, strings included.
// 3. Inside strings: TC3 Authorization headers, `Signature=<hex>` and `secret_key = …`, `token: …`, `password=…`
//    assignments (INI files, env dumps, query strings, JSON) are redacted; SecretId assignments are masked.
// 4. Every credential value loopguard has loaded (registered by the credential providers) is removed from any
//    string, for values no pattern recognises (e.g. a SecretKey quoted in an error message).

const REDACTED = '[REDACTED]';
/** Marks a masked SecretId; a value already ending with it is left as is (idempotence). */
const MASK = '***';
/** How much of a SecretId stays visible: `AKID` plus 4 characters, enough to tell an account's keys apart. */
const MASK_PREFIX = 8;

/** Values shorter than this are not registered: replacing short strings everywhere mangles logs. */
const MIN_SECRET_LENGTH = 8;
const MAX_REGISTERED = 64;
const registered = new Set<string>();

/**
 * Remembers a credential value (SecretId, SecretKey, session token) so that `redactSecrets` removes it
 * from any string (a SecretId-looking one is masked). The set is bounded: rotated temporary credentials
 * replace the oldest entries.
 */
export function registerSecret(value: string | undefined | null): void {
  if (!value || value.length < MIN_SECRET_LENGTH || registered.has(value)) return;
  registered.add(value);
  if (registered.size > MAX_REGISTERED) {
    const oldest = registered.values().next().value;
    if (oldest !== undefined) registered.delete(oldest);
  }
}

/** Tencent SecretIds, permanent and temporary, start with AKID (real ones are 36 characters). */
const SECRET_ID = /\bAKID[A-Za-z0-9]{8,}/g;
const SECRET_ID_EXACT = /^AKID[A-Za-z0-9]{8,}$/;
/** Keys whose value is a SecretId: secretId, SecretId, TmpSecretId, secret_id, TENCENTCLOUD_SECRET_ID. */
const SECRET_ID_KEY = /secret[_-]?id$/i;
/** Keys whose value is never logged, whatever it contains. */
const SECRET_KEY = /secret|passw|token|authorization|signature|private.?key|api.?key/i;
/** Keys that match SECRET_KEY but name where a secret lives, not the secret itself. */
const NOT_SECRET_KEY = /^(?:secretName|secretRef|tokenFile|tokenPath)$/i;
/** Containers of a SecretId and a SecretKey: every field but the SecretId is redacted (see `redactCredential`). */
const CREDENTIAL_KEY = /^credentials?$/i;

/** `AKIDab12***`: a prefix of at most half the value, so that a short id is never mostly visible. */
export function maskSecretId(id: string): string {
  if (id.endsWith(MASK)) return id;
  return `${id.slice(0, Math.min(MASK_PREFIX, Math.floor(id.length / 2)))}${MASK}`;
}

type Replacer = (match: string, ...groups: string[]) => string;
const redactAfter: Replacer = (_match, key) => `${key}${REDACTED}`;

const STRING_PATTERNS: Array<[RegExp, Replacer]> = [
  // TC3 Authorization header value (Credential=<SecretId>/…, Signature=<hex>).
  [/TC3-HMAC-SHA256\s+Credential=[^\s"',]*(?:,\s*SignedHeaders=[^\s"',]*)?(?:,\s*Signature=[0-9a-fA-F]*)?/g, () => `TC3-HMAC-SHA256 ${REDACTED}`],
  [/(Authorization["']?\s*[:=]\s*["']?)[^"'\r\n]+/gi, redactAfter],
  [/(Signature=)[0-9a-fA-F]{16,}/g, redactAfter],
  // key = value forms: INI profile files, env dumps, query strings, JSON.
  [/((?:secret[_-]?id|TENCENTCLOUD_SECRET_ID)["']?\s*[:=]\s*["']?)([^\s"',&}]+)/gi, (_match, key = '', id = '') => `${key}${maskSecretId(id)}`],
  [
    /((?:secret[_-]?key|session[_-]?token|passw(?:or)?d|TENCENTCLOUD_SECRET_KEY|TENCENTCLOUD_SESSION_TOKEN|X-TC-Token|token)["']?\s*[:=]\s*["']?)[^\s"',&}]+/gi,
    redactAfter,
  ],
  [SECRET_ID, (id) => maskSecretId(id)],
];

function redactString(s: string): string {
  let out = s;
  for (const secret of registered) {
    if (out.includes(secret)) out = out.split(secret).join(SECRET_ID_EXACT.test(secret) ? maskSecretId(secret) : REDACTED);
  }
  for (const [pattern, replacer] of STRING_PATTERNS) out = out.replace(pattern, replacer);
  return out;
}

type KeyRule = 'secret' | 'secretId' | 'walk';

function keyRule(key: string): KeyRule {
  if (SECRET_ID_KEY.test(key)) return 'secretId';
  if (SECRET_KEY.test(key) && !NOT_SECRET_KEY.test(key)) return 'secret';
  return 'walk';
}

const MAX_DEPTH = 10;

function redactEntry(key: string, value: unknown, seen: WeakMap<object, unknown>, depth: number): unknown {
  // Empty values stay visible: "the key is empty" is what a broken credential setup needs to show.
  if (value === undefined || value === null || value === '') return value;
  switch (keyRule(key)) {
    case 'secret':
      return REDACTED;
    case 'secretId': {
      if (typeof value !== 'string') return redactValue(value, seen, depth + 1);
      // A registered or AKID value is already handled by the string rules; any other id is masked whole.
      const redacted = redactString(value);
      return redacted !== value ? redacted : maskSecretId(value);
    }
    case 'walk':
      if (CREDENTIAL_KEY.test(key)) return redactCredential(value, seen, depth + 1);
      return redactValue(value, seen, depth + 1);
  }
}

/**
 * A credential container: a SecretId-like field is masked, nested objects and arrays get the same treatment,
 * and every other value becomes `[REDACTED]`, whatever its key says (a field named `key` or `value` carries the
 * secret as surely as one named SecretKey). A credential given as one string cannot be split: all of it goes.
 */
function redactCredential(value: unknown, seen: WeakMap<object, unknown>, depth: number): unknown {
  if (value === undefined || value === null || value === '') return value;
  if (typeof value !== 'object' || value instanceof Date || Buffer.isBuffer(value) || value instanceof Error) return REDACTED;
  if (seen.has(value)) return seen.get(value) ?? '[Circular]';
  if (depth > MAX_DEPTH) return '[Truncated]';
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(redactCredential(item, seen, depth + 1));
    return out;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, v] of Object.entries(value)) {
    out[key] = keyRule(key) === 'secretId' && typeof v === 'string' ? redactEntry(key, v, seen, depth) : redactCredential(v, seen, depth + 1);
  }
  return out;
}

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
      copy[key] = redactEntry(key, (value as unknown as Record<string, unknown>)[key], seen, depth);
    }
    if ('cause' in value) copy['cause'] = redactValue(value.cause, seen, depth + 1);
    return copy;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, v] of Object.entries(value)) out[key] = redactEntry(key, v, seen, depth);
  return out;
}

/**
 * Returns a copy of `value` (string, plain object, array, Error) with the policy above applied. Never
 * throws; cycles are kept; applying it twice gives the same result as once.
 */
export function redactSecrets<T>(value: T): T {
  return redactValue(value, new WeakMap(), 0) as T;
}
