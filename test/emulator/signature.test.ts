/** TC3-HMAC-SHA256 verification and the API 3.0 envelope (tencent-cloud.md §4), through the real SDK. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AbstractClient } from 'tencentcloud-sdk-nodejs/tencentcloud/common/abstract_client.js';
import http from 'node:http';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { DEFAULT_TEST_CREDENTIALS, startClbEmulator } from '../../sim/clb-emulator/index.js';
import { clbClient, expectSdkError, rawSignedCall } from './support.js';

let emu: ClbEmulator;

beforeAll(async () => {
  // The first account is the one `emu.credentials` reports.
  emu = await startClbEmulator({
    accounts: { [DEFAULT_TEST_CREDENTIALS.secretId]: DEFAULT_TEST_CREDENTIALS.secretKey, AKIDsecond: 'second-key' },
  });
});
afterAll(() => emu.close());

describe('signature verification', () => {
  it('accepts a request signed by the SDK with scope service "127" and answers with the envelope', async () => {
    const res = await clbClient(emu).DescribeLoadBalancers({});
    expect(res.TotalCount).toBe(0);
    expect(res.LoadBalancerSet).toEqual([]);
    expect(res.RequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('binds to 127.0.0.1 and exposes the SDK endpoint and the default test account', () => {
    expect(emu.credentials).toEqual(DEFAULT_TEST_CREDENTIALS);
    expect(emu.endpoint).toBe(`127.0.0.1:${emu.port}`);
    expect(emu.url).toBe(`http://127.0.0.1:${emu.port}`);
    expect(emu.region).toBe('ap-guangzhou');
  });

  it('accepts every configured account', async () => {
    const res = await clbClient(emu, { secretId: 'AKIDsecond', secretKey: 'second-key' }).DescribeLoadBalancers({});
    expect(res.TotalCount).toBe(0);
  });

  it('rejects a wrong SecretKey with AuthFailure.SignatureFailure', async () => {
    const client = clbClient(emu, { secretId: emu.credentials.secretId, secretKey: 'wrong' });
    await expectSdkError(client.DescribeLoadBalancers({}), 'AuthFailure.SignatureFailure');
  });

  it('rejects the key of another account with AuthFailure.SignatureFailure', async () => {
    const client = clbClient(emu, { secretId: emu.credentials.secretId, secretKey: 'second-key' });
    await expectSdkError(client.DescribeLoadBalancers({}), 'AuthFailure.SignatureFailure');
  });

  it('rejects an unknown SecretId with AuthFailure.SecretIdNotFound', async () => {
    const client = clbClient(emu, { secretId: 'AKIDnobody', secretKey: 'x' });
    await expectSdkError(client.DescribeLoadBalancers({}), 'AuthFailure.SecretIdNotFound');
  });

  it('accepts a hand-signed request made with the SDK signer (control for the crafted cases below)', async () => {
    const res = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', body: { Limit: 5 } });
    expect(res.Response.Error).toBeUndefined();
    expect(res.Response['TotalCount']).toBe(0);
  });

  it('rejects a timestamp more than 5 minutes old with AuthFailure.SignatureExpire', async () => {
    const old = Math.floor(Date.now() / 1000) - 301;
    const res = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', timestamp: old });
    expect(res.Response.Error?.Code).toBe('AuthFailure.SignatureExpire');
  });

  it('rejects a timestamp more than 5 minutes in the future with AuthFailure.SignatureExpire', async () => {
    const future = Math.floor(Date.now() / 1000) + 400;
    const res = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', timestamp: future });
    expect(res.Response.Error?.Code).toBe('AuthFailure.SignatureExpire');
  });

  it('accepts the real service name "clb" in the credential scope, and rejects another service', async () => {
    const clb = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', service: 'clb' });
    expect(clb.Response.Error).toBeUndefined();
    const cvm = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', service: 'cvm' });
    expect(cvm.Response.Error?.Code).toBe('AuthFailure.SignatureFailure');
  });

  it('rejects a body changed after signing (payload hash is verified)', async () => {
    const res = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', body: { Limit: 5 }, tamperBody: '{"Limit":6}' });
    expect(res.Response.Error?.Code).toBe('AuthFailure.SignatureFailure');
  });

  it('rejects a missing or garbled Authorization header with AuthFailure.InvalidAuthorization', async () => {
    const missing = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', authorization: null });
    expect(missing.Response.Error?.Code).toBe('AuthFailure.InvalidAuthorization');
    const garbled = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', authorization: 'TC3-HMAC-SHA256 nonsense' });
    expect(garbled.Response.Error?.Code).toBe('AuthFailure.InvalidAuthorization');
    const otherAlgo = await rawSignedCall(emu, { action: 'DescribeLoadBalancers', authorization: 'HMAC-SHA1 Credential=a/b/c/tc3_request' });
    expect(otherAlgo.Response.Error?.Code).toBe('AuthFailure.InvalidAuthorization');
  });
});

describe('envelope', () => {
  it('answers an unknown action with InvalidAction', async () => {
    const err = await expectSdkError(clbClient(emu).request('NoSuchAction', {}), 'InvalidAction');
    expect(err.message).toContain('NoSuchAction');
    expect(err.requestId).not.toBe('');
  });

  it('answers another API version with NoSuchVersion (SDK AbstractClient with a different version)', async () => {
    const client = new AbstractClient('clb.tencentcloudapi.com', '2017-03-12', {
      credential: emu.credentials,
      region: emu.region,
      profile: { httpProfile: { protocol: 'http://', endpoint: emu.endpoint, agent: new http.Agent() } },
    });
    await expectSdkError(client.request('DescribeLoadBalancers', {}), 'NoSuchVersion');
  });

  it('answers a region it does not serve with InvalidParameter.RegionNotFound', async () => {
    await expectSdkError(clbClient(emu, emu.credentials, 'ap-shanghai').DescribeLoadBalancers({}), 'InvalidParameter.RegionNotFound');
  });

  it('rejects parameters it does not model with UnknownParameter', async () => {
    const err = await expectSdkError(clbClient(emu).request('DescribeLoadBalancers', { Bogus: 1 }), 'UnknownParameter');
    expect(err.message).toContain('Bogus');
  });

  it('rejects wrongly typed parameters with InvalidParameter.FormatError', async () => {
    await expectSdkError(clbClient(emu).request('DescribeLoadBalancers', { Limit: 'ten' }), 'InvalidParameter.FormatError');
  });

  it('serves 404 JSON for other paths', async () => {
    const res = await fetch(`${emu.url}/v2/whatever`, { method: 'POST' });
    expect(res.status).toBe(404);
  });
});
