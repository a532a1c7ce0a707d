/**
 * Shared helpers for the CLB emulator suites. Everything goes through the real, unmodified
 * tencentcloud-sdk-nodejs client; the only configuration is the endpoint/protocol and an explicit http.Agent
 * (which also stops the SDK from picking up an `http_proxy` from the environment).
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from '@jest/globals';
import { Client } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_client.js';
import type { DescribeTaskStatusResponse } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import exceptionModule from 'tencentcloud-sdk-nodejs/tencentcloud/common/exception/tencent_cloud_sdk_exception.js';
import signModule from 'tencentcloud-sdk-nodejs/tencentcloud/common/sign.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';

export type ClbClient = Client;

/** The package is CJS without an exports map: in ESM the default import is `module.exports`, the class its `.default`. */
export const TencentCloudSDKHttpException = exceptionModule.default;
export const Sign = signModule.default;

export function clbClient(emu: ClbEmulator, credential = emu.credentials, region = emu.region): Client {
  return new Client({
    credential,
    region,
    profile: { httpProfile: { protocol: 'http://', endpoint: emu.endpoint, agent: new http.Agent(), reqTimeout: 10 } },
  });
}

export interface SdkError {
  code?: string;
  httpCode?: number;
  message: string;
  requestId: string;
}

/** Awaits a rejection that must be the SDK's exception class, and checks its `.code`. */
export async function expectSdkError(promise: Promise<unknown>, code: string | undefined): Promise<SdkError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TencentCloudSDKHttpException);
  const err = caught as SdkError;
  expect(err.code).toBe(code);
  return err;
}

/** Resolves with the outcome code of a call: `OK` or the SDK error code (for sequence comparisons). */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (err) {
    if (!(err instanceof TencentCloudSDKHttpException)) throw err;
    return err.code ?? `HTTP${String(err.httpCode ?? '?')}`;
  }
}

/**
 * Polls until `check` returns a value (not undefined) or the deadline passes. No fixed sleeps in tests.
 * The default interval keeps a poller at 10 rps, under the emulator's 20 rps per-action limit.
 */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 5000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Polls DescribeTaskStatus until the task leaves Status 2. */
export async function waitForTask(client: Client, taskId: string, timeoutMs = 5000): Promise<DescribeTaskStatusResponse> {
  return eventually(
    async () => {
      const res = await client.DescribeTaskStatus({ TaskId: taskId });
      return res.Status === 2 ? undefined : res;
    },
    `task ${taskId}`,
    timeoutMs,
  );
}

/** Runs an async write and waits for its task to succeed. */
export async function writeAndWait<T extends { RequestId?: string }>(client: Client, call: Promise<T>): Promise<T> {
  const res = await call;
  const status = await waitForTask(client, res.RequestId ?? '');
  expect(status.Status).toBe(0);
  return res;
}

/** A signed request built with the SDK's own `sign3`, for cases the client cannot produce (old timestamps, bad versions). */
export async function rawSignedCall(
  emu: ClbEmulator,
  opts: {
    action: string;
    body?: Record<string, unknown>;
    timestamp?: number;
    version?: string;
    service?: string;
    secretKey?: string;
    tamperBody?: string;
    authorization?: string | null;
  },
): Promise<{ Response: { Error?: { Code: string; Message: string }; RequestId: string } & Record<string, unknown> }> {
  const url = `${emu.url}/`;
  const payload = opts.body ?? {};
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const authorization = Sign.sign3({
    method: 'POST',
    url,
    payload,
    timestamp,
    service: opts.service ?? '127',
    secretId: emu.credentials.secretId,
    secretKey: opts.secretKey ?? emu.credentials.secretKey,
    multipart: false,
    boundary: '',
    headers,
  });
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      'X-TC-Action': opts.action,
      'X-TC-Version': opts.version ?? '2018-03-17',
      'X-TC-Region': emu.region,
      'X-TC-Timestamp': String(timestamp),
      ...(opts.authorization === null ? {} : { Authorization: opts.authorization ?? authorization }),
    },
    body: opts.tamperBody ?? JSON.stringify(payload),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}
