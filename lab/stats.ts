// Figures from outcomes (pure).
import type { Outcome } from './agent-protocol.js';

/** Nearest-rank percentile of the values (0 < p ≤ 100); NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

export interface Summary {
  total: number;
  ok: number;
  /** Successes by the node that answered. */
  byNode: Record<string, number>;
  /** Failures by error (timeout, ECONNRESET, HTTP 504 …). */
  errors: Record<string, number>;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** L7: requests the CLB sent to more than one real server (at least one timed out). */
  retried: number;
}

export function summarize(outcomes: Outcome[]): Summary {
  const byNode: Record<string, number> = {};
  const errors: Record<string, number> = {};
  for (const o of outcomes) {
    if (o.ok) byNode[o.answer ?? '?'] = (byNode[o.answer ?? '?'] ?? 0) + 1;
    else errors[o.error ?? '?'] = (errors[o.error ?? '?'] ?? 0) + 1;
  }
  const ms = outcomes.filter((o) => o.ok).map((o) => o.ms);
  return {
    total: outcomes.length,
    ok: outcomes.filter((o) => o.ok).length,
    byNode,
    errors,
    p50: percentile(ms, 50),
    p90: percentile(ms, 90),
    p99: percentile(ms, 99),
    max: ms.length ? Math.max(...ms) : Number.NaN,
    retried: outcomes.filter((o) => (o.attempts ?? 0) > 1).length,
  };
}

export const rate = (s: Pick<Summary, 'ok' | 'total'>): string => `${s.ok}/${s.total} (${s.total ? Math.round((100 * s.ok) / s.total) : 0} %)`;

export function formatMs(ms: number): string {
  if (Number.isNaN(ms)) return '-';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

/** `node2 34, node3 33` */
export const counts = (m: Record<string, number>): string =>
  Object.entries(m)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '-';
