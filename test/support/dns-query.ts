// One DNS question over UDP, the answer read as it is on the wire (RFC 1035 §4): the DNS test
// (test/integration/coredns.test.ts) asserts what a stub resolver checks (the response's question is the one asked,
// each answer record's owner name) and the response code, which Node's resolver folds into error strings or, for a
// record whose owner name is not the one asked, silently drops.
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';

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

/** Asks `server` (127.0.0.1:port) for the A records of `name`, recursion desired, as a pod's stub resolver does. */
export function queryA(port: number, name: string, timeoutMs = 2000): Promise<DnsAnswer> {
  const id = randomBytes(2);
  const header = Buffer.from([id[0]!, id[1]!, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  const query = Buffer.concat([header, encodeName(name), Buffer.from([0, TYPE_A, 0, 1])]);
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no DNS answer for ${name} from 127.0.0.1:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (msg) => {
      if (msg.readUInt16BE(0) !== id.readUInt16BE(0)) return;
      clearTimeout(timer);
      socket.close();
      try {
        resolve(parseResponse(msg));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    });
    socket.send(query, port, '127.0.0.1');
  });
}

/** The A addresses in an answer owned by `name` (what a stub resolver accepts), sorted. */
export function addressesOf(answer: DnsAnswer, name: string): string[] {
  return answer.answers.filter((r) => r.type === TYPE_A && r.name === name.toLowerCase().replace(/\.$/, '')).map((r) => r.data).sort();
}
