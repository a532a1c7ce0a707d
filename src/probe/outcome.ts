// What a probe's end means (docs/probe.md "Outcomes"). A loopback fault shows as a connection that is refused,
// reset or never answered, or as the CLB answering for a backend it could not reach (502 bad gateway, 503 no backend,
// 504 its timeout); an application's own 500 or 501 is an answer, and so not a loopback failure; anything that kept the probe
// from being sent (no route, no local address, no descriptors) is the node's problem, reported as not run, never as
// a loopback failure.
import type { ProbeOutcome } from './window.js';

/** Errors raised before a packet could reach the VIP. */
const NOT_RUN = new Set(['ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'EADDRINUSE', 'EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EACCES', 'EPERM', 'ENETDOWN']);

/** What the CLB itself answers when it cannot reach a backend (the application's other 5xx are answers). */
const CLB_FAILURES: ReadonlySet<number> = new Set([502, 503, 504]);

/** The end of one probe: an error code (or 'ETIMEDOUT' for our own timeout), or the HTTP status for L7. */
export type ProbeEnd = { error: string } | { status?: number };

export function outcomeOf(end: ProbeEnd, ms: number): ProbeOutcome {
  if ('error' in end) return NOT_RUN.has(end.error) ? { kind: 'notRun' } : { kind: 'failed', ms };
  if (end.status !== undefined && CLB_FAILURES.has(end.status)) return { kind: 'failed', ms };
  return { kind: 'ok', ms };
}
