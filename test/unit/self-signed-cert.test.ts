// The metrics endpoint's self-signed certificate (src/runtime/self-signed-cert.ts): a well-formed X.509 v3 certificate
// that Node's X509Certificate and OpenSSL's verifier accept for the names it lists, and only for them.
import { X509Certificate, createPublicKey } from 'node:crypto';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { selfSignedCert } from '../../src/runtime/self-signed-cert.js';

function get(port: number, options: { ca?: string; servername?: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', ...options }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('selfSignedCert', () => {
  it('is an X.509 v3 certificate for the names given, signed by its own key, valid for a year from an hour ago', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    const { cert, key } = selfSignedCert(['loopguard-metrics.loopguard-system.svc', 'localhost', '10.1.2.3', '::1'], now);
    const x = new X509Certificate(cert);
    expect(x.subject).toBe('CN=loopguard-metrics.loopguard-system.svc');
    expect(x.issuer).toBe(x.subject);
    expect(x.subjectAltName).toBe('DNS:loopguard-metrics.loopguard-system.svc, DNS:localhost, IP Address:10.1.2.3, IP Address:0:0:0:0:0:0:0:1');
    expect(x.verify(createPublicKey(key))).toBe(true);
    expect(x.ca).toBe(false);
    expect(x.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(new Date(x.validFrom).toISOString()).toBe('2026-11-25T11:00:00.000Z');
    expect(new Date(x.validTo).toISOString()).toBe('2027-11-25T12:00:00.000Z');
    expect(x.checkHost('localhost')).toBe('localhost');
    expect(x.checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(x.checkHost('example.com')).toBeUndefined();
    // A new key and serial each time.
    expect(new X509Certificate(selfSignedCert(['localhost']).cert).serialNumber).not.toBe(x.serialNumber);
  });

  it('serves TLS: trusted by a client given it for a name it lists, refused by one that is not given it', async () => {
    const { cert, key } = selfSignedCert(['localhost', '127.0.0.1']);
    const srv = createServer({ cert, key }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as AddressInfo;
    try {
      await expect(get(port, { ca: cert, servername: 'localhost' })).resolves.toBe('ok');
      await expect(get(port, { ca: cert })).resolves.toBe('ok'); // 127.0.0.1, an IP SAN
      await expect(get(port, {})).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
      await expect(get(port, { ca: cert, servername: 'elsewhere.example' })).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    } finally {
      srv.closeAllConnections();
      await new Promise((resolve) => srv.close(resolve));
    }
  });

  it('every certificate is valid DER: the random serial is a minimal positive INTEGER (600 made and parsed)', () => {
    // Before the fix about 1 in 256 serials began with a zero byte before a byte < 0x80, which OpenSSL refuses.
    for (let i = 0; i < 600; i++) {
      const { cert } = selfSignedCert(['127.0.0.1']);
      const serial = new X509Certificate(cert).serialNumber;
      expect({ i, serial: serial.length }).toEqual({ i, serial: 32 });
    }
  });

  it('refuses to make a certificate for no name', () => {
    expect(() => selfSignedCert([])).toThrow(/at least one name/);
  });
});
