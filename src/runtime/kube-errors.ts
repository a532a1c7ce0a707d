// The apiserver's errors as one short line. client-node's ApiException message is four lines —
// "HTTP-Code: 404\nMessage: Unknown API Status Code!\nBody: \"{…Status…}\"\nHeaders: {…}" — and most of it is
// response headers (audit ids, dates, flow-control uids) that say nothing to a person. What does say
// something is the status code and the apiserver's own sentence (Status.message), so that is all we log.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';

/** The HTTP status of an apiserver error, if it is one. */
export function kubeStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** What `request` answers, or undefined when the apiserver answers 404 (the object is not there). */
export async function ifFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (kubeStatus(err) === 404) return undefined;
    throw err;
  }
}

/** A response body that may be a Status object, its JSON text, or that text JSON-encoded again, decoded. */
function decodeBody(body: unknown): unknown {
  let value = body;
  for (let i = 0; i < 2 && typeof value === 'string'; i++) {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      break;
    }
  }
  return value;
}

/** Status.details.kind of an apiserver error (`namespaces`, `leases`, …): what the error is about. */
export function kubeStatusKind(err: unknown): string | undefined {
  if (!(err instanceof ApiException)) return undefined;
  // A string or a number has no `details`; a Status's `details` is an object or absent.
  const kind = (decodeBody(err.body) as { details?: { kind?: unknown } } | null | undefined)?.details?.kind;
  return typeof kind === 'string' ? kind : undefined;
}

/** Status.message from a response body that may be a Status object, its JSON text, or that text JSON-encoded again. */
function statusMessage(body: unknown): string | undefined {
  const value = decodeBody(body);
  const message = (value as { message?: unknown } | null | undefined)?.message;
  if (typeof message === 'string') return message;
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 300) : undefined;
}

/** `HTTP 404: namespaces "x" not found` for apiserver errors, the first line of the message otherwise. */
export function kubeErrorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const said = statusMessage(err.body);
    return `HTTP ${err.code}${said ? `: ${said}` : ''}`;
  }
  const text = err instanceof Error ? err.message : String(err);
  return scrubApiExceptionText(text).split('\n')[0] ?? '';
}

// ApiException's message layout (client-node 2.x dist/gen/apis/exception.js); JSON.stringify never emits raw newlines.
const DUMP = /HTTP-Code: (\d+)\nMessage: ([^\n]*)\nBody: ([^\n]*)\nHeaders: [^\n]*/g;

/** Replaces every ApiException dump inside `text` (it may be wrapped in another message) by its short form. */
export function scrubApiExceptionText(text: string): string {
  if (!text.includes('HTTP-Code: ')) return text;
  return text.replace(DUMP, (_all, code: string, message: string, body: string) => {
    const said = statusMessage(body) ?? (message && message !== 'Unknown API Status Code!' ? message : undefined);
    return `HTTP ${code}${said ? `: ${said}` : ''}`;
  });
}

/** Walks a log entry's values (bounded depth) and shortens every ApiException dump it finds. */
export function scrubLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubApiExceptionText(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return value.message.includes('HTTP-Code: ') ? { name: value.name, message: kubeErrorMessage(value) } : value;
  }
  if (Array.isArray(value)) return value.map((v) => scrubLogValue(v, depth + 1));
  // Only plain objects are rebuilt: a Date or a class instance would lose what makes it one.
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubLogValue(v, depth + 1);
  return out;
}
