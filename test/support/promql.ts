// Checks PromQL written for loopguard (alert rules, dashboard panels) against the operator's own prom-client
// registry: every metric it names is registered, and every label it selects or groups by is on that metric.
// Not a PromQL parser: it strips strings, ranges and Grafana variables, then reads selectors, grouping clauses
// and the remaining identifiers, which is enough for the expressions we write and fails loudly on the rest.
import { Histogram, Summary } from 'prom-client';
import { Metrics } from '../../src/runtime/metrics.js';
import { ProbeMetrics } from '../../src/probe/metrics.js';
import { TARGET_GAUGES } from '../../src/runtime/target-series.js';

/** Labels Prometheus adds to every series it scrapes through the ServiceMonitor (target labels). */
export const SCRAPE_LABELS = ['job', 'instance', 'pod'] as const;

/**
 * Every series name the operator exports (process metrics included), with its label names. `externalLabels`: what
 * a multi-cluster setup adds on top (Prometheus external_labels read through Thanos/Mimir/federation, e.g.
 * `cluster`); the dashboard may filter on them, alert rules (evaluated in one cluster's Prometheus) may not.
 */
export function operatorSeries(options: { processMetrics?: boolean; externalLabels?: readonly string[] } = {}): Map<string, Set<string>> {
  const metrics = new Metrics({ processMetrics: options.processMetrics ?? true });
  // The probe's per-target series are registered by the operator on the same registry (src/operator.ts).
  new ProbeMetrics(metrics.registry);
  const series = new Map<string, Set<string>>();
  for (const m of metrics.registry.getMetricsAsArray()) {
    const labels = [...(m as unknown as { labelNames: string[] }).labelNames, ...SCRAPE_LABELS, ...(options.externalLabels ?? [])];
    series.set(m.name, new Set(labels));
    if (m instanceof Histogram) series.set(`${m.name}_bucket`, new Set([...labels, 'le']));
    if (m instanceof Summary) series.set(m.name, new Set([...labels, 'quantile']));
    if (m instanceof Histogram || m instanceof Summary) {
      series.set(`${m.name}_sum`, new Set(labels));
      series.set(`${m.name}_count`, new Set(labels));
    }
  }
  // The per-target gauges are rendered by loopguard, not registered with prom-client (src/runtime/target-series.ts).
  for (const g of TARGET_GAUGES) series.set(g.name, new Set([...g.labelNames, ...SCRAPE_LABELS, ...(options.externalLabels ?? [])]));
  return series;
}

/** Names of the metrics loopguard itself defines (no process/Node.js defaults): what a dashboard should cover. */
export function operatorOwnMetrics(): string[] {
  const metrics = new Metrics({ processMetrics: false });
  new ProbeMetrics(metrics.registry);
  return [...metrics.registry.getMetricsAsArray().map((m) => m.name), ...TARGET_GAUGES.map((g) => g.name)];
}

export interface PromQLCheck {
  /** Series names the expression reads. */
  metrics: string[];
  /** Labels that survive the expression's aggregations (what a legend or an alert text may use). */
  kept: Set<string>;
  /** Template variables it references (`$x`, `${x}`, `${x:fmt}`, `[[x]]`), Grafana's `$__…` built-ins included. */
  variables: string[];
  /** What does not match the registry; empty when the expression is fine. */
  problems: string[];
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);
const AGGREGATION = /\b(?:sum|min|max|avg|count|group|stddev|stdvar|quantile|count_values)\s*(\(|by\b|without\b)/g;
const IDENT = /(?<![\w:.$])[a-zA-Z_:][\w:]*(?![\w:])/g;
const VARIABLE = /\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]/g;

/** Variables referenced in any text (expression, legend, title, datasource). */
export function variablesIn(text: string): string[] {
  return [...text.matchAll(VARIABLE)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

function balanced(text: string, open: number, step: 1 | -1): number {
  let depth = 0;
  for (let i = open; i >= 0 && i < text.length; i += step) {
    if (text[i] === '(') depth += step;
    if (text[i] === ')') depth -= step;
    if (depth === 0) return i;
  }
  return -1;
}

export function checkPromQL(expr: string, series: Map<string, Set<string>> = operatorSeries()): PromQLCheck {
  const problems: string[] = [];
  const variables = variablesIn(expr);
  let text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\[[^\]]*\]/g, (s) => ' '.repeat(s.length))
    .replace(VARIABLE, (s) => '1'.padEnd(s.length));

  // Selectors: metric{label op "value", ...}. Braces are blanked (same length, so positions hold).
  text = text.replace(/([a-zA-Z_:][\w:]*)?(\s*)\{([^}]*)\}/g, (whole, metric: string | undefined, space: string, body: string) => {
    if (!metric || KEYWORDS.has(metric)) problems.push(`selector without a metric name: ${whole}`);
    else if (series.has(metric)) {
      for (const [, label = ''] of body.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) {
        if (!series.get(metric)?.has(label)) problems.push(`${metric} has no label ${label}`);
      }
    }
    return `${metric ?? ''}${space}${' '.repeat(whole.length - (metric ?? '').length - space.length)}`;
  });

  const withClauses = text;
  // Grouping clauses, blanked too, each with the span of the expression it applies to.
  const clauses: Array<{ keyword: string; labels: string[]; start: number; end: number }> = [];
  text = text.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (whole, keyword: string, list: string, start: number) => {
    const labels = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
    clauses.push({ keyword, labels, start, end: start + whole.length });
    return ' '.repeat(whole.length);
  });

  const idents = [...text.matchAll(IDENT)].filter((m) => !KEYWORDS.has(m[0]) && !/^\s*\(/.test(text.slice((m.index ?? 0) + m[0].length)));
  const metricsIn = (from: number, to: number) => idents.filter((m) => (m.index ?? 0) >= from && (m.index ?? 0) <= to).map((m) => m[0]);
  const metrics = [...new Set(metricsIn(0, text.length))];
  for (const metric of metrics) if (!series.has(metric)) problems.push(`no metric ${metric} in the operator's registry`);
  if (metrics.length === 0) problems.push(`no metric in ${expr}`);
  const labelsOf = (names: string[]) => new Set(names.flatMap((n) => [...(series.get(n) ?? [])]));

  let kept: Set<string> | undefined; // approximate: the labels of every by() and the effect of any unscoped one
  for (const clause of clauses) {
    let scope = metrics;
    if (clause.keyword === 'by' || clause.keyword === 'without') {
      const after = text.slice(clause.end).search(/\S/) + clause.end;
      const before = text.slice(0, clause.start).trimEnd().length - 1;
      const [from, to] = text[after] === '(' ? [after, balanced(text, after, 1)] : text[before] === ')' ? [balanced(text, before, -1), before] : [-1, -1];
      if (from < 0 || to < 0) problems.push(`cannot tell what ${clause.keyword} (${clause.labels.join(', ')}) applies to in ${expr}`);
      else scope = [...new Set(metricsIn(from, to))];
    }
    for (const label of clause.labels) {
      // by/without: the label must be on every metric aggregated; on/ignoring/group_*: on one side at least.
      const missing = scope.filter((m) => series.has(m) && !series.get(m)?.has(label));
      if (clause.keyword === 'by' || clause.keyword === 'without' ? missing.length > 0 : missing.length === scope.length) {
        problems.push(`${clause.keyword} (${label}): not a label of ${missing.join(', ')}`);
      }
    }
    if (clause.keyword === 'by') kept = new Set([...(kept ?? clause.labels)].filter((l) => clause.labels.includes(l)));
    if (clause.keyword === 'without') kept = new Set([...(kept ?? labelsOf(scope))].filter((l) => !clause.labels.includes(l)));
  }
  // An aggregation without by/without (sum(...)) keeps no label; without any aggregation, the metrics' labels stay.
  const unscoped = [...withClauses.matchAll(AGGREGATION)].some((m) => {
    if (m[1] !== '(') return false;
    const open = (m.index ?? 0) + m[0].length - 1;
    return !/^\s*(by|without)\b/.test(withClauses.slice(balanced(withClauses, open, 1) + 1));
  });
  if (unscoped) kept = new Set();
  kept ??= labelsOf(metrics);
  if (/\bhistogram_quantile\s*\(/.test(withClauses)) kept.delete('le');
  return { metrics, kept, variables, problems };
}
