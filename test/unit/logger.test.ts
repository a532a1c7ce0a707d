// The logger's own concerns: JSON lines, Errors that survive JSON, and every field (the message included)
// passed through the shared redaction policy, which cloud-redact.test.ts pins.
import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { redactSecrets } from '../../src/cloud/redact.js';
import { createLogger } from '../../src/runtime/logger.js';

async function logLine(write: (log: ReturnType<typeof createLogger>) => void): Promise<Record<string, unknown>> {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (d: Buffer) => (out += d.toString()));
  write(createLogger({ stream }));
  await new Promise((r) => setImmediate(r));
  return JSON.parse(out.trim()) as Record<string, unknown>;
}

describe('logger', () => {
  it('cuts client-node API errors to status and message: no response headers in any field', async () => {
    const { ApiException } = await import('@kubernetes/client-node');
    const err = new ApiException(404, 'Not Found', JSON.stringify({ kind: 'Status', message: 'namespaces "x" not found' }), { 'audit-id': 'abc', 'x-kubernetes-pf-flowschema-uid': 'def' });
    const line = await logLine((log) => log.warn('Lease failed', { error: err, nested: { text: err.message } }));
    const text = JSON.stringify(line);
    expect(text).toContain('namespaces \\"x\\" not found');
    expect(text).not.toMatch(/audit-id|flowschema|HTTP-Code|Headers:/);
  });

  it('writes JSON lines with every field, the message included, redacted by the shared policy', async () => {
    const meta = {
      target: 'default/web',
      credential: { secretId: 'AKIDexample00000000000000000000001', secretKey: 'SUPERSECRETKEY' },
      headers: { Authorization: 'TC3-HMAC-SHA256 Credential=AKIDexample/...Signature=abc' },
      token: 'bearer-xyz',
    };
    const line = await logLine((log) => log.info('Reconciled with AKIDexample00000000000000000000001', meta));
    const { level, timestamp, ...rest } = line;
    expect(level).toBe('info');
    expect(typeof timestamp).toBe('string');
    expect(rest).toEqual(redactSecrets({ message: 'Reconciled with AKIDexample00000000000000000000001', ...meta }));
    expect(rest).toMatchObject({ target: 'default/web', message: 'Reconciled with AKIDexam***', token: '[REDACTED]' });
  });

  it('keeps the name and message of an Error field, redacted', async () => {
    const line = await logLine((log) => log.warn('Reconcile failed', { e: new Error('boom with password=hunter2') }));
    expect(line.e).toEqual({ name: 'Error', message: 'boom with password=[REDACTED]' });
  });
});
