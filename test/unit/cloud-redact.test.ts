// The one redaction policy (src/cloud/redact.ts), used by winston's format and by the cloud layer alike.
// logger.test.ts only checks that the logger applies it; the policy itself is pinned here.
import { describe, expect, it } from '@jest/globals';
import { maskSecretId, redactSecrets, registerSecret } from '../../src/cloud/redact.js';

const ID = 'AKIDabcdefghij1234567890abcdefghij12'; // the shape of a real SecretId: AKID + 32
const MASKED = 'AKIDabcd***';

describe('redactSecrets', () => {
  it('redacts secret keys, tokens, passwords, Authorization headers and signatures by key, at any depth', () => {
    const out = redactSecrets({
      region: 'ap-guangzhou',
      headers: { Authorization: 'TC3-HMAC-SHA256 Credential=AKID1/2024-01-01/clb/tc3_request, SignedHeaders=content-type;host, Signature=abc', 'X-TC-Token': 'tok' },
      list: [{ SecretKey: 'nested', password: 'p', b: 1 }],
      deep: { a: { b: { c: { TmpSecretKey: 'k', Signature: 'sig', apiKey: 'x', privateKey: { pem: '-----BEGIN' } } } } },
      token: 'bearer-xyz',
      LoadBalancerId: 'lb-1',
      TagKey: 'team',
      // Names of where a secret lives are not secrets.
      secretName: 'loopguard-credentials',
      tokenFile: '/var/run/secrets/tke/token',
    });
    expect(out).toEqual({
      region: 'ap-guangzhou',
      headers: { Authorization: '[REDACTED]', 'X-TC-Token': '[REDACTED]' },
      list: [{ SecretKey: '[REDACTED]', password: '[REDACTED]', b: 1 }],
      deep: { a: { b: { c: { TmpSecretKey: '[REDACTED]', Signature: '[REDACTED]', apiKey: '[REDACTED]', privateKey: '[REDACTED]' } } } },
      token: '[REDACTED]',
      LoadBalancerId: 'lb-1',
      TagKey: 'team',
      secretName: 'loopguard-credentials',
      tokenFile: '/var/run/secrets/tke/token',
    });
  });

  it('masks SecretIds to a short prefix wherever they appear: under any key, in credential objects, inside strings', () => {
    expect(maskSecretId(ID)).toBe(MASKED);
    const out = redactSecrets({
      credential: { secretId: ID, secretKey: 'SUPERSECRETKEY' },
      Credentials: { TmpSecretId: ID, TmpSecretKey: 'tmp', Token: 'sts' },
      note: `called with ${ID}, failed`,
      list: [ID],
      // A SecretId under its own key is masked even when it does not look like one.
      secret_id: 'id-not-akid-0001',
    });
    expect(out).toEqual({
      credential: { secretId: MASKED, secretKey: '[REDACTED]' },
      Credentials: { TmpSecretId: MASKED, TmpSecretKey: '[REDACTED]', Token: '[REDACTED]' },
      note: `called with ${MASKED}, failed`,
      list: [MASKED],
      secret_id: 'id-not-a***',
    });
    // A short id under its key never shows more than half of itself.
    expect(redactSecrets({ secretId: 'AKIDexample' })).toEqual({ secretId: 'AKIDe***' });
    // A credential given as one string cannot be split into id and key: all of it goes.
    expect(redactSecrets({ credential: `${ID}:key` })).toEqual({ credential: '[REDACTED]' });
  });

  it('inside a credential container redacts every field but the SecretId, whatever the fields are called', () => {
    expect(redactSecrets({ credential: { secretId: 'AKIDabcd1234', key: 'RAWKEY123456' } })).toEqual({ credential: { secretId: 'AKIDab***', key: '[REDACTED]' } });
    const out = redactSecrets({
      region: 'ap-guangzhou',
      credentials: {
        SecretId: ID,
        value: 'RAWVALUE0001',
        expires: 1700000000,
        parts: ['RAWPART00001', { id: 'RAWID0000001' }],
        nested: { TmpSecretId: ID, k: 'RAWNESTED001' },
        empty: '',
      },
    });
    expect(out).toEqual({
      region: 'ap-guangzhou',
      credentials: {
        SecretId: MASKED,
        value: '[REDACTED]',
        expires: '[REDACTED]',
        parts: ['[REDACTED]', { id: '[REDACTED]' }],
        nested: { TmpSecretId: MASKED, k: '[REDACTED]' },
        // "the key is empty" is what a broken credential setup needs to show.
        empty: '',
      },
    });
    expect(JSON.stringify(out)).not.toMatch(/RAW/);
    expect(redactSecrets(out)).toEqual(out);
  });

  it('redacts secrets inside strings by pattern and masks the SecretIds among them', () => {
    const text = [
      `Authorization: TC3-HMAC-SHA256 Credential=${ID}/2024-01-01/clb/tc3_request, SignedHeaders=content-type;host, Signature=0123456789abcdef0123456789abcdef`,
      `[default]\nsecret_id = ${ID}\nsecret_key = s3cr3tValueHere`,
      'TENCENTCLOUD_SECRET_KEY=anotherSecret123 TENCENTCLOUD_SESSION_TOKEN=tokenvalue',
      '{"secretKey":"jsonSecret999","SecretId":"AKIDjson00000001"}',
      'GET /?Action=DescribeListeners&Signature=fedcba9876543210fedcba9876543210',
      'dsn: postgres://u@db?password=hunter2',
    ].join('\n');
    const out = redactSecrets(text);
    for (const leaked of [ID, 's3cr3tValueHere', 'anotherSecret123', 'tokenvalue', 'jsonSecret999', 'AKIDjson00000001', '0123456789abcdef0123', 'fedcba9876543210', 'hunter2']) {
      expect(out).not.toContain(leaked);
    }
    expect(out.split('\n')).toEqual([
      'Authorization: [REDACTED]',
      '[default]',
      `secret_id = ${MASKED}`,
      'secret_key = [REDACTED]',
      'TENCENTCLOUD_SECRET_KEY=[REDACTED] TENCENTCLOUD_SESSION_TOKEN=[REDACTED]',
      '{"secretKey":"[REDACTED]","SecretId":"AKIDjson***"}',
      'GET /?Action=DescribeListeners&Signature=[REDACTED]',
      'dsn: postgres://u@db?password=[REDACTED]',
    ]);
  });

  it('redacts registered credential values wherever they appear; a registered SecretId is masked', () => {
    registerSecret('Registered-Secret-Value-42');
    registerSecret('short'); // too short to register: would mangle ordinary text
    registerSecret('AKIDregistered000000000000000000001');
    expect(redactSecrets('the key is Registered-Secret-Value-42, ok')).toBe('the key is [REDACTED], ok');
    expect(redactSecrets({ note: 'x Registered-Secret-Value-42' })).toEqual({ note: 'x [REDACTED]' });
    expect(redactSecrets('short stays')).toBe('short stays');
    expect(redactSecrets('id AKIDregistered000000000000000000001 used')).toBe('id AKIDregi*** used');
  });

  it('is idempotent: a cloud log line redacted by safeLog and again by the logger comes out the same', () => {
    const once = redactSecrets({
      message: `ModifyListener with ${ID}`,
      credential: { secretId: ID, secretKey: 'k' },
      secretId: 'id-not-akid-0001',
      header: 'Authorization: TC3-HMAC-SHA256 Credential=x/y, Signature=0123456789abcdef0123',
      ini: `secret_id = ${ID}`,
    });
    expect(redactSecrets(once)).toEqual(once);
  });

  it('keeps Errors as Errors with redacted message and stack, and survives cycles', () => {
    registerSecret('Error-Secret-Value-77');
    const err = new Error(`failed with Error-Secret-Value-77 as ${ID}`);
    const out = redactSecrets(err);
    expect(out).toBeInstanceOf(Error);
    expect(out.message).toBe(`failed with [REDACTED] as ${MASKED}`);
    expect(out.stack).not.toContain('Error-Secret-Value-77');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    const c = redactSecrets(cyclic);
    expect(c['a']).toBe(1);
    expect(c['self']).toBe(c);
  });

  it('leaves ordinary values alone', () => {
    expect(redactSecrets(42)).toBe(42);
    expect(redactSecrets(null)).toBeNull();
    expect(redactSecrets({ token: '', password: undefined })).toEqual({ token: '', password: undefined });
    expect(redactSecrets('ModifyListener lb-1 AuthFailure.TokenFailure')).toBe('ModifyListener lb-1 AuthFailure.TokenFailure');
    expect(redactSecrets('AuthFailure.SecretIdNotFound: the SecretId is not found')).toBe('AuthFailure.SecretIdNotFound: the SecretId is not found');
  });
});
