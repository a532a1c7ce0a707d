// charts/loopguard against the shared test kube-apiserver (issue 11 #2):
//   - `helm template --include-crds … | kubectl apply --dry-run=server --validate=strict -f -` succeeds: the apiserver
//     accepts every object the chart renders, by default and with the opt-ins that need no third-party CRDs
//     (metrics Service, PodDisruptionBudget, NetworkPolicy), as the chart README and the README's Install section say;
//   - the README's "Helm" `helm lint` and `helm template … | kubectl apply --dry-run=server` lines run as written;
//   - `helm install`, `helm upgrade` and `helm uninstall` work for real (the CRDs exist already, so Helm leaves them
//     alone), and uninstall removes the cluster-wide RBAC it created.
// The test control plane runs no controller-manager or kubelet, so no pod starts; the image test's cluster does that.
// Gate: test/support/helm.ts (skipped without Go unless LOOPGUARD_REQUIRE_HELM_TEST=true).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createNamespace, deleteNamespace, kubeconfigPath, kubectl } from '../support/kube.js';
import { CHART_DIR, helmBinary, runHelm, runHelmLine } from '../support/helm.js';
import { markdownSection, shellLines } from '../support/readme.js';

const gate = helmBinary('test/integration/helm-chart.test.ts');
const suite = gate.skip ? describe.skip : describe;
const helm = (args: string[]) => runHelm(gate.helm ?? 'helm', [...args, '--kubeconfig', kubeconfigPath()]);

suite(`charts/loopguard on the test apiserver${gate.skip ? ` (skipped: ${gate.skip})` : ''}`, () => {
  let ns = '';
  // A release name of its own: ClusterRoles are cluster-wide and other suites run config/rbac's loopguard-manager.
  const release = `lg-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    ns = await createNamespace('helm-chart');
  });
  afterAll(async () => {
    if (ns) {
      helm(['uninstall', release, '-n', ns, '--ignore-not-found']);
      await deleteNamespace(ns);
    }
  });

  it.each([
    ['the defaults', []],
    ['the opt-ins without third-party CRDs', ['--set', 'metrics.service.enabled=true', '--set', 'podDisruptionBudget.enabled=true', '--set', 'credentials.existingSecret=cam-keys', '--set', 'metrics.networkPolicy.enabled=true']],
    // The probe agent's DaemonSet, Role and own-node admission policy (docs/probe.md).
    ['the probe agent', ['--set', 'probe.enabled=true']],
  ])('kubectl apply --dry-run=server accepts what helm template renders: %s', async (_what, sets) => {
    // As a GitOps tool renders for this apiserver (it serves VAP v1): with its API versions, so the admission policy is
    // in (helm template alone leaves it out: docs/kubernetes-versions.md §3).
    const rendered = helm(['template', release, CHART_DIR, '-n', ns, '--include-crds', '--set', 'region=ap-guangzhou', '--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy', ...sets]);
    expect({ code: rendered.code, stderr: rendered.stderr }).toEqual({ code: 0, stderr: '' });
    const applied = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], { input: rendered.stdout });
    // The harness created the CRDs without kubectl apply: that warning is the only one allowed.
    const stderr = applied.stderr.split('\n').filter((l) => l && !l.includes('is missing the kubectl.kubernetes.io/last-applied-configuration annotation'));
    expect({ code: applied.code, stderr }).toEqual({ code: 0, stderr: [] });
    for (const kind of [
      'customresourcedefinition.apiextensions.k8s.io/loopbackpolicies.loopguard.dev',
      'customresourcedefinition.apiextensions.k8s.io/clusterloopbackpolicies.loopguard.dev',
      `clusterrole.rbac.authorization.k8s.io/${release}-loopguard-manager`,
      `deployment.apps/${release}-loopguard`,
      `validatingadmissionpolicy.admissionregistration.k8s.io/${release}-loopguard-loopback-warning`,
      `validatingadmissionpolicybinding.admissionregistration.k8s.io/${release}-loopguard-loopback-warning`,
    ]) {
      expect(applied.stdout).toContain(kind);
    }
  });

  it("runs the README's helm lint and helm template | kubectl apply --dry-run=server as written", async () => {
    const commands = shellLines(markdownSection('### Helm')).filter((c) => c.startsWith('helm lint') || c.startsWith('helm template'));
    expect(commands).toEqual([expect.stringMatching(/^helm lint charts\/loopguard /), expect.stringMatching(/^helm template .*\| kubectl apply --dry-run=server -f -$/)]);
    // The README creates loopguard-system first; other suites share it, so only make sure it exists (a dry run
    // changes nothing in it).
    const created = await kubectl(['create', 'namespace', 'loopguard-system']);
    if (created.code !== 0) expect(created.stderr).toContain('AlreadyExists');
    for (const command of commands) {
      const r = runHelmLine(gate.helm ?? 'helm', command, kubeconfigPath());
      const stderr = r.stderr.split('\n').filter((l) => l && !l.includes('is missing the kubectl.kubernetes.io/last-applied-configuration annotation'));
      expect({ command, code: r.code, stderr }).toEqual({ command, code: 0, stderr: [] });
      if (command.startsWith('helm template')) expect(r.stdout).toContain('deployment.apps/loopguard');
    }
  });

  it('installs, upgrades and uninstalls with helm', async () => {
    const installed = helm(['install', release, CHART_DIR, '-n', ns, '--set', 'region=ap-guangzhou']);
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(installed.stdout).toContain('STATUS: deployed');
    const deploy = await kubectl(['-n', ns, 'get', 'deploy', `${release}-loopguard`, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']);
    expect(deploy).toMatchObject({ code: 0 });
    expect(JSON.parse(deploy.stdout)).toEqual(['--probe-port=8081', '--metrics-port=8443', '--metrics-secure=true', `--leader-election-id=${release}-loopguard-leader`]);
    // Helm's discovery sees the 1.33 apiserver serve ValidatingAdmissionPolicy: the policy and its binding are
    // installed, the binding's parameters in the release's namespace (no operator runs here: the policy stays silent).
    const vap = `${release}-loopguard-loopback-warning`;
    expect(await kubectl(['get', 'validatingadmissionpolicy', vap, '-o', 'name'])).toMatchObject({ code: 0 });
    const paramRef = await kubectl(['get', 'validatingadmissionpolicybinding', vap, '-o', 'jsonpath={.spec.policyName} {.spec.paramRef.namespace} {.spec.validationActions}']);
    expect(paramRef.stdout).toBe(`${vap} ${ns} ["Warn","Audit"]`);

    const upgraded = helm(['upgrade', release, CHART_DIR, '-n', ns, '--reuse-values', '--set', 'operator.logLevel=debug']);
    expect({ code: upgraded.code, stderr: upgraded.stderr }).toEqual({ code: 0, stderr: '' });
    const after = await kubectl(['-n', ns, 'get', 'deploy', `${release}-loopguard`, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']);
    expect(JSON.parse(after.stdout)).toContain('--log-level=debug');

    const removed = helm(['uninstall', release, '-n', ns]);
    expect({ code: removed.code, stderr: removed.stderr }).toEqual({ code: 0, stderr: '' });
    const role = await kubectl(['get', 'clusterrole', `${release}-loopguard-manager`]);
    expect(role.code).not.toBe(0);
    expect((await kubectl(['get', 'validatingadmissionpolicy', `${release}-loopguard-loopback-warning`])).code).not.toBe(0);
    // The CRDs stay (Helm never deletes crds/): deleting them would delete every LoopbackPolicy.
    expect(await kubectl(['get', 'crd', 'loopbackpolicies.loopguard.dev'])).toMatchObject({ code: 0 });
  });
});
