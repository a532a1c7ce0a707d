// config/monitoring must keep matching the operator: every metric an alert uses exists with the labels the alert
// groups and selects by (checked by test/support/promql.ts, shared with dashboard.test.ts), the alert texts only
// use labels that survive the aggregation, and the ServiceMonitor → Service → Deployment port chain resolves.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { checkPromQL } from '../support/promql.js';

const read = (path: string) => readFileSync(new URL(`../../config/${path}`, import.meta.url), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}

const rules = (parse(read('monitoring/prometheus_rule.yaml')) as { spec: { groups: Array<{ rules: Rule[] }> } }).spec.groups.flatMap((g) => g.rules);

describe('PrometheusRule', () => {
  it('has alerts', () => {
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining(['LoopguardTargetAtRisk', 'LoopguardTargetError']));
  });

  it.each(rules.map((r) => [r.alert, r] as const))('%s uses existing metrics and labels', (_name, rule) => {
    const { metrics, kept, problems } = checkPromQL(rule.expr);
    expect(metrics.length).toBeGreaterThan(0);
    expect({ expr: rule.expr, problems }).toEqual({ expr: rule.expr, problems: [] });
    // Alert texts may only use labels the aggregation keeps.
    for (const text of Object.values(rule.annotations)) {
      for (const [, label] of text.matchAll(/\$labels\.([a-z_]+)/g)) expect({ text, kept: kept.has(label ?? '') }).toEqual({ text, kept: true });
    }
  });
});

describe('scrape path', () => {
  it('the kustomization lists exactly the files that exist here', () => {
    const k = parse(read('monitoring/kustomization.yaml')) as { resources: string[] };
    expect(k.resources.sort()).toEqual(['prometheus_rule.yaml', 'service.yaml', 'service_monitor.yaml']);
    for (const f of k.resources) expect(read(`monitoring/${f}`).length).toBeGreaterThan(0);
  });

  it('ServiceMonitor selects the metrics Service, whose port reaches the container port serving /metrics', () => {
    const monitor = parse(read('monitoring/service_monitor.yaml')) as {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string; path: string; honorLabels?: boolean }> };
    };
    const service = parse(read('monitoring/service.yaml')) as {
      metadata: { labels: Record<string, string> };
      spec: { selector: Record<string, string>; ports: Array<{ name: string; targetPort: string }> };
    };
    const deployment = parseAllDocuments(read('manager/deployment.yaml'))
      .map((d) => d.toJS() as { kind?: string; spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ ports?: Array<{ name: string }> }> } } } })
      .find((d) => d.kind === 'Deployment');
    expect(deployment).toBeDefined();
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    const endpoint = monitor.spec.endpoints[0];
    expect(endpoint?.path).toBe('/metrics');
    // loopguard_target_* carry the target's `namespace`; without honorLabels Prometheus would rename it to
    // exported_namespace and put loopguard-system there, so alerts and the dashboard would group by the wrong one.
    expect(endpoint?.honorLabels).toBe(true);
    const port = service.spec.ports.find((p) => p.name === endpoint?.port);
    expect(port).toBeDefined();
    expect(deployment?.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    const containerPorts = deployment?.spec.template.spec.containers.flatMap((c) => c.ports ?? []).map((p) => p.name);
    expect(containerPorts).toContain(port?.targetPort);
  });
});
