// Formats the emulator's per-caller counts (StatsSnapshot.byCaller) for the benches: a table of calls by
// action × caller, totals and shares per caller, and calls per mitigated listener.
import { callsByCallerAndAction, type StatsSnapshot } from '../sim/clb-emulator/index.js';

/** Callers listed first, in this order; any other caller (e.g. `(unauthenticated)`) follows. */
const KNOWN_CALLERS = ['loopguard', 'tke'];

export interface CallerSummary {
  /** caller → action → calls (all outcomes). */
  byCaller: Record<string, Record<string, number>>;
  callers: string[];
  totals: Record<string, number>;
  total: number;
}

export function summarize(stats: Pick<StatsSnapshot, 'byCaller'>): CallerSummary {
  const byCaller = callsByCallerAndAction(stats);
  const others = Object.keys(byCaller).filter((c) => !KNOWN_CALLERS.includes(c)).sort();
  const callers = [...KNOWN_CALLERS, ...others];
  const totals = Object.fromEntries(callers.map((c) => [c, sum(Object.values(byCaller[c] ?? {}))]));
  return { byCaller, callers, totals, total: sum(Object.values(totals)) };
}

/** Rows: one per action (busiest first), then total, share, and per mitigated listener. */
export function callsTable(s: CallerSummary, mitigated: number): string[] {
  const actions = [...new Set(Object.values(s.byCaller).flatMap((a) => Object.keys(a)))];
  const count = (c: string, a: string) => s.byCaller[c]?.[a] ?? 0;
  const actionTotal = (a: string) => sum(s.callers.map((c) => count(c, a)));
  actions.sort((a, b) => actionTotal(b) - actionTotal(a) || a.localeCompare(b));
  const rows: string[][] = [
    ['action', ...s.callers, 'total'],
    ...actions.map((a) => [a, ...s.callers.map((c) => String(count(c, a))), String(actionTotal(a))]),
    ['total', ...s.callers.map((c) => String(s.totals[c] ?? 0)), String(s.total)],
    ['share', ...s.callers.map((c) => pct(s.totals[c] ?? 0, s.total)), '100%'],
    ['per mitigated listener', ...s.callers.map((c) => perListener(s.totals[c] ?? 0, mitigated)), perListener(s.total, mitigated)],
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  '));
}

/** Outcomes other than OK, per caller: `{loopguard: {"DescribeListeners RequestLimitExceeded": 3}}`. */
export function failures(stats: Pick<StatsSnapshot, 'byCaller'>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [caller, actions] of Object.entries(stats.byCaller)) {
    for (const [action, outcomes] of Object.entries(actions)) {
      for (const [outcome, n] of Object.entries(outcomes)) if (outcome !== 'OK') (out[caller] ??= {})[`${action} ${outcome}`] = n;
    }
  }
  return out;
}

export function perListener(calls: number, listeners: number): string {
  return listeners > 0 ? (calls / listeners).toFixed(2) : 'n/a';
}

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(0)}%` : 'n/a';
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
