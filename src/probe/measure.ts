// One probe on the wire (I/O only; what its end means is outcome.ts). L4: a TCP connect, closed as soon as it is
// established. L7: a HEAD request with the target's Host, on a fresh connection that is closed after the status
// line (no body is read, nothing is kept alive). The timeout covers the whole probe, connect included.
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ProbeTarget } from '../api/probe.js';
import type { ProbeEnd } from './outcome.js';

export interface Measured {
  end: ProbeEnd;
  ms: number;
}

export function measure(target: ProbeTarget, timeoutMs: number): Promise<Measured> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let close: () => void = () => {};
    const finish = (end: ProbeEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      close();
      resolve({ end, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish({ error: 'ETIMEDOUT' }), timeoutMs);
    const code = (err: Error) => (err as NodeJS.ErrnoException).code ?? 'EPROTO';
    if (target.protocol === 'TCP') {
      const socket = connect({ host: target.vip, port: target.port });
      close = () => socket.destroy();
      socket.once('connect', () => finish({}));
      socket.once('error', (err) => finish({ error: code(err) }));
      return;
    }
    const options = {
      host: target.vip,
      port: target.port,
      method: 'HEAD',
      path: target.path ?? '/',
      headers: { Host: target.host ?? target.vip, 'User-Agent': 'loopguard-probe', Connection: 'close' },
      agent: false as const,
    };
    // HTTPS: the certificate is not checked. The probe measures whether the VIP answers from this node, sends no
    // credential and reads nothing back but the status, so an untrusted certificate changes nothing it reports. The
    // TLS server name is the Host header's (Node's agent derives it from there), so the CLB picks the host's certificate.
    const req = target.protocol === 'HTTPS' ? httpsRequest({ ...options, rejectUnauthorized: false }) : httpRequest(options);
    close = () => req.destroy();
    req.once('response', (res) => {
      res.resume();
      finish({ status: res.statusCode ?? 0 });
    });
    req.once('error', (err) => finish({ error: code(err) }));
    req.end();
  });
}
