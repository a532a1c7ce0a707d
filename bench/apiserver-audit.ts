// The operator's requests as the apiserver saw them: an audit policy that logs (at Metadata level, one line per
// request) only the operator's ServiceAccount, so the figure is server-side and nobody else's traffic is in it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATOR_NAMESPACE } from '../test/support/operator.js';

export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:loopguard`;
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Writes the policy file into `dir` and returns the kube-apiserver flags and the log's path. */
export function auditFlags(dir: string): { args: string[]; log: string } {
  const policy = join(dir, 'audit-policy.yaml');
  const log = join(dir, 'audit.log');
  // RequestReceived would log each request twice; a watch logs ResponseStarted when it opens and ResponseComplete
  // when it closes: requests are counted by auditID.
  writeFileSync(
    policy,
    ['apiVersion: audit.k8s.io/v1', 'kind: Policy', 'omitStages: [RequestReceived]', 'rules:', `- level: Metadata`, `  users: ["${OPERATOR_USER}"]`, '- level: None', ''].join('\n'),
  );
  return { args: [`--audit-policy-file=${policy}`, `--audit-log-path=${log}`, '--audit-log-format=json', '--audit-log-mode=blocking'], log };
}

export interface AuditCounts {
  total: number;
  writes: number;
  /** `verb resource[/subresource]` → requests. */
  byVerb: Record<string, number>;
}

/** Requests in the log received in [from, to) (ms since the epoch). */
export function countRequests(log: string, from = 0, to = Infinity): AuditCounts {
  let text: string;
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return { total: 0, writes: 0, byVerb: {} };
  }
  const seen = new Set<string>();
  const counts: AuditCounts = { total: 0, writes: 0, byVerb: {} };
  for (const line of text.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as { auditID: string; verb: string; requestReceivedTimestamp: string; objectRef?: { resource?: string; subresource?: string }; user?: { username?: string } };
    if (e.user?.username !== OPERATOR_USER || seen.has(e.auditID)) continue;
    const at = Date.parse(e.requestReceivedTimestamp);
    if (at < from || at >= to) continue;
    seen.add(e.auditID);
    const what = `${e.verb} ${e.objectRef?.resource ?? '(non-resource)'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    counts.byVerb[what] = (counts.byVerb[what] ?? 0) + 1;
    counts.total++;
    if (WRITE_VERBS.has(e.verb)) counts.writes++;
  }
  return counts;
}

/** "12 (get leases 6, update leases 6)" busiest first. */
export function formatCounts(c: AuditCounts): string {
  const parts = Object.entries(c.byVerb)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`);
  return `${c.total} (${c.writes} writes): ${parts.join(', ') || 'none'}`;
}

/** The operator's Event writes (create and patch events) received from `from` on: how many, first and last (ms). */
export function eventWrites(log: string, from = 0): { count: number; firstMs?: number; lastMs?: number } {
  let text: string;
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return { count: 0 };
  }
  const seen = new Set<string>();
  let count = 0;
  let firstMs: number | undefined;
  let lastMs: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.includes('"events"')) continue;
    const e = JSON.parse(line) as { auditID: string; verb: string; requestReceivedTimestamp: string; objectRef?: { resource?: string }; user?: { username?: string } };
    if (e.user?.username !== OPERATOR_USER || e.objectRef?.resource !== 'events' || (e.verb !== 'create' && e.verb !== 'patch') || seen.has(e.auditID)) continue;
    const at = Date.parse(e.requestReceivedTimestamp);
    if (at < from) continue;
    seen.add(e.auditID);
    count++;
    firstMs = Math.min(firstMs ?? at, at);
    lastMs = Math.max(lastMs ?? at, at);
  }
  return { count, ...(firstMs !== undefined ? { firstMs } : {}), ...(lastMs !== undefined ? { lastMs } : {}) };
}
