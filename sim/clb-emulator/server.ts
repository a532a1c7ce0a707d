import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClbAdminClient } from './admin-client.js';
import { handleAdminRequest } from './admin.js';
import { handleApiRequest } from './api.js';
import { EmulatorCore } from './emulator.js';
import type { EmulatorOptions } from './options.js';
import { resolveOptions } from './options.js';

/** Loopback only: the admin API is unauthenticated and the accounts are test accounts. */
export const EMULATOR_HOST = '127.0.0.1';

const MAX_BODY_BYTES = 1024 * 1024;

export interface ClbEmulator {
  port: number;
  /** `127.0.0.1:PORT` — pass as `profile.httpProfile.endpoint` with `protocol: "http://"`. */
  endpoint: string;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The first configured pair (`callers[0]`, else the first of `accounts`, else the default test account). */
  credentials: { secretId: string; secretKey: string };
  /** Caller name → its first configured pair, for handing each client its own credentials. */
  callers: Record<string, { secretId: string; secretKey: string }>;
  region: string;
  admin: ClbAdminClient;
  close(): Promise<void>;
}

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown, traceId?: string): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(payload),
    ...(traceId ? { 'X-TC-TraceId': traceId } : {}),
  });
  res.end(payload);
}

async function route(core: EmulatorCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://emulator.invalid');
  const body = await readBody(req);
  if (url.pathname.startsWith('/_admin/')) {
    const out = handleAdminRequest(core, req.method ?? 'GET', url.pathname, body);
    sendJson(res, out.status, out.body);
    return;
  }
  if (url.pathname !== '/') {
    sendJson(res, 404, { error: `no route ${url.pathname}; the API is served at "/" and the admin API under "/_admin/"` });
    return;
  }
  const traceHeader = req.headers['x-tc-traceid'];
  const traceId = Array.isArray(traceHeader) ? traceHeader[0] : traceHeader;
  const outcome = await handleApiRequest(core, {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.search.slice(1),
    headers: req.headers,
    body,
  });
  switch (outcome.kind) {
    case 'json':
      sendJson(res, 200, outcome.body, traceId);
      return;
    case 'http':
      res.writeHead(outcome.status, { 'Content-Type': 'text/plain' });
      res.end('Service Unavailable (injected fault)');
      return;
    case 'reset':
      req.socket.destroy();
      return;
  }
}

export async function startClbEmulator(options?: Partial<EmulatorOptions>): Promise<ClbEmulator> {
  const resolved = resolveOptions(options);
  const core = new EmulatorCore(resolved);
  const server = createServer((req, res) => {
    route(core, req, res).catch((err: unknown) => {
      if (err instanceof BodyTooLarge) {
        sendJson(res, 413, { error: `body exceeds ${MAX_BODY_BYTES} bytes` });
        return;
      }
      resolved.log(`clb-emulator: request failed: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal emulator error' });
      else res.destroy();
    });
  });
  server.listen(resolved.port, EMULATOR_HOST);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const endpoint = `${EMULATOR_HOST}:${port}`;
  const url = `http://${endpoint}`;
  const { secretId, secretKey } = resolved.callers[0] ?? { secretId: '', secretKey: '' };
  const callers: ClbEmulator['callers'] = {};
  for (const c of resolved.callers) callers[c.caller] ??= { secretId: c.secretId, secretKey: c.secretKey };

  let closed: Promise<void> | undefined;
  return {
    port,
    endpoint,
    url,
    credentials: { secretId, secretKey },
    callers,
    region: resolved.region,
    admin: new ClbAdminClient(url),
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        core.close();
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets (node-fetch, undici) would hold close() open.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
