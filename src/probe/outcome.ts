// What a probe's end means (docs/probe.md "Outcomes"). A loopback fault shows as a connection that is refused,
// reset or never answered, or as a CLB answering 5xx for a backend it cannot reach; anything that kept the probe
// from being sent (no route, no local address, no descriptors) is the node's problem, reported as not run, never as
// a loopback failure.
import type { ProbeOutcome } from './window.js';

/** Errors raised before a packet could reach the VIP. */
const NOT_RUN = new Set(['ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'EADDRINUSE', 'EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EACCES', 'EPERM', 'ENETDOWN']);

/** The end of one probe: an error code (or 'ETIMEDOUT' for our own timeout), or the HTTP status for L7. */
export type ProbeEnd = { error: string } | { status?: number };

export function outcomeOf(end: ProbeEnd, ms: number): ProbeOutcome {
  if ('error' in end) return NOT_RUN.has(end.error) ? { kind: 'notRun' } : { kind: 'failed', ms };
  if (end.status !== undefined && end.status >= 500) return { kind: 'failed', ms };
  return { kind: 'ok', ms };
}
