import { describe, expect, it } from '@jest/globals';
import { redactSecrets, registerSecret } from '../../src/cloud/credentials.js';

describe('redactSecrets', () => {
  it('redacts values under sensitive keys, deeply', () => {
    const out = redactSecrets({
      region: 'ap-guangzhou',
      credential: { secretId: 'AKIDxxxxxxxxxxxxxxxx', secretKey: 'k' },
      headers: { Authorization: 'TC3-HMAC-SHA256 Credential=AKID1/2024-01-01/clb/tc3_request, SignedHeaders=content-type;host, Signature=abc', 'X-TC-Token': 'tok' },
      list: [{ SecretKey: 'nested' }],
      LoadBalancerId: 'lb-1',
      TagKey: 'team',
    });
    expect(out).toEqual({
      region: 'ap-guangzhou',
      credential: '[REDACTED]',
      headers: { Authorization: '[REDACTED]', 'X-TC-Token': '[REDACTED]' },
      list: [{ SecretKey: '[REDACTED]' }],
      LoadBalancerId: 'lb-1',
      TagKey: 'team',
    });
  });

  it('redacts secrets inside strings by pattern', () => {
    const text = [
      'Authorization: TC3-HMAC-SHA256 Credential=AKIDabcdefghij1234/2024-01-01/clb/tc3_request, SignedHeaders=content-type;host, Signature=0123456789abcdef0123456789abcdef',
      '[default]\nsecret_id = AKIDabcdefghij1234\nsecret_key = s3cr3tValueHere',
      'TENCENTCLOUD_SECRET_KEY=anotherSecret123 TENCENTCLOUD_SESSION_TOKEN=tokenvalue',
      '{"secretKey":"jsonSecret999"}',
    ].join('\n');
    const out = redactSecrets(text);
    for (const leaked of ['AKIDabcdefghij1234', 's3cr3tValueHere', 'anotherSecret123', 'tokenvalue', 'jsonSecret999', '0123456789abcdef0123']) {
      expect(out).not.toContain(leaked);
    }
    expect(out).toContain('[REDACTED]');
  });

  it('redacts registered credential values wherever they appear', () => {
    registerSecret('Registered-Secret-Value-42');
    registerSecret('short'); // too short to register: would mangle ordinary text
    expect(redactSecrets('the key is Registered-Secret-Value-42, ok')).toBe('the key is [REDACTED], ok');
    expect(redactSecrets({ note: 'x Registered-Secret-Value-42' })).toEqual({ note: 'x [REDACTED]' });
    expect(redactSecrets('short stays')).toBe('short stays');
  });

  it('keeps Errors as Errors with redacted message and stack, and survives cycles', () => {
    registerSecret('Error-Secret-Value-77');
    const err = new Error('failed with Error-Secret-Value-77');
    const out = redactSecrets(err);
    expect(out).toBeInstanceOf(Error);
    expect(out.message).toBe('failed with [REDACTED]');
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
    expect(redactSecrets('ModifyListener lb-1 AuthFailure.TokenFailure')).toBe('ModifyListener lb-1 AuthFailure.TokenFailure');
  });
});
