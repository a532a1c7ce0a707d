// charts/loopguard (issue 11 #2), rendered by the real helm CLI (test/support/helm.ts builds it from its Go module):
//   - its copies cannot drift: crds/ and the monitoring and Argo CD files are byte-identical to the repository's;
//   - `helm lint --strict` passes, and `helm template` refuses to render without a region;
//   - with release `loopguard` in `loopguard-system`, its RBAC, ServiceAccount, ConfigMap and Deployment are what
//     `kubectl kustomize config/default` renders, labels and the image aside; under another release name every
//     reference still meets (Lease name ↔ Role, ServiceAccount ↔ bindings, ConfigMap ↔ env);
//   - every operator flag of src/runtime/config.ts has a value, and what the chart passes parses with loadConfig;
//   - the opt-ins (metrics Service, ServiceMonitor, PrometheusRule, Argo CD health check, PDB) render config/monitoring's
//     and config/argocd's content, and are off by default.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../controlplane/crds.js';
import { CHART_DIR, helmBinary, runHelm } from '../support/helm.js';
import { DEFAULTS, FIELDS, loadConfig, parseDuration } from '../../src/runtime/config.js';

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> } };

const read = (path: string) => readFileSync(join(REPO_ROOT, path));
const gate = helmBinary('test/unit/helm-chart.test.ts');
const suite = gate.skip ? describe.skip : describe;
const helm = (args: string[]) => runHelm(gate.helm ?? 'helm', args);

function template(release: string, namespace: string, sets: string[] = [], args: string[] = []): Obj[] {
  const r = helm(['template', release, CHART_DIR, '-n', namespace, '--set', 'region=ap-guangzhou', ...sets.flatMap((s) => ['--set', s]), ...args]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((d): d is Obj => d !== null);
}

function kustomize(dir: string): Obj[] {
  const out = execFileSync('kubectl', ['kustomize', join(REPO_ROOT, dir)], { encoding: 'utf8', timeout: 60_000 });
  return parseAllDocuments(out).map((d) => d.toJS() as Obj);
}

const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const find = (docs: Obj[], kind: string, name?: string) => docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

interface Container {
  name: string;
  image: string;
  args: string[];
  env: Array<{ name: string; valueFrom?: { configMapKeyRef?: { name: string } } }>;
  envFrom?: Array<{ secretRef: { name: string; optional?: boolean } }>;
}
interface Deployment extends Obj {
  spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> & { serviceAccountName: string; containers: Container[] } } };
}
const deploymentOf = (docs: Obj[]) => {
  const found = find(docs, 'Deployment');
  expect(found).toHaveLength(1);
  return found[0] as Deployment;
};
const managerOf = (docs: Obj[]) => deploymentOf(docs).spec.template.spec.containers.find((c) => c.name === 'manager') as Container;

/** What may differ between the chart and config/default: labels and selectors (Helm's conventions), the image, the pod's config checksum. */
function normalise(o: Obj): Obj {
  const c = structuredClone(o) as Obj & { spec?: Record<string, unknown> };
  delete c.metadata.labels;
  // Helm's own instruction, which kubectl has no use for: the CoreDNS rules' ConfigMap stays on uninstall (docs/dns.md).
  if (c.metadata.annotations?.['helm.sh/resource-policy'] === 'keep' && c.metadata.name === 'loopguard-coredns-rules') delete c.metadata.annotations;
  if (c.kind === 'Deployment') {
    const d = c as unknown as Deployment;
    d.spec.selector.matchLabels = {};
    d.spec.template.metadata = { labels: {} };
    const affinity = d.spec.template.spec['affinity'] as { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: Array<{ podAffinityTerm: { labelSelector: unknown } }> } };
    for (const term of affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution) term.podAffinityTerm.labelSelector = {};
    for (const container of d.spec.template.spec.containers) container.image = 'IMAGE';
  }
  return c;
}

describe('the chart keeps its copies identical to the repository', () => {
  const ours = readdirSync(join(REPO_ROOT, 'crds')).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();

  it('charts/loopguard/crds/ holds exactly crds/*.yaml, byte for byte (Helm convention: CRDs outside templates/)', () => {
    expect(ours.length).toBeGreaterThan(0);
    expect(readdirSync(join(CHART_DIR, 'crds')).sort()).toEqual(ours);
    for (const f of ours) expect({ f, same: read(`charts/loopguard/crds/${f}`).equals(read(`crds/${f}`)) }).toEqual({ f, same: true });
  });

  it('crds/kustomization.yaml (so config/crd and config/default) lists exactly crds/*.yaml', () => {
    const { resources } = parse(read('crds/kustomization.yaml').toString()) as { resources: string[] };
    expect([...resources].sort()).toEqual(ours);
  });

  it.each([
    ['files/prometheus_rule.yaml', 'config/monitoring/prometheus_rule.yaml'],
    ['files/argocd-health.lua', 'config/argocd/health.lua'],
    ['files/dashboard.json', 'config/monitoring/dashboard.json'],
  ])('%s is %s', (copy, original) => {
    expect(read(`charts/loopguard/${copy}`).equals(read(original))).toBe(true);
  });

  it("appVersion and version are package.json's", () => {
    const chart = parse(read('charts/loopguard/Chart.yaml').toString()) as { version: string; appVersion: string };
    const { version } = JSON.parse(read('package.json').toString()) as { version: string };
    expect(chart).toMatchObject({ version, appVersion: version });
  });
});

suite(`charts/loopguard with helm${gate.skip ? ` (skipped: ${gate.skip})` : ''}`, () => {
  it('passes helm lint --strict', () => {
    const r = helm(['lint', '--strict', CHART_DIR, '--set', 'region=ap-guangzhou']);
    expect({ code: r.code, out: r.stdout + r.stderr }).toEqual({ code: 0, out: expect.stringContaining('0 chart(s) failed') });
  });

  it('refuses to render without a region', () => {
    const r = helm(['template', 'loopguard', CHART_DIR]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('region: set the Tencent Cloud region');
  });

  it('renders the RBAC, ServiceAccount, ConfigMap and Deployment of config/default, and the admission-warnings component (labels and image aside)', () => {
    // Where Helm knows the cluster serves VAP v1 (helm template --api-versions naming the kind), the chart renders what
    // config/default plus the component give; without it (below), what config/default alone gives
    // (docs/kubernetes-versions.md §3).
    const chart = template('loopguard', 'loopguard-system', [], ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy']);
    expect(template('loopguard', 'loopguard-system').filter((d) => d.kind.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    const overlay = mkdtempSync(join(tmpdir(), 'loopguard-vap-'));
    const rel = relative(overlay, REPO_ROOT);
    writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${rel}/config/default]\ncomponents: [${rel}/config/components/admission-warnings]\n`);
    let kust: Obj[];
    try {
      kust = kustomize(relative(REPO_ROOT, overlay));
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
    const compared = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount', 'ConfigMap', 'Deployment', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
    const pick = (docs: Obj[]) => new Map(docs.filter((d) => compared.includes(d.kind)).map((d) => [key(d), normalise(d)]));
    const [ours, theirs] = [pick(chart), pick(kust)];
    expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
    for (const [k, o] of ours) expect({ k, o }).toEqual({ k, o: theirs.get(k) });
    // Nothing else but the chart's opt-ins (all off) and config/default's Namespace and CRDs (crds/ here).
    expect(chart.map((d) => d.kind).filter((k) => !compared.includes(k))).toEqual([]);
    const crds = find(kust, 'CustomResourceDefinition').map((d) => d.metadata.name).sort();
    expect(crds).toEqual(['admissionparams.loopguard.dev', 'clusterloopbackpolicies.loopguard.dev', 'loopbackpolicies.loopguard.dev', 'loopbackprobereports.loopguard.dev', 'loopbackrecords.loopguard.dev']);
    expect(kust.map((d) => d.kind).filter((k) => !compared.includes(k)).sort()).toEqual([...crds.map(() => 'CustomResourceDefinition'), 'Namespace']);
    // The selectors still select the pods.
    const d = deploymentOf(chart);
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    expect(managerOf(chart).image).toBe('loopguard:0.1.0');
  });

  it('renders the admission policy and binding where the minor serves them (config/components/admission-warnings), and neither with admissionPolicy.enabled=false', () => {
    const on = template('loopguard', 'loopguard-system', [], ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy']);
    expect(find(on, 'ValidatingAdmissionPolicy').map((o) => o.metadata.name)).toEqual(['loopguard-loopback-warning']);
    expect(find(on, 'ValidatingAdmissionPolicyBinding').map((o) => o.metadata.name)).toEqual(['loopguard-loopback-warning']);
    const off = template('loopguard', 'loopguard-system', ['admissionPolicy.enabled=false'], ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy']);
    expect(off.map((o) => o.kind).filter((k) => k.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    // Not where Helm does not know the apiserver serves the kind: against a cluster Helm's discovery lists the kinds it
    // serves; offline only --api-versions can say so. A --kube-version alone never renders it: offline, Helm's default
    // version is the binary's own build (an official helm v3.21 says v1.36), not the cluster's.
    const policies = (args: string[]) => {
      const r = helm(['template', 'loopguard', CHART_DIR, '--set', 'region=r', ...args]);
      expect(r.code).toBe(0);
      return parseAllDocuments(r.stdout).map((d) => (d.toJS() as Obj | null)?.kind).filter((k) => k?.startsWith('ValidatingAdmissionPolicy')).length;
    };
    const webhook = ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration'];
    // helm template without --api-versions leaves them out, so its output applies on every minor TKE runs (the README's
    // dry-run line), whatever version the helm binary assumes.
    expect(policies([])).toBe(0);
    expect(policies(['--kube-version', '1.28.0'])).toBe(0);
    expect(policies(['--kube-version', '1.30.0'])).toBe(0);
    expect(policies(['--kube-version', '1.36.0'])).toBe(0);
    expect(policies(webhook)).toBe(0);
    expect(policies(['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'])).toBe(2);
    expect(policies([...webhook, '--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'])).toBe(2);
    // The Role for the parameters stays: the operator keeps them either way.
    expect(find(off, 'Role', 'loopguard-admission-params')).toHaveLength(1);
    // Under another release, the binding names its policy and the parameters in the operator's (Lease) namespace.
    const other = template('lg', 'ops', ['operator.leaseNamespace=elsewhere'], ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy']);
    const [binding] = find(other, 'ValidatingAdmissionPolicyBinding') as Array<Obj & { spec: { policyName: string; paramRef: { name: string; namespace: string } } }>;
    expect(find(other, 'ValidatingAdmissionPolicy').map((o) => o.metadata.name)).toEqual([binding?.spec.policyName]);
    expect(binding?.spec.paramRef).toMatchObject({ name: 'loopguard-admission-params', namespace: 'elsewhere' });
    expect(find(other, 'Role', 'lg-loopguard-admission-params')[0]?.metadata.namespace).toBe('elsewhere');
  });

  it('under another release name and namespace, every reference meets', () => {
    const docs = template('lg', 'ops', ['serviceAccount.name=lg-sa']);
    const d = deploymentOf(docs);
    const manager = managerOf(docs);
    expect(d.metadata).toMatchObject({ name: 'lg-loopguard', namespace: 'ops' });
    const sa = d.spec.template.spec.serviceAccountName;
    expect(find(docs, 'ServiceAccount').map((s) => [s.metadata.name, s.metadata.namespace])).toEqual([[sa, 'ops']]);
    for (const b of [...find(docs, 'ClusterRoleBinding'), ...find(docs, 'RoleBinding')] as Array<Obj & { subjects: unknown; roleRef: { kind: string; name: string } }>) {
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: sa, namespace: 'ops' }]);
      expect(find(docs, b.roleRef.kind, b.roleRef.name)).toHaveLength(1);
    }
    // The Lease: the flag names it, and the leader-election Role allows exactly it, in the pod's namespace.
    expect(manager.args).toContain('--leader-election-id=lg-loopguard-leader');
    const election = find(docs, 'Role', 'lg-loopguard-leader-election')[0] as Obj & { rules: Array<{ resourceNames?: string[] }> };
    expect(election.metadata.namespace).toBe('ops');
    expect(election.rules.flatMap((r) => r.resourceNames ?? [])).toEqual(['lg-loopguard-leader']);
    // The region's ConfigMap and the credentials' Secret.
    const regionRef = manager.env.find((e) => e.name === 'TENCENTCLOUD_REGION')?.valueFrom?.configMapKeyRef?.name;
    // … and kube-system/loopguard-coredns-rules, whose name CoreDNS's mount and the RBAC's resourceNames fix (docs/dns.md).
    expect(find(docs, 'ConfigMap').map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort()).toEqual(['kube-system/loopguard-coredns-rules', `ops/${regionRef}`]);
    expect(manager.envFrom).toEqual([{ secretRef: { name: 'lg-loopguard-credentials', optional: true } }]);
  });

  it('maps every operator flag to a value, and the operator accepts what the chart passes', () => {
    const setByChart: Record<string, string> = {
      kubeconfig: 'in-cluster: no flag',
      identity: 'POD_NAME',
      region: 'region (ConfigMap)',
      metricsSecure: 'metrics.secure',
      metricsCertDir: 'metrics.certSecret (mounted there)',
    };
    const values = (parse(read('charts/loopguard/values.yaml').toString()) as { operator: Record<string, unknown> }).operator;
    const valueOf: Record<string, string> = { namespace: 'leaseNamespace', leaseName: 'leaseName', driftCheckIntervalMs: 'driftCheckInterval', shutdownGraceMs: 'shutdownGrace', tkeGraceMs: 'tkeGracePeriod', probeWindowMs: 'probeWindow', dnsCheckWaitMs: 'dnsCheckWait' };
    for (const f of FIELDS) {
      if (setByChart[f.key]) continue;
      expect({ flag: f.flag, hasValue: (valueOf[f.key] ?? f.key) in values }).toEqual({ flag: f.flag, hasValue: true });
    }
    const sets = [
      'operator.probePort=9090',
      'operator.metricsPort=9443',
      'metrics.certSecret=metrics-tls',
      'operator.probeHost=0.0.0.0',
      'operator.leaderElect=false',
      'replicas=1',
      'operator.leaseNamespace=elsewhere',
      'operator.leaseName=my-lease',
      'operator.clbEndpoint=clb.internal.tencentcloudapi.com',
      'operator.clbProtocol=https://',
      'operator.cloudRateLimit=5',
      'operator.cloudRateAdaptive=false',
      'operator.concurrency=8',
      'operator.driftCheckInterval=10m',
      'operator.observationCheckpoint=false',
      'operator.driftFullReadShare=10',
      'operator.tkeGracePeriod=30s',
      'operator.kubeProxyMode=ipvs',
      'operator.kubeProxyVersion=v1.20.6-tke.12',
      'operator.kubeProxyPreventLoopback=true',
      'operator.logLevel=debug',
      'operator.shutdownGrace=5s',
      'operator.dnsUpstream=10.0.0.2\\,10.0.0.3:53',
      'operator.corednsServers=10.96.0.10:53',
      'operator.dnsCheckWait=1m',
      'operator.clusterDomain=corp.internal',
      'extraArgs[0]=--log-level=warn',
    ];
    const docs = template('loopguard', 'loopguard-system', sets);
    const { args } = managerOf(docs);
    expect(args).toHaveLength(sets.length - 1 + 1); // replicas is no flag; --metrics-secure is always passed
    const config = loadConfig(args, { TENCENTCLOUD_REGION: 'ap-guangzhou', POD_NAME: 'loopguard-0' });
    expect(config).toEqual({
      ...DEFAULTS,
      identity: 'loopguard-0',
      region: 'ap-guangzhou',
      probePort: 9090,
      metricsSecure: true,
      metricsPort: 9443,
      metricsCertDir: '/etc/loopguard/metrics-certs',
      probeHost: '0.0.0.0',
      leaderElect: false,
      namespace: 'elsewhere',
      leaseName: 'my-lease',
      clbEndpoint: 'clb.internal.tencentcloudapi.com',
      clbProtocol: 'https://',
      cloudRateLimit: 5,
      cloudRateAdaptive: false,
      concurrency: 8,
      driftCheckIntervalMs: 600_000,
      observationCheckpoint: false,
      driftFullReadShare: 10,
      tkeGraceMs: 30_000,
      kubeProxyMode: 'ipvs',
      kubeProxyVersion: 'v1.20.6-tke.12',
      kubeProxyPreventLoopback: 'true',
      logLevel: 'warn', // extraArgs come last and win
      shutdownGraceMs: 5_000,
      dnsUpstream: '10.0.0.2,10.0.0.3:53',
      corednsServers: '10.96.0.10:53',
      dnsCheckWaitMs: 60_000,
      clusterDomain: 'corp.internal',
    });
    expect(deploymentOf(docs).spec.template.spec.containers[0]).toMatchObject({
      ports: [
        { name: 'probes', containerPort: 9090 },
        { name: 'metrics', containerPort: 9443 },
      ],
      volumeMounts: expect.arrayContaining([{ name: 'metrics-certs', mountPath: '/etc/loopguard/metrics-certs', readOnly: true }]),
    });
    expect(deploymentOf(docs).spec.template.spec['volumes']).toContainEqual({ name: 'metrics-certs', secret: { secretName: 'metrics-tls' } });
    // The Lease's Role follows the Lease.
    const election = find(docs, 'Role', 'loopguard-leader-election')[0] as Obj & { rules: Array<{ resourceNames?: string[] }> };
    expect(election.metadata.namespace).toBe('elsewhere');
    expect(election.rules.flatMap((r) => r.resourceNames ?? [])).toEqual(['my-lease']);
  });

  it("values.schema.json holds the operator's limits, so helm refuses what the operator would refuse", () => {
    const schema = JSON.parse(read('charts/loopguard/values.schema.json').toString()) as {
      properties: { operator: { properties: Record<string, { enum?: unknown[]; minimum?: number; maximum?: number; pattern?: string }> } };
    };
    const props = schema.properties.operator.properties;
    const valueOf: Record<string, string> = { driftCheckIntervalMs: 'driftCheckInterval', shutdownGraceMs: 'shutdownGrace', tkeGraceMs: 'tkeGracePeriod', probeWindowMs: 'probeWindow', dnsCheckWaitMs: 'dnsCheckWait' };
    for (const f of FIELDS) {
      const p = props[valueOf[f.key] ?? f.key];
      if (!p) continue; // kubeconfig, identity, region: set by the chart
      if (f.allowed) expect({ flag: f.flag, allowed: (p.enum ?? []).filter((v) => typeof v === 'string').sort() }).toEqual({ flag: f.flag, allowed: [...new Set(['', ...f.allowed])].sort() });
      // A container port cannot be 0 (the operator's "any free port").
      if (f.kind === 'int' && f.key !== 'probePort' && f.key !== 'metricsPort') expect({ flag: f.flag, min: p.minimum, max: p.maximum }).toEqual({ flag: f.flag, min: f.min, max: f.max });
      if (f.kind === 'duration') {
        const pattern = new RegExp(p.pattern ?? '');
        for (const d of ['5m', '30s', '1500ms', '1h', '90', '2.5m', '5x', 'm', '-1s']) expect({ flag: f.flag, d, ok: pattern.test(d) }).toEqual({ flag: f.flag, d, ok: parseDuration(d) !== undefined });
      }
    }
    for (const bad of ['operator.kubeProxyMode=userspace', 'operator.cloudRateLimit=21', 'operator.concurrency=0', 'operator.logLevel=trace', 'operator.shutdownGrace=soon', 'operator.kubeProxyVersion=1.20', 'regoin=ap-guangzhou', 'operator.unknownFlag=1']) {
      const r = helm(['template', 'loopguard', CHART_DIR, '--set', 'region=ap-guangzhou', '--set', bad]);
      expect({ bad, code: r.code, err: r.stderr }).toEqual({ bad, code: 1, err: expect.stringContaining("values don't meet the specifications of the schema") });
    }
  });

  it('refuses two replicas without leader election', () => {
    const r = helm(['template', 'loopguard', CHART_DIR, '--set', 'region=r', '--set', 'operator.leaderElect=false']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('operator.leaderElect=false needs replicas: 1');
  });

  it('pins the image by tag or digest', () => {
    const image = (sets: string[]) => managerOf(template('loopguard', 'loopguard-system', sets)).image;
    expect(image(['image.repository=registry.example.com/team/loopguard', 'image.tag=1.2.3'])).toBe('registry.example.com/team/loopguard:1.2.3');
    expect(image(['image.digest=sha256:0123'])).toBe('loopguard@sha256:0123');
    expect(image(['image.tag=1.2.3', 'image.digest=sha256:0123'])).toBe('loopguard:1.2.3@sha256:0123');
  });

  it('takes credentials from a named Secret (required), from none, and pod identity annotations on the ServiceAccount', () => {
    expect(managerOf(template('loopguard', 'loopguard-system', ['credentials.existingSecret=cam-keys'])).envFrom).toEqual([{ secretRef: { name: 'cam-keys', optional: false } }]);
    expect(managerOf(template('loopguard', 'loopguard-system', ['credentials.useSecret=false'])).envFrom).toBeUndefined();
    const docs = template('loopguard', 'loopguard-system', ['serviceAccount.annotations.tke\\.cloud\\.tencent\\.com/role-arn=qcs::cam::uin/1:roleName/loopguard']);
    expect(find(docs, 'ServiceAccount')[0]?.metadata.annotations).toEqual({ 'tke.cloud.tencent.com/role-arn': 'qcs::cam::uin/1:roleName/loopguard' });
  });

  it('places the pods as told (nodeSelector, tolerations, affinity, priorityClassName, resources)', () => {
    const spec = deploymentOf(
      template('loopguard', 'loopguard-system', [
        'nodeSelector.pool=system',
        'tolerations[0].key=dedicated',
        'tolerations[0].operator=Exists',
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool',
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
        'priorityClassName=system-cluster-critical',
        'resources.limits.memory=512Mi',
      ]),
    ).spec.template.spec;
    expect(spec).toMatchObject({
      nodeSelector: { pool: 'system' },
      tolerations: [{ key: 'dedicated', operator: 'Exists' }],
      priorityClassName: 'system-cluster-critical',
      affinity: { nodeAffinity: expect.anything() },
    });
    expect(spec['affinity']).not.toHaveProperty('podAntiAffinity');
    expect(spec.containers[0]).toMatchObject({ resources: { limits: { memory: '512Mi' } } });
  });

  it('renders the opt-ins from config/monitoring and config/argocd, and none by default', () => {
    const all = template('loopguard', 'loopguard-system', [
      'metrics.service.enabled=true',
      'metrics.serviceMonitor.enabled=true',
      'metrics.prometheusRule.enabled=true',
      'argocd.healthCheck.enabled=true',
      'podDisruptionBudget.enabled=true',
      'metrics.dashboard.enabled=true',
    ]);
    const monitoring = kustomize('config/monitoring');
    // The dashboard ConfigMap: config/monitoring's data and sidecar label, under the release's name.
    const [dashboard] = find(all, 'ConfigMap', 'loopguard-dashboard') as Array<Obj & { data: unknown; metadata: { labels?: Record<string, string> } }>;
    const [theirDashboard] = find(monitoring, 'ConfigMap', 'loopguard-dashboard') as Array<Obj & { data: unknown }>;
    expect(dashboard?.data).toEqual(theirDashboard?.data);
    expect(dashboard?.metadata.labels?.['grafana_dashboard']).toBe('1');
    for (const kind of ['Service', 'ServiceMonitor', 'PrometheusRule']) {
      const [ours] = find(all, kind) as Array<Obj & { spec: unknown }>;
      const [theirs] = find(monitoring, kind) as Array<Obj & { spec: unknown }>;
      expect(ours?.metadata.name).toBe(theirs?.metadata.name);
      expect(ours?.metadata.namespace).toBe('loopguard-system');
      // Helm's selectors carry app.kubernetes.io/instance too; everything else is config/monitoring's.
      const spec = structuredClone(ours?.spec) as Record<string, { matchLabels?: Record<string, string> } & Record<string, string>>;
      if (kind === 'Service') delete spec['selector']?.['app.kubernetes.io/instance'];
      if (kind === 'ServiceMonitor') delete spec['selector']?.matchLabels?.['app.kubernetes.io/instance'];
      expect({ kind, spec }).toEqual({ kind, spec: theirs?.spec });
    }
    const service = find(all, 'Service')[0] as Obj & { spec: { selector: Record<string, string> } };
    expect(deploymentOf(all).spec.template.metadata.labels).toEqual(service.spec.selector);
    const [argocd] = find(kustomize('config/argocd'), 'ConfigMap') as Array<Obj & { data: unknown }>;
    expect(find(all, 'ConfigMap', 'argocd-cm')).toEqual([argocd]);
    expect(find(all, 'PodDisruptionBudget')).toEqual([expect.objectContaining({ spec: { minAvailable: 1, selector: { matchLabels: deploymentOf(all).spec.selector.matchLabels } } })]);
    const none = template('loopguard', 'loopguard-system');
    for (const kind of ['Service', 'ServiceMonitor', 'PrometheusRule', 'PodDisruptionBudget']) expect(find(none, kind)).toEqual([]);
    expect(find(none, 'ConfigMap', 'argocd-cm')).toEqual([]);
    expect(find(none, 'ConfigMap', 'loopguard-dashboard')).toEqual([]);
  });
  // Issue 22 #6: /metrics names every tenant's targets; by default only ServiceAccounts allowed to get it read it.
  it('serves /metrics authenticated by default: HTTPS port, the review RBAC, a reader ClusterRole, an https ServiceMonitor', () => {
    const docs = template('loopguard', 'loopguard-system', ['metrics.serviceMonitor.enabled=true']);
    const manager = managerOf(docs) as Container & { ports: Array<{ name: string; containerPort: number }> };
    expect(manager.args).toEqual(expect.arrayContaining(['--metrics-port=8443', '--metrics-secure=true']));
    expect(manager.ports).toContainEqual({ name: 'metrics', containerPort: 8443 });
    const rules = (name: string) => (find(docs, 'ClusterRole', name)[0] as (Obj & { rules: unknown }) | undefined)?.rules;
    expect(rules('loopguard-metrics-auth')).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    expect(rules('loopguard-metrics-reader')).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const binding = find(docs, 'ClusterRoleBinding', 'loopguard-metrics-auth')[0] as Obj & { subjects: unknown };
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'loopguard', namespace: 'loopguard-system' }]);
    const service = find(docs, 'Service')[0] as Obj & { spec: { ports: unknown[] } };
    expect(service.spec.ports).toEqual([{ name: 'metrics', port: 8443, targetPort: 'metrics', protocol: 'TCP' }]);
    const monitor = find(docs, 'ServiceMonitor')[0] as Obj & { spec: { endpoints: Array<Record<string, unknown>> } };
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'metrics', scheme: 'https', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token', tlsConfig: { insecureSkipVerify: true } });
  });

  it('metrics.secure=false: /metrics back on the probe port, plain, and no review RBAC', () => {
    const docs = template('loopguard', 'loopguard-system', ['metrics.secure=false', 'metrics.serviceMonitor.enabled=true', 'metrics.certSecret=ignored']);
    const manager = managerOf(docs) as Container & { ports: Array<{ name: string }> };
    expect(manager.args).toContain('--metrics-secure=false');
    expect(manager.args.some((a) => a.startsWith('--metrics-port') || a.startsWith('--metrics-cert-dir'))).toBe(false);
    expect(manager.ports.map((p) => p.name)).toEqual(['probes']);
    expect(find(docs, 'ClusterRole').map((r) => r.metadata.name).sort()).toEqual(['loopguard-cluster-view', 'loopguard-manager', 'loopguard-view']);
    expect((find(docs, 'Service')[0] as Obj & { spec: { ports: unknown[] } }).spec.ports).toEqual([{ name: 'metrics', port: 8081, targetPort: 'probes', protocol: 'TCP' }]);
    expect((find(docs, 'ServiceMonitor')[0] as Obj & { spec: { endpoints: unknown[] } }).spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s', honorLabels: true }]);
    expect(loadConfig(manager.args, { TENCENTCLOUD_REGION: 'r' }).metricsSecure).toBe(false);
  });

  // docs/cluster-policy.md §9: the view role always, the edit role only when asked; the same rules and aggregation
  // labels as config/rbac and config/components/aggregate-to-edit (the comparison above drops labels).
  it('renders the aggregated roles: loopguard-view and loopguard-cluster-view always, loopguard-edit with rbac.aggregateToEdit=true (as the kustomize component)', () => {
    const aggregation = (o: Obj | undefined) => Object.fromEntries(Object.entries(o?.metadata.labels ?? {}).filter(([k]) => k.startsWith('rbac.authorization.k8s.io/aggregate-to-')));
    const rulesOf = (o: Obj | undefined) => (o as (Obj & { rules: unknown }) | undefined)?.rules;
    const off = template('loopguard', 'loopguard-system');
    expect(find(off, 'ClusterRole', 'loopguard-edit')).toEqual([]);
    const [view] = find(off, 'ClusterRole', 'loopguard-view');
    const [theirView] = find(kustomize('config/default'), 'ClusterRole', 'loopguard-view');
    expect(aggregation(view)).toEqual({
      'rbac.authorization.k8s.io/aggregate-to-view': 'true',
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
      'rbac.authorization.k8s.io/aggregate-to-cluster-reader': 'true',
    });
    expect(aggregation(theirView)).toEqual(aggregation(view));
    // Namespaced kinds only: a cluster-wide view binding must not hand out every cluster policy and record (issue 37).
    expect(rulesOf(view)).toEqual([
      { apiGroups: ['loopguard.dev'], resources: ['loopbackpolicies'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['openreports.io'], resources: ['reports'], resourceNames: ['loopguard'], verbs: ['get', 'list', 'watch'] },
    ]);
    // The cluster-scoped kinds: their own role, aggregated to cluster-reader only (as cert-manager-cluster-view).
    const [clusterView] = find(off, 'ClusterRole', 'loopguard-cluster-view');
    const [theirClusterView] = find(kustomize('config/default'), 'ClusterRole', 'loopguard-cluster-view');
    expect(aggregation(clusterView)).toEqual({ 'rbac.authorization.k8s.io/aggregate-to-cluster-reader': 'true' });
    expect(aggregation(theirClusterView)).toEqual(aggregation(clusterView));
    expect(rulesOf(clusterView)).toEqual([{ apiGroups: ['loopguard.dev'], resources: ['clusterloopbackpolicies', 'loopbackrecords'], verbs: ['get', 'list', 'watch'] }]);
    expect(rulesOf(theirClusterView)).toEqual(rulesOf(clusterView));
    // The opt-in: the chart's value against an overlay of config/default with the component, as the component's
    // kustomization.yaml tells users to write it (kustomize takes only relative paths).
    const on = template('loopguard', 'loopguard-system', ['rbac.aggregateToEdit=true']);
    const overlay = mkdtempSync(join(tmpdir(), 'loopguard-edit-'));
    try {
      const rel = relative(overlay, REPO_ROOT);
      writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${rel}/config/default]\ncomponents: [${rel}/config/components/aggregate-to-edit]\n`);
      const kust = kustomize(relative(REPO_ROOT, overlay));
      const roles = (docs: Obj[]) => find(docs, 'ClusterRole').map(normalise).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      expect(roles(on)).toEqual(roles(kust));
      const [edit] = find(on, 'ClusterRole', 'loopguard-edit');
      expect(aggregation(edit)).toEqual(aggregation(find(kust, 'ClusterRole', 'loopguard-edit')[0]));
      expect(aggregation(edit)).toEqual({ 'rbac.authorization.k8s.io/aggregate-to-edit': 'true', 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' });
      expect(rulesOf(edit)).toEqual([{ apiGroups: ['loopguard.dev'], resources: ['loopbackpolicies'], verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] }]);
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
    // No aggregated role writes cluster policies: they are for cluster admins (§9).
    for (const role of [...find(on, 'ClusterRole', 'loopguard-view'), ...find(on, 'ClusterRole', 'loopguard-edit')] as Array<Obj & { rules: Array<{ resources: string[]; verbs: string[] }> }>) {
      for (const rule of role.rules) if (rule.resources.includes('clusterloopbackpolicies')) expect(rule.verbs).toEqual(['get', 'list', 'watch']);
    }
    const bad = helm(['template', 'loopguard', CHART_DIR, '--set', 'region=r', '--set', 'rbac.aggregateToEdit=yes']);
    expect({ code: bad.code, err: bad.stderr }).toEqual({ code: 1, err: expect.stringContaining("values don't meet the specifications of the schema") });
  });

  it('the NetworkPolicy option renders config/network-policy (off by default)', () => {
    expect(find(template('loopguard', 'loopguard-system'), 'NetworkPolicy')).toEqual([]);
    const [ours] = find(template('loopguard', 'loopguard-system', ['metrics.networkPolicy.enabled=true']), 'NetworkPolicy') as Array<Obj & { spec: { podSelector: { matchLabels: Record<string, string> } } }>;
    const [theirs] = parseAllDocuments(read('config/network-policy/allow_metrics_traffic.yaml').toString()).map((d) => d.toJS() as Obj & { spec: unknown });
    expect(ours?.metadata.name).toBe(theirs?.metadata.name);
    const spec = structuredClone(ours?.spec) as { podSelector: { matchLabels: Record<string, string> } };
    delete spec.podSelector.matchLabels['app.kubernetes.io/instance'];
    expect(spec).toEqual(theirs?.spec);
  });
});
