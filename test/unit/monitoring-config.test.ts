// config/monitoring must keep matching the operator: every metric an alert uses exists with the labels the alert
// groups and selects by (checked by test/support/promql.ts, shared with dashboard.test.ts), the alert texts only
// use labels that survive the aggregation, and the ServiceMonitor → Service → Deployment port chain resolves.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
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

describe('config/network-policy', () => {
  it('as a component of an overlay on config/default: selects the operator pods and opens only the metrics port', () => {
    const overlay = mkdtempSync(join(tmpdir(), 'loopguard-overlay-'));
    const config = relative(overlay, fileURLToPath(new URL('../../config', import.meta.url)));
    writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${config}/default]\ncomponents: [${config}/network-policy]\n`);
    const docs = parseAllDocuments(execFileSync('kubectl', ['kustomize', overlay], { encoding: 'utf8', timeout: 60_000 })).map(
      (d) => d.toJS() as { kind: string; spec: Record<string, unknown> & { template?: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ ports?: Array<{ name: string; containerPort: number }>; args?: string[] }> } } } },
    );
    const policy = docs.find((d) => d.kind === 'NetworkPolicy') as { spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: Array<{ from: unknown[]; ports: Array<{ port: string }> }> } } | undefined;
    const deployment = docs.find((d) => d.kind === 'Deployment');
    expect(policy?.spec.policyTypes).toEqual(['Ingress']);
    expect(deployment?.spec.template?.metadata.labels).toMatchObject(policy?.spec.podSelector.matchLabels ?? { missing: 'policy' });
    expect(policy?.spec.ingress).toEqual([{ from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] }]);
    const manager = deployment?.spec.template?.spec.containers[0];
    // The named port is the HTTPS metrics port the operator is told to serve.
    const port = manager?.ports?.find((p) => p.name === 'metrics');
    expect(manager?.args).toContain(`--metrics-port=${port?.containerPort}`);
    // config/default alone ships no NetworkPolicy: it is opt-in.
    const plain = execFileSync('kubectl', ['kustomize', fileURLToPath(new URL('../../config/default', import.meta.url))], { encoding: 'utf8', timeout: 60_000 });
    expect(plain).not.toContain('kind: NetworkPolicy');
  });
});
