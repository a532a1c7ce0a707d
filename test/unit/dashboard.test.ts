// config/monitoring/dashboard.json must keep matching the operator: every PromQL expression in it (panel queries and
// template variable queries) names metrics the operator's registry has, with labels those metrics carry (the same
// checker as the alert rules, test/support/promql.ts); legends only use labels the query keeps; every variable used
// is defined. The checker is run on broken copies too, so a passing dashboard means something. The ConfigMap the
// Grafana sidecar loads is generated from the same file by config/monitoring's kustomization.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { checkPromQL, operatorOwnMetrics, operatorSeries, variablesIn } from '../support/promql.js';

const MONITORING = fileURLToPath(new URL('../../config/monitoring/', import.meta.url));
const text = readFileSync(`${MONITORING}dashboard.json`, 'utf8');

interface Target {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query: string };
  datasource?: { type?: string; uid?: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  templating: { list: Variable[] };
  panels: Panel[];
}

/** Grafana's built-in variables. */
const BUILTINS = new Set(['__rate_interval', '__interval', '__interval_ms', '__range', '__range_s', '__range_ms', '__all', '__dashboard', '__from', '__to']);
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
// `cluster`: the external label that tells clusters apart when one Grafana reads several Prometheus (Thanos, Mimir).
const series = operatorSeries({ externalLabels: ['cluster'] });

const panelsOf = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);
const queryOf = (v: Variable) => (typeof v.query === 'string' ? v.query : (v.query?.query ?? ''));

/** Every expression of a dashboard, with where it is and what checkPromQL says about it. */
function expressions(d: Dashboard) {
  return panelsOf(d.panels).flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel ${p.id} "${p.title}" ${t.refId}`, panel: p, target: t, check: checkPromQL(t.expr, series) })));
}

/** All that is wrong with a dashboard; empty when it matches the operator. */
function dashboardProblems(d: Dashboard): string[] {
  const problems: string[] = [];
  const defined = new Set(d.templating.list.map((v) => v.name));
  const undefinedIn = (where: string, s: string) => {
    for (const name of variablesIn(s)) if (!defined.has(name) && !BUILTINS.has(name)) problems.push(`${where}: variable $${name} is not defined`);
  };

  const ids = panelsOf(d.panels).map((p) => p.id);
  for (const id of ids.filter((id, i) => ids.indexOf(id) !== i)) problems.push(`panel id ${id} is used twice`);
  for (const p of panelsOf(d.panels)) {
    if (!Number.isInteger(p.id)) problems.push(`panel "${p.title}" has no numeric id`);
    undefinedIn(`panel ${p.id} title`, p.title);
    if (p.type === 'row') continue;
    if ((p.targets ?? []).length === 0) problems.push(`panel ${p.id} "${p.title}" has no query`);
    for (const ds of [p.datasource, ...(p.targets ?? []).map((t) => t.datasource)]) {
      if (ds?.type !== DATASOURCE.type || ds.uid !== DATASOURCE.uid) problems.push(`panel ${p.id}: datasource ${JSON.stringify(ds)} is not \${datasource}`);
    }
  }
  for (const { where, target, check } of expressions(d)) {
    problems.push(...check.problems.map((p) => `${where}: ${p}`));
    undefinedIn(where, target.expr);
    // A legend can only show labels the query keeps.
    for (const [, label = ''] of (target.legendFormat ?? '').matchAll(/\{\{\s*([a-zA-Z_]\w*)\s*\}\}/g)) {
      if (!check.kept.has(label)) problems.push(`${where}: legend uses {{${label}}}, which the query does not keep`);
    }
  }
  for (const v of d.templating.list) {
    if (v.type !== 'query') continue;
    const query = queryOf(v);
    undefinedIn(`variable ${v.name}`, query);
    if (v.datasource?.uid !== DATASOURCE.uid) problems.push(`variable ${v.name}: datasource is not \${datasource}`);
    const m = /^label_values\((.+),\s*([a-zA-Z_]\w*)\s*\)$/.exec(query.trim());
    if (!m) {
      problems.push(`variable ${v.name}: expected label_values(<selector>, <label>), got ${query}`);
      continue;
    }
    const check = checkPromQL(m[1] ?? '', series);
    problems.push(...check.problems.map((p) => `variable ${v.name}: ${p}`));
    for (const metric of check.metrics) if (series.has(metric) && !series.get(metric)?.has(m[2] ?? '')) problems.push(`variable ${v.name}: ${metric} has no label ${m[2]}`);
  }
  return problems;
}

const dashboard = JSON.parse(text) as Dashboard;
/** A deep copy of the dashboard with one change. */
function broken(change: (d: Dashboard) => void): Dashboard {
  const copy = JSON.parse(text) as Dashboard;
  change(copy);
  return copy;
}
const target = (d: Dashboard, title: string) => {
  const t = panelsOf(d.panels).find((p) => p.title === title)?.targets?.[0];
  if (!t) throw new Error(`no panel "${title}"`);
  return t;
};
/** Changes one string in the first query of the panel with that title. */
const edit = (title: string, from: string, to: string) => (d: Dashboard) => {
  const t = target(d, title);
  expect(t.expr).toContain(from);
  t.expr = t.expr.replace(from, to);
};

describe('Grafana dashboard', () => {
  it('is a Grafana JSON model with a Prometheus ${datasource} and namespace/policy variables', () => {
    expect(dashboard.uid).toBe('loopguard');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(variables.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(queryOf(variables.get('namespace') as Variable)).toMatch(/^label_values\(loopguard_target_risk\b.*, namespace\)$/);
    expect(queryOf(variables.get('policy') as Variable)).toMatch(/^label_values\(loopguard_target_risk\b.*, policy\)$/);
  });

  it('has a cluster variable every query follows, so one Grafana over several clusters works', () => {
    const cluster = dashboard.templating.list.find((v) => v.name === 'cluster') as Variable & { includeAll?: boolean; allValue?: string };
    // "All" must match series without the label too (one cluster, no external label): .* matches the empty value.
    expect(cluster).toMatchObject({ type: 'query', includeAll: true, allValue: '.*' });
    expect(queryOf(cluster)).toBe('label_values(loopguard_cloud_requests_total, cluster)');
    const unfiltered = [...expressions(dashboard).map((e) => ({ where: e.where, expr: e.target.expr })), ...dashboard.templating.list.filter((v) => v.type === 'query' && v.name !== 'cluster').map((v) => ({ where: `variable ${v.name}`, expr: queryOf(v) }))]
      .filter(({ expr }) => [...expr.matchAll(/\{([^}]*)\}/g)].some((m) => !(m[1] ?? '').includes('cluster=~"$cluster"')));
    expect(unfiltered).toEqual([]);
  });

  it('uses only metrics and labels the operator exports, and only defined variables', () => {
    expect(expressions(dashboard).length).toBeGreaterThan(10);
    expect(dashboardProblems(dashboard)).toEqual([]);
  });

  it('shows every metric loopguard defines, reconcile latency as histogram quantiles', () => {
    const used = new Set(expressions(dashboard).flatMap((e) => e.check.metrics.map((m) => m.replace(/_(bucket|sum|count)$/, ''))));
    expect(operatorOwnMetrics().filter((m) => !used.has(m))).toEqual([]);
    expect(expressions(dashboard).filter((e) => /histogram_quantile\(0\.99, sum by \(le, controller\) \(rate\(controller_runtime_reconcile_time_seconds_bucket\{/.test(e.target.expr))).toHaveLength(1);
    // Per-target panels follow the namespace and policy variables.
    for (const { where, target: t } of expressions(dashboard).filter((e) => /loopguard_target_/.test(e.target.expr))) {
      expect({ where, filtered: /namespace=~"\$namespace", policy=~"\$policy"/.test(t.expr) }).toEqual({ where, filtered: true });
    }
  });

  describe('the checker catches', () => {
    it.each([
      ['a metric the registry does not have', edit('Targets at risk by policy', 'loopguard_target_risk{', 'loopguard_targets_at_risk{'), 'no metric loopguard_targets_at_risk'],
      ['a selector label the metric does not have', edit('CLB calls by action', 'job=~"$job"', 'job=~"$job", policy="p"'), 'loopguard_cloud_requests_total has no label policy'],
      ['a by() label the metric does not have', edit('CLB calls by action', 'by (action, outcome)', 'by (action, outcome, code)'), 'by (code): not a label of loopguard_cloud_requests_total'],
      ['le on a histogram series that is not _bucket', edit('Reconcile latency', '_bucket', '_count'), 'by (le): not a label of controller_runtime_reconcile_time_seconds_count'],
      ['a legend label the query drops', (d: Dashboard) => (target(d, 'Errors by reason').legendFormat = '{{policy}}'), 'legend uses {{policy}}'],
      ['an undefined variable', edit('CLB calls by action', '$job', '$clustr'), 'variable $clustr is not defined'],
      ['a variable query on a missing label', (d: Dashboard) => ((d.templating.list.find((v) => v.name === 'policy') as Variable).query = 'label_values(loopguard_target_risk, polcy)'), 'loopguard_target_risk has no label polcy'],
      ['a duplicate panel id', (d: Dashboard) => ((d.panels[2] as Panel).id = (d.panels[1] as Panel).id), 'is used twice'],
      ['a panel on another datasource', (d: Dashboard) => ((d.panels[1] as Panel).datasource = { type: 'prometheus', uid: 'prod' }), 'is not ${datasource}'],
    ])('%s', (_what, change, message) => {
      expect(dashboardProblems(broken(change))).toEqual([expect.stringContaining(message)]);
    });
  });

  it('ships as the Grafana sidecar ConfigMap rendered by config/monitoring', () => {
    const docs = parseAllDocuments(execFileSync('kubectl', ['kustomize', MONITORING], { encoding: 'utf8', timeout: 60_000 })).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; data?: Record<string, string> },
    );
    const maps = docs.filter((d) => d.kind === 'ConfigMap');
    expect(maps.map((m) => m.metadata)).toEqual([expect.objectContaining({ name: 'loopguard-dashboard', namespace: 'loopguard-system', labels: expect.objectContaining({ grafana_dashboard: '1' }) })]);
    expect(maps[0]?.data?.['loopguard.json']).toBe(text);
  });
});
