// The probe agent's manifests: config/components/probe and the chart's probe.enabled render the same ServiceAccount,
// Role, RoleBinding and DaemonSet (labels, selectors and the image aside), the DaemonSet runs as the operator does
// (non-root, read-only, no capability) with the operator's image, and the chart renders none of it by default.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../../controlplane/crds.js';
import { CHART_DIR, helmBinary, runHelm } from '../../support/helm.js';

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } };
interface PodSpec {
  serviceAccountName: string;
  securityContext: unknown;
  containers: Array<{ name: string; image: string; args: string[]; securityContext: unknown; resources: unknown }>;
}
interface Workload extends Obj {
  spec: { selector: unknown; template: { metadata: unknown; spec: PodSpec } };
}

const gate = helmBinary('test/unit/probe/manifests.test.ts');
const suite = gate.skip ? describe.skip : describe;

function kustomizeWithProbe(components = ['probe']): Obj[] {
  const overlay = mkdtempSync(join(tmpdir(), 'loopguard-probe-'));
  const rel = relative(overlay, REPO_ROOT);
  writeFileSync(join(overlay, 'kustomization.yaml'), `resources: [${rel}/config/default]\ncomponents: [${components.map((c) => `${rel}/config/components/${c}`).join(', ')}]\n`);
  try {
    return parseAllDocuments(execFileSync('kubectl', ['kustomize', overlay], { encoding: 'utf8', timeout: 60_000 })).map((d) => d.toJS() as Obj);
  } finally {
    rmSync(overlay, { recursive: true, force: true });
  }
}

const VAP_SERVED = ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'];

function chart(sets: string[], args: string[] = []): Obj[] {
  const r = runHelm(gate.helm ?? 'helm', ['template', 'loopguard', CHART_DIR, '-n', 'loopguard-system', '--set', 'region=ap-guangzhou', ...sets.flatMap((s) => ['--set', s]), ...args]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj | null).filter((d): d is Obj => d !== null);
}

const probeObjects = (docs: Obj[]) => docs.filter((d) => d.metadata.name === 'loopguard-probe' || d.metadata.name === 'loopguard-probe-own-node');
const workload = (docs: Obj[], kind: string) => docs.find((d) => d.kind === kind) as Workload;

function normalise(o: Obj): Obj {
  const c = structuredClone(o);
  delete c.metadata.labels;
  if (c.kind === 'DaemonSet') {
    const d = c as Workload;
    d.spec.selector = {};
    d.spec.template.metadata = {};
    for (const container of d.spec.template.spec.containers) container.image = 'IMAGE';
  }
  return c;
}

describe('config/components/probe', () => {
  const docs = kustomizeWithProbe();

  it('runs `loopguard probe` in the operator image, as the operator runs (non-root, read-only, no capability)', () => {
    const ds = workload(docs, 'DaemonSet');
    const op = workload(docs, 'Deployment');
    const [agent] = ds.spec.template.spec.containers;
    const [manager] = op.spec.template.spec.containers;
    expect(agent!.image).toBe(manager!.image);
    expect(agent!.args).toEqual(['probe', '--rate=5']);
    expect(agent!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(agent!.securityContext).toEqual(manager!.securityContext);
    expect(ds.spec.template.spec.securityContext).toEqual(op.spec.template.spec.securityContext);
    expect(ds.spec.template.spec.serviceAccountName).toBe('loopguard-probe');
    expect(agent!.resources).toEqual({ requests: { cpu: '10m', memory: '112Mi' }, limits: { cpu: '200m', memory: '192Mi' } });
  });

  it("grants the agent the plan (list and watch by name) and its reports' type, nothing else", () => {
    const role = docs.find((d) => d.kind === 'Role' && d.metadata.name === 'loopguard-probe') as Obj & { rules: unknown };
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['loopguard-probe-plan'], verbs: ['list', 'watch'] },
      { apiGroups: ['loopguard.dev'], resources: ['loopbackprobereports'], verbs: ['create', 'get', 'update'] },
    ]);
    const bindings = docs.filter((d) => (d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding') && JSON.stringify(d['subjects']).includes('"loopguard-probe"'));
    expect(bindings.map((b) => `${b.kind}/${b.metadata.name}`)).toEqual(['RoleBinding/loopguard-probe']);
  });
});

suite('the chart', () => {
  it('renders nothing of the probe by default', () => {
    expect(probeObjects(chart([], VAP_SERVED)).map((d) => d.kind)).toEqual([]);
  });

  it('renders with probe.enabled=true what config/components/probe and probe-own-node do where VAP v1 is served, and no admission policy where not', () => {
    const ours = new Map(probeObjects(chart(['probe.enabled=true'], VAP_SERVED)).map((d) => [d.kind, normalise(d)]));
    const theirs = new Map(probeObjects(kustomizeWithProbe(['probe', 'probe-own-node'])).map((d) => [d.kind, normalise(d)]));
    expect([...ours.keys()].sort()).toEqual(['DaemonSet', 'Role', 'RoleBinding', 'ServiceAccount', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    for (const [k, o] of ours) expect({ k, o }).toEqual({ k, o: theirs.get(k) });
    expect(probeObjects(chart(['probe.enabled=true', 'probe.ownNodePolicy=false'], VAP_SERVED)).map((d) => d.kind)).not.toContain('ValidatingAdmissionPolicy');
  });

  it("with operator.leaseNamespace, the agents read the plan and write reports in the operator's namespace, with their rights there", () => {
    const docs = probeObjects(chart(['probe.enabled=true', 'operator.leaseNamespace=ops']));
    const agent = workload(docs, 'DaemonSet');
    expect(agent.metadata.namespace).toBe('loopguard-system');
    expect(agent.spec.template.spec.containers[0]!.args).toEqual(['probe', '--rate=5', '--namespace=ops']);
    expect(docs.filter((d) => d.kind === 'Role' || d.kind === 'RoleBinding').map((d) => `${d.kind} ${d.metadata.namespace}`)).toEqual(['Role ops', 'RoleBinding ops']);
    expect((docs.find((d) => d.kind === 'RoleBinding') as Obj & { subjects: unknown[] }).subjects).toEqual([{ kind: 'ServiceAccount', name: 'loopguard-probe', namespace: 'loopguard-system' }]);
  });

  it('renders with probe.enabled=true what config/components/probe does (labels, selectors, image aside) where VAP v1 is not served', () => {
    const ours = new Map(probeObjects(chart(['probe.enabled=true'])).map((d) => [d.kind, normalise(d)]));
    const theirs = new Map(probeObjects(kustomizeWithProbe()).map((d) => [d.kind, normalise(d)]));
    expect([...ours.keys()].sort()).toEqual(['DaemonSet', 'Role', 'RoleBinding', 'ServiceAccount']);
    expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
    for (const [k, o] of ours) expect({ k, o }).toEqual({ k, o: theirs.get(k) });
  });
});
