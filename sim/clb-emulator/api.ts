import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { findAction } from './actions/index.js';
import type { EmulatorCore } from './emulator.js';
import { ApiError, missingParameter } from './errors.js';
import { UNAUTHENTICATED_CALLER } from './options.js';
import { isRecord } from './params.js';
import { verifyTc3 } from './signature.js';

/**
 * One Tencent Cloud API 3.0 request, start to finish (tencent-cloud.md §4):
 * envelope checks → TC3 signature → version → region → action → per-action rate limit → faults → action.
 * Rate limiting comes after authentication (an unauthenticated flood does not eat the account's quota) and before
 * faults, so a throttled call never consumes a fault draw.
 */

export const API_VERSION = '2018-03-17';

export interface ApiRequest {
  method: string;
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type ApiOutcome =
  | { kind: 'json'; body: { Response: Record<string, unknown> } }
  | { kind: 'http'; status: number }
  | { kind: 'reset' };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function parseParams(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('InvalidParameter.FormatError', 'The request body is not valid JSON.');
  }
  if (!isRecord(parsed)) throw new ApiError('InvalidParameter.FormatError', 'The request body must be a JSON object.');
  return parsed;
}

export async function handleApiRequest(core: EmulatorCore, req: ApiRequest): Promise<ApiOutcome> {
  const requestId = randomUUID();
  const action = header(req.headers, 'x-tc-action');
  const statsKey = action ?? '(none)';
  if (action) core.stats.call(action);
  // Attribution: a request counts for the caller of its SecretId only once the signature proved it holds the key.
  let caller = UNAUTHENTICATED_CALLER;
  const finish = (outcome: string, result: ApiOutcome): ApiOutcome => {
    if (action) core.stats.outcome(caller, action, outcome);
    return result;
  };
  try {
    if (req.method !== 'POST') {
      throw new ApiError('UnsupportedProtocol', 'The emulator accepts only POST requests (the SDK default reqMethod).');
    }
    const contentType = header(req.headers, 'content-type') ?? '';
    if (!contentType.toLowerCase().startsWith('application/json')) {
      throw new ApiError('InvalidParameter.FormatError', 'Content-Type must be application/json (TC3 POST).');
    }
    if (!action) throw missingParameter('X-TC-Action');

    const verified = verifyTc3({
      method: req.method,
      path: req.path,
      query: req.query,
      headers: req.headers,
      body: req.body,
      accounts: core.options.accounts,
      nowSec: Math.floor(Date.now() / 1000),
      maxSkewSec: core.options.maxClockSkewSec,
    });
    caller = core.options.callerOf[verified.secretId] ?? verified.secretId;

    const version = header(req.headers, 'x-tc-version');
    if (!version) throw missingParameter('X-TC-Version');
    if (version !== API_VERSION) {
      throw new ApiError('NoSuchVersion', `The API version \`${version}\` does not exist; CLB speaks ${API_VERSION}.`);
    }
    const region = header(req.headers, 'x-tc-region');
    if (region !== undefined && region !== core.options.region) {
      throw new ApiError('InvalidParameter.RegionNotFound', `Region \`${region}\` is not served (the emulator serves ${core.options.region}).`);
    }
    const def = findAction(action);
    if (!def) throw new ApiError('InvalidAction', `The action \`${action}\` is not found or not supported by the CLB emulator.`);

    try {
      core.throttle.admit(action);
    } catch (err) {
      core.stats.throttled(action);
      throw err;
    }

    const fault = core.faults.decide(action, def.async, faultTargets(req.body), caller);
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    if (fault.terminal?.kind === 'error') throw new ApiError(fault.terminal.code, fault.terminal.message);
    if (fault.terminal?.kind === 'http5xx') {
      core.stats.error(statsKey, `HTTP${fault.terminal.status}`);
      return finish(`HTTP${fault.terminal.status}`, { kind: 'http', status: fault.terminal.status });
    }
    if (fault.terminal?.kind === 'reset') {
      core.stats.error(statsKey, 'ConnectionReset');
      return finish('ConnectionReset', { kind: 'reset' });
    }

    const params = parseParams(req.body);
    const nowMs = Date.now();
    core.tasks.settleDue(nowMs);
    const result = def.run({ core, requestId, taskFailure: fault.taskFailure, nowMs, caller }, params);
    return finish('OK', { kind: 'json', body: { Response: { ...result, RequestId: requestId } } });
  } catch (err) {
    const apiError =
      err instanceof ApiError ? err : new ApiError('InternalError', 'An internal error occurred in the CLB emulator.');
    if (!(err instanceof ApiError)) core.options.log(`clb-emulator: internal error in ${statsKey}: ${String(err)}`);
    core.stats.error(statsKey, apiError.code);
    return finish(apiError.code, {
      kind: 'json',
      body: { Response: { Error: { Code: apiError.code, Message: apiError.message }, RequestId: requestId } },
    });
  }
}

/** The CLB ids a request names (`LoadBalancerId`, `LoadBalancerIds`), for faults aimed at one CLB; parse errors surface later. */
function faultTargets(body: Buffer): string[] {
  try {
    const p = JSON.parse(body.toString('utf8') || '{}') as { LoadBalancerId?: unknown; LoadBalancerIds?: unknown };
    const ids = Array.isArray(p.LoadBalancerIds) ? p.LoadBalancerIds : [];
    return [p.LoadBalancerId, ...ids].filter((x): x is string => typeof x === 'string');
  } catch {
    return [];
  }
}
