import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { createLogger, redact } from '../../src/runtime/logger.js';

describe('logger', () => {
  it('writes JSON lines and never the values of secret-looking keys, at any depth', async () => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (d: Buffer) => (out += d.toString()));
    const log = createLogger({ stream });
    log.info('Reconciled', {
      target: 'default/web',
      credential: { secretId: 'AKIDexample', secretKey: 'SUPERSECRETKEY' },
      headers: { Authorization: 'TC3-HMAC-SHA256 Credential=AKIDexample/...Signature=abc' },
      token: 'bearer-xyz',
    });
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(out.trim()) as Record<string, unknown>;
    expect(line.message).toBe('Reconciled');
    expect(line.target).toBe('default/web');
    expect(out).not.toContain('SUPERSECRETKEY');
    expect(out).not.toContain('Signature=abc');
    expect(out).not.toContain('bearer-xyz');
    // Identifiers stay visible: they are what an operator needs to debug a CAM problem.
    expect(out).toContain('AKIDexample');
  });

  it('redact keeps non-secret structure and summarises errors', () => {
    expect(redact({ a: [{ password: 'p', b: 1 }], e: new Error('boom') })).toEqual({
      a: [{ password: '[REDACTED]', b: 1 }],
      e: { name: 'Error', message: 'boom' },
    });
  });
});
