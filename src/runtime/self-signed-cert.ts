// A self-signed serving certificate made at start-up, for the metrics endpoint's TLS when no certificate is given
// (what controller-runtime's metrics server does by default since v0.16: client-go's GenerateSelfSignedCertKey).
// Node can sign but not build an X.509 certificate, so the few DER structures of RFC 5280 are written here: an
// ECDSA P-256 key, version 3, SubjectAltName for the names the server is reached by, valid for one year (why TLS, and
// how scrapers verify it or not: docs/security.md "Metrics").
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

export interface ServingCert {
  /** PEM. */
  cert: string;
  /** PEM (PKCS#8). */
  key: string;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  if (n > 0xffff) throw new Error('DER value too long');
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const seq = (...c: Buffer[]) => der(0x30, ...c);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime (RFC 5280 §4.1.2.5.1: dates before 2050), seconds precision. */
function utcTime(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-11-25T21:45:22.000Z
  return der(0x17, Buffer.from(`${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`, 'ascii'));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  // IPv6: expand "::" and write eight 16-bit groups.
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.concat(groups.map((g) => Buffer.from([parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff])));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), der(0x04, value));
}

/** A certificate for `names` (DNS names and IP addresses; the first is the subject's common name). */
export function selfSignedCert(names: readonly string[], now = new Date(), days = 365): ServingCert {
  if (names.length === 0) throw new Error('a serving certificate needs at least one name');
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const name = seq(der(0x31, seq(oid(OID.commonName), der(0x0c, Buffer.from(names[0]!, 'utf8')))));
  const serial = randomBytes(16);
  // A positive INTEGER in its minimal form: the high bit clear (else it reads negative) and the first byte not zero
  // (a leading zero byte before a byte < 0x80 is not minimal DER, which OpenSSL refuses: "illegal padding", once in
  // about 256 certificates before this).
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const san = seq(...names.map((n) => (isIP(n) ? der(0x87, ipBytes(n)) : der(0x82, Buffer.from(n, 'ascii')))));
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))), // v3
    der(0x02, serial),
    algorithm,
    name,
    seq(utcTime(new Date(now.getTime() - 60 * 60_000)), utcTime(new Date(now.getTime() + days * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(
      0xa3,
      seq(
        extension(OID.basicConstraints, true, seq()), // CA: false
        extension(OID.keyUsage, true, der(0x03, Buffer.from([0x07, 0x80]))), // digitalSignature
        extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
        extension(OID.subjectAltName, false, san),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey); // DER ECDSA-Sig-Value
  const cert = seq(tbs, algorithm, der(0x03, Buffer.from([0]), signature));
  const pem = cert.toString('base64').replace(/.{1,64}/g, '$&\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${pem}-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
