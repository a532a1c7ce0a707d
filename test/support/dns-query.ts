// One DNS question over UDP, the answer read as it is on the wire (RFC 1035 §4): the DNS test
// (test/integration/coredns.test.ts) asserts what a stub resolver checks (the response's question is the one asked,
// each answer record's owner name) and the response code, which Node's resolver folds into error strings or, for a
// record whose owner name is not the one asked, silently drops.
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

export const Rcode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

export interface DnsRecord {
  name: string;
  type: number;
  ttl: number;
  /** A records: the address; other types: the rdata in hex. */
  data: string;
}

export interface DnsAnswer {
  rcode: number;
  /** The response's question name, lower-case without the root dot. */
  question: string;
  answers: DnsRecord[];
}

const TYPE_A = 1;

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.');
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')])), Buffer.from([0])]);
}

/** A name at `offset`, following compression pointers; returns it and the offset after it in the record. */
function readName(msg: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let next = -1;
  let at = offset;
  for (let hops = 0; hops < 64; hops++) {
    const len = msg.readUInt8(at);
    if (len === 0) return { name: labels.join('.').toLowerCase(), next: next === -1 ? at + 1 : next };
    if ((len & 0xc0) === 0xc0) {
      if (next === -1) next = at + 2;
      at = msg.readUInt16BE(at) & 0x3fff;
      continue;
    }
    labels.push(msg.toString('ascii', at + 1, at + 1 + len));
    at += 1 + len;
  }
  throw new Error('DNS name compression loop');
}

export function parseResponse(msg: Buffer): DnsAnswer {
  const rcode = msg.readUInt16BE(2) & 0x000f;
  const qd = msg.readUInt16BE(4);
  const an = msg.readUInt16BE(6);
  let at = 12;
  let question = '';
  for (let i = 0; i < qd; i++) {
    const q = readName(msg, at);
    if (i === 0) question = q.name;
    at = q.next + 4;
  }
  const answers: DnsRecord[] = [];
  for (let i = 0; i < an; i++) {
    const { name, next } = readName(msg, at);
    const type = msg.readUInt16BE(next);
    const ttl = msg.readUInt32BE(next + 4);
    const len = msg.readUInt16BE(next + 8);
    const rdata = msg.subarray(next + 10, next + 10 + len);
    answers.push({ name, type, ttl, data: type === TYPE_A && len === 4 ? [...rdata].join('.') : rdata.toString('hex') });
    at = next + 10 + len;
  }
  return { rcode, question, answers };
}

function question(name: string): { id: number; query: Buffer } {
  const id = randomBytes(2);
  const header = Buffer.from([id[0]!, id[1]!, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return { id: id.readUInt16BE(0), query: Buffer.concat([header, encodeName(name), Buffer.from([0, TYPE_A, 0, 1])]) };
}

/**
 * Asks 127.0.0.1:port for the A records of `name`, recursion desired, as a pod's stub resolver does: over UDP, or
 * over TCP (RFC 1035 §4.2.2: each message after its 2-byte length), as NodeLocal DNSCache reaches CoreDNS.
 */
export function queryA(port: number, name: string, { tcp = false, timeoutMs = 2000 }: { tcp?: boolean; timeoutMs?: number } = {}): Promise<DnsAnswer> {
  const { id, query } = question(name);
  return new Promise((resolve, reject) => {
    let close = (): void => undefined;
    let settled = false;
    const timer = setTimeout(() => done(new Error(`no DNS answer for ${name} from 127.0.0.1:${port} (${tcp ? 'TCP' : 'UDP'}) within ${timeoutMs} ms`)), timeoutMs);
    const done = (err: unknown, msg?: Buffer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      close();
      if (err !== undefined) return reject(err instanceof Error ? err : new Error(String(err)));
      try {
        resolve(parseResponse(msg!));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    };
    if (tcp) {
      const socket = connect(port, '127.0.0.1');
      close = () => socket.destroy();
      let got = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) done(undefined, got.subarray(2, 2 + got.readUInt16BE(0)));
      });
      socket.on('error', (err) => done(err));
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.write(Buffer.concat([length, query]));
      return;
    }
    const socket = createSocket('udp4');
    close = () => socket.close();
    socket.on('message', (msg) => {
      if (msg.readUInt16BE(0) === id) done(undefined, msg);
    });
    socket.on('error', (err) => done(err));
    socket.send(query, port, '127.0.0.1');
  });
}

/** The A addresses in an answer owned by `name` (what a stub resolver accepts), sorted. */
export function addressesOf(answer: DnsAnswer, name: string): string[] {
  return answer.answers.filter((r) => r.type === TYPE_A && r.name === name.toLowerCase().replace(/\.$/, '')).map((r) => r.data).sort();
}
