import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, missingParameter } from './errors.js';

/**
 * TC3-HMAC-SHA256 verification, mirroring what tencentcloud-sdk-nodejs 4.1.313 signs
 * (tencent-cloud.md §4 "TC3-HMAC-SHA256 exactly as the SDK does it"; `common/sign.js`, `common/http/http_connection.js`).
 *
 * The one quirk worth knowing: the SDK derives the credential-scope *service* as `endpoint.split(".")[0]` of the
 * endpoint string it was configured with, port included. With `127.0.0.1:PORT` that is `127`, with
 * `localhost:PORT` it is `localhost:PORT`. We accept the same derivation from the Host header (which the SDK sets
 * to exactly that endpoint) and, for clients that resolve `clb.tencentcloudapi.com` to us, the real `clb`.
 */

const ALGORITHM = 'TC3-HMAC-SHA256';

export interface VerifiedCaller {
  secretId: string;
}

export interface VerifyInput {
  method: string;
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  accounts: Readonly<Record<string, string>>;
  nowSec: number;
  maxSkewSec: number;
}

interface ParsedAuthorization {
  secretId: string;
  date: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

function invalidAuthorization(detail: string): ApiError {
  return new ApiError('AuthFailure.InvalidAuthorization', `Authorization header is invalid: ${detail}.`);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function parseAuthorization(value: string | undefined): ParsedAuthorization {
  if (!value) throw invalidAuthorization('missing');
  const space = value.indexOf(' ');
  if (space < 0 || value.slice(0, space) !== ALGORITHM) throw invalidAuthorization(`algorithm must be ${ALGORITHM}`);
  const fields = new Map<string, string>();
  for (const part of value.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) throw invalidAuthorization('malformed key=value pair');
    fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) {
    throw invalidAuthorization('Credential, SignedHeaders and Signature are required');
  }
  const scope = credential.split('/');
  if (scope.length !== 4 || scope[3] !== 'tc3_request' || !scope[0] || !scope[1] || !scope[2]) {
    throw invalidAuthorization('Credential must be <SecretId>/<Date>/<service>/tc3_request');
  }
  if (!/^[0-9a-f]{64}$/.test(signature)) throw invalidAuthorization('Signature must be 64 hex characters');
  return {
    secretId: scope[0],
    date: scope[1],
    service: scope[2],
    signedHeaders: signedHeaders.split(';'),
    signature,
  };
}

export function utcDate(timestampSec: number): string {
  return new Date(timestampSec * 1000).toISOString().slice(0, 10);
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** Services the emulator answers to for a given Host header (see the module comment). */
export function acceptedServices(host: string): string[] {
  return [host.split('.')[0] ?? host, 'clb'];
}

/** Host without port, as the SDK puts it in the canonical request (`new URL(url).hostname`). */
function canonicalHost(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    throw invalidAuthorization('Host header is not a valid host');
  }
}

export function canonicalRequest(input: Omit<VerifyInput, 'accounts' | 'nowSec' | 'maxSkewSec'>, signed: string[]): string {
  const host = header(input.headers, 'host') ?? '';
  const lines = signed.map((name) => {
    if (name === 'host') return `host:${canonicalHost(host)}`;
    // content-type is signed verbatim by the SDK; other headers are not signed by it, trimmed/lowercased per TC3.
    const value = header(input.headers, name) ?? '';
    return `${name}:${name === 'content-type' ? value : value.trim().toLowerCase()}`;
  });
  return [
    input.method.toUpperCase(),
    input.path,
    input.query,
    lines.join('\n') + '\n',
    signed.join(';'),
    sha256Hex(input.body),
  ].join('\n');
}

export function signatureFor(secretKey: string, timestamp: number, service: string, canonical: string): string {
  const date = utcDate(timestamp);
  const stringToSign = [ALGORITHM, String(timestamp), `${date}/${service}/tc3_request`, sha256Hex(canonical)].join('\n');
  const kDate = hmac('TC3' + secretKey, date);
  const kService = hmac(kDate, service);
  const kSigning = hmac(kService, 'tc3_request');
  return createHmac('sha256', kSigning).update(stringToSign).digest('hex');
}

/** Throws the `AuthFailure.*` error Tencent would return, or returns the caller. */
export function verifyTc3(input: VerifyInput): VerifiedCaller {
  const auth = parseAuthorization(header(input.headers, 'authorization'));
  if (!auth.signedHeaders.includes('host') || !auth.signedHeaders.includes('content-type')) {
    throw invalidAuthorization('SignedHeaders must include content-type and host');
  }
  const rawTs = header(input.headers, 'x-tc-timestamp');
  if (rawTs === undefined) throw missingParameter('X-TC-Timestamp');
  if (!/^\d+$/.test(rawTs)) throw new ApiError('InvalidParameter.FormatError', 'X-TC-Timestamp must be unix seconds.');
  const timestamp = Number(rawTs);
  if (Math.abs(input.nowSec - timestamp) > input.maxSkewSec) {
    throw new ApiError(
      'AuthFailure.SignatureExpire',
      `Signature expired, timestamp ${timestamp} differs from server time ${input.nowSec} by more than ${input.maxSkewSec}s.`,
    );
  }
  const secretKey = input.accounts[auth.secretId];
  if (secretKey === undefined) {
    throw new ApiError('AuthFailure.SecretIdNotFound', 'The SecretId is not found, please ensure that your SecretId is correct.');
  }
  const services = acceptedServices(header(input.headers, 'host') ?? '');
  if (auth.date !== utcDate(timestamp) || !services.includes(auth.service)) {
    throw new ApiError(
      'AuthFailure.SignatureFailure',
      'The provided credentials could not be validated: credential scope date or service does not match the request.',
    );
  }
  const expected = signatureFor(secretKey, timestamp, auth.service, canonicalRequest(input, auth.signedHeaders));
  if (!timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(auth.signature, 'hex'))) {
    throw new ApiError(
      'AuthFailure.SignatureFailure',
      'The provided credentials could not be validated. Please check your signature is correct.',
    );
  }
  return { secretId: auth.secretId };
}
