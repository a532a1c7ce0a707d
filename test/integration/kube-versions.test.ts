// Issue 37 #2: loopguard installs on every Kubernetes minor TKE runs (docs/kubernetes-versions.md). For each extra minor the test
// ground can build (test/controlplane/versions/<minor>: the oldest TKE still runs clusters of, and the newest TKE
// offers), on a control plane of that minor started here:
//   - `kubectl apply --server-side -k config/default` exits 0 (no ValidatingAdmissionPolicy in it: 1.28 serves none),
//     the CRDs' CEL rules keep their reason/fieldPath/messageExpression, and a policy created without mode under
//     the old CRD (default Enforce) keeps Enforce while a new one gets Audit (docs/kubernetes-versions.md §5);
//   - the admission-warnings component applies where the minor serves admissionregistration.k8s.io/v1, and is refused
//     where it does not (why it is a component and not in config/default);
//   - `helm install` succeeds (the chart renders the policy only where the apiserver serves it), and the README's
//     `helm template … | kubectl apply --dry-run=server` line passes (offline, the chart leaves the policy out unless
//     --kube-version says the minor serves it);
//   - the operator (this checkout, under config/rbac's ServiceAccount) becomes Ready, and a ClusterLoopbackPolicy
//     with no `mode` is stored as Audit, reaches Ready (AuditComplete) reporting the at-risk Service, and loopguard
//     made no CLB write (the emulator's write log and per-caller counters).
// One control plane per minor, stopped at the end; the first run builds each kube-apiserver (cached after).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterLoopbackPolicy } from '../../src/api/clusterloopbackpolicy.js';
import { findCondition } from '../../src/api/conditions.js';
import { ensureControlPlaneBinaries, extraKubeVersions } from '../controlplane/binaries.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { CHART_DIR, helmBinary, runHelm, runHelmLine } from '../support/helm.js';
import { kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { defaultOverlay } from '../support/overlay.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const gate = helmBinary('test/integration/kube-versions.test.ts');
const MINORS = extraKubeVersions();
/** Minors from which the apiserver serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (GA in 1.30). */
const servesVapV1 = (minor: string) => Number(minor.split('.')[1]) >= 30;
/** A build can take 20 min on a loaded 2-core machine; a cached one returns at once. */
const BUILD_TIMEOUT_MS = 40 * 60_000;

it('the test ground has the oldest minor TKE still runs (1.28) and a newer one than the default', () => {
  expect(MINORS).toContain('1.28');
  expect(MINORS.some((m) => Number(m.split('.')[1]) > 33)).toBe(true);
});

describe.each(MINORS)('Kubernetes %s', (minor) => {
  let cp: ControlPlaneState | undefined;
  let tke: LocalTke | undefined;
  const admin = () => ({ kubeconfig: cp?.kubeconfig ?? '' });
  const helm = (args: string[]) => runHelm(gate.helm ?? 'helm', [...args, '--kubeconfig', cp?.kubeconfig ?? '']);
  const logs = () => `--- operator logs (tail) ---\n${tke?.operator?.logs().slice(-4000) ?? ''}`;

  beforeAll(async () => {
    if (gate.skip) throw new Error(`helm is needed here: ${gate.skip}`);
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries({ kubeVersion: minor }) });
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await tke?.stop();
    if (cp) await stopControlPlane(cp);
  });

  it(`serves v${minor}`, () => {
    expect(cp?.version).toMatch(new RegExp(`^v${minor.replace('.', '\\.')}\\.\\d+$`));
  });

  // Before anything is installed, as the README runs it (after creating the namespace): a user installs either with
  // kustomize or with Helm, and the two Deployments' selectors differ.
  it("the README's helm template | kubectl apply --dry-run=server line passes on a fresh cluster", async () => {
    expect((await kubectl(['create', 'namespace', 'loopguard-system'], admin())).code).toBe(0);
    // The README's dry run as written: helm template knows nothing of the cluster, and the chart then leaves the
    // policy out (docs/kubernetes-versions.md §3), so the same line passes on every minor.
    const line = 'helm template loopguard charts/loopguard -n loopguard-system --include-crds --set region=ap-guangzhou | kubectl apply --dry-run=server -f -';
    const r = runHelmLine(gate.helm ?? 'helm', line, cp?.kubeconfig ?? '');
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain('deployment.apps/loopguard created (server dry run)');
    expect(r.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/clusterloopbackpolicies.loopguard.dev created (server dry run)');
    expect(r.stdout).not.toContain('validatingadmissionpolicy');
  });

  // docs/kubernetes-versions.md §5: the CRDs defaulted mode to Enforce until issue 37. The apiserver stored that default in every
  // policy created without mode, so those keep enforcing after the upgrade; only new ones get Audit.
  it('upgrade: a policy created without mode under the old CRD (default Enforce) still reads Enforce after config/default', async () => {
    const current = readFileSync(join(REPO_ROOT, 'crds/loopguard.dev_loopbackpolicies.yaml'), 'utf8');
    const old = current.replace(/^( +)default: Audit$/m, '$1default: Enforce');
    expect(old).not.toBe(current);
    expect((await kubectl(['apply', '--server-side', '-f', '-'], { ...admin(), input: old })).code).toBe(0);
    expect((await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/loopbackpolicies.loopguard.dev'], admin())).code).toBe(0);
    expect((await kubectl(['create', 'namespace', 'legacy'], admin())).code).toBe(0);
    const bare = (name: string) => `apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: ${name}, namespace: legacy}\n`;
    expect((await kubectl(['create', '-f', '-'], { ...admin(), input: bare('before') })).code).toBe(0);
  });

  it('kubectl apply --server-side -k config/default exits 0', async () => {
    const applied = await kubectl(['apply', '--server-side', '-k', join(REPO_ROOT, 'config/default')], admin());
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
    expect(applied.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/clusterloopbackpolicies.loopguard.dev serverside-applied');
    expect(applied.stdout).toContain('deployment.apps/loopguard serverside-applied');
    expect(applied.stdout).not.toContain('validatingadmissionpolicy');
    const established = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/loopbackpolicies.loopguard.dev', 'crd/clusterloopbackpolicies.loopguard.dev', 'crd/loopbackrecords.loopguard.dev', 'crd/admissionparams.loopguard.dev'], admin());
    expect(established.code).toBe(0);
    // The CEL rules' reason and fieldPath are kept (an apiserver that does not know a field drops it silently).
    for (const file of ['loopguard.dev_loopbackpolicies.yaml', 'loopguard.dev_clusterloopbackpolicies.yaml']) {
      const text = readFileSync(join(REPO_ROOT, 'crds', file), 'utf8');
      // The spec only: the CRD's own status.conditions have reasons too.
      const stored = JSON.stringify((JSON.parse((await kubectl(['get', `crd/${file.replace(/^loopguard\.dev_(.*)\.yaml$/, '$1.loopguard.dev')}`, '-o', 'json'], admin())).stdout) as { spec: unknown }).spec);
      for (const field of ['reason', 'fieldPath', 'messageExpression']) {
        const written = text.match(new RegExp(`^\\s+${field}:`, 'gm'))?.length ?? 0;
        expect({ file, field, stored: stored.match(new RegExp(`"${field}":`, 'g'))?.length ?? 0 }).toEqual({ file, field, stored: written });
        expect(written).toBeGreaterThan(0);
      }
    }
    // The upgrade note: the old policy kept the Enforce the old CRD stored; a new one without mode gets Audit.
    expect((await kubectl(['create', '-f', '-'], { ...admin(), input: 'apiVersion: loopguard.dev/v1alpha1\nkind: LoopbackPolicy\nmetadata: {name: after, namespace: legacy}\n' })).code).toBe(0);
    const modes = await kubectl(['get', 'lbp', '-n', 'legacy', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.mode} {end}'], admin());
    expect(modes.stdout.trim()).toBe('after=Audit before=Enforce');
  });

  it(`the admission-warnings component applies ${servesVapV1(minor) ? 'here (the API is served)' : 'nowhere here: the apiserver serves no VAP v1, so it is refused'}`, async () => {
    const applied = await kubectl(['apply', '--server-side', '--dry-run=server', '-k', defaultOverlay(['admission-warnings'])], admin());
    if (servesVapV1(minor)) {
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
      expect(applied.stdout).toContain('validatingadmissionpolicy.admissionregistration.k8s.io/loopguard-loopback-warning serverside-applied');
    } else {
      expect(applied.code).not.toBe(0);
      expect(applied.stderr).toContain('no matches for kind "ValidatingAdmissionPolicy" in version "admissionregistration.k8s.io/v1"');
    }
  });

  it('helm install succeeds, with the admission policy exactly where the minor serves it', async () => {
    const ns = 'helm-install';
    expect((await kubectl(['create', 'namespace', ns], admin())).code).toBe(0);
    const installed = helm(['install', 'lg', CHART_DIR, '-n', ns, '--set', 'region=ap-guangzhou']);
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(installed.stdout).toContain('STATUS: deployed');
    const vap = await kubectl(['get', 'validatingadmissionpolicies.admissionregistration.k8s.io', '-o', 'name'], admin());
    if (servesVapV1(minor)) expect(vap.stdout.trim()).toBe('validatingadmissionpolicy.admissionregistration.k8s.io/lg-loopguard-loopback-warning');
    else expect(vap.code).not.toBe(0);

    // Offline: a version alone never renders the policy (Helm's default version is its own build's, not the cluster's);
    // the served kinds, as a GitOps tool passes them from the cluster's discovery, render it exactly where the minor
    // serves it.
    const offline = helm(['template', 'loopguard', CHART_DIR, '-n', 'loopguard-system', '--set', 'region=ap-guangzhou', '--kube-version', minor]);
    expect(offline.code).toBe(0);
    expect(offline.stdout.includes('kind: ValidatingAdmissionPolicy\n')).toBe(false);
    const kinds = await kubectl(['api-resources', '--api-group=admissionregistration.k8s.io', '-o', 'name'], admin());
    const served = kinds.stdout.split('\n').some((r) => r.startsWith('validatingadmissionpolicies.'));
    expect(served).toBe(servesVapV1(minor));
    const gitops = helm(['template', 'loopguard', CHART_DIR, '-n', 'loopguard-system', '--set', 'region=ap-guangzhou', '--kube-version', minor,
      ...(served ? ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'] : [])]);
    expect(gitops.stdout.includes('kind: ValidatingAdmissionPolicy\n')).toBe(servesVapV1(minor));

    const removed = helm(['uninstall', 'lg', '-n', ns]);
    expect({ code: removed.code, stderr: removed.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('the operator becomes Ready; a ClusterLoopbackPolicy without mode audits: Ready, the at-risk Service reported, no CLB write', async () => {
    tke = await startLocalTke({ kubeconfig: cp?.kubeconfig ?? '', allNamespaces: true, profile: 'ipvs-new', operator: { leaderElect: false } });
    const core = kubeConfig(cp?.kubeconfig).makeApiClient(CoreV1Api);
    expect((await kubectl(['create', 'namespace', 'shop'], admin())).code).toBe(0);
    await core.createNamespacedService({ namespace: 'shop', body: lbService('web', AT_RISK_L4) });
    await waitFor('the CLB of shop/web and its listeners', async () => {
      const svc = await core.readNamespacedService({ namespace: 'shop', name: 'web' });
      const id = svc.metadata?.annotations?.['service.kubernetes.io/loadbalance-id'];
      return id && (await tke?.emulator.admin.getLoadBalancer(id))?.Listeners.length === 2 ? id : undefined;
    });
    const seq = (await tke.emulator.admin.writes()).at(-1)?.seq ?? 0;
    await tke.emulator.admin.markStats('bare-policy');

    const applied = await kubectl(['apply', '-f', '-'], { ...admin(), input: 'apiVersion: loopguard.dev/v1alpha1\nkind: ClusterLoopbackPolicy\nmetadata: {name: bare}\n' });
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
    const waited = await kubectl(['wait', '--for=condition=Ready', 'clbp/bare', '--timeout=90s'], admin());
    expect({ code: waited.code, stderr: waited.stderr }).toEqual({ code: 0, stderr: '' });
    const policy = await waitFor('clbp/bare reporting shop/web at risk', async () => {
      const p = JSON.parse((await kubectl(['get', 'clbp', 'bare', '-o', 'json'], admin())).stdout) as ClusterLoopbackPolicy;
      return p.status?.observedGeneration === p.metadata.generation && p.status?.counts?.atRisk === 1 ? p : undefined;
    }, { timeoutMs: 60_000, context: logs });
    expect(policy.spec?.mode).toBe('Audit');
    expect(findCondition(policy.status?.conditions, 'Ready')).toMatchObject({ status: 'True', reason: 'AuditComplete', message: expect.stringContaining('nothing changed (Audit)') });
    expect(policy.status?.targets?.find((t) => t.namespace === 'shop' && t.name === 'web')).toMatchObject({ verdict: 'AtRisk' });
    // What `kubectl get clbp` shows right after the apply: the Mode column says Audit.
    expect((await kubectl(['get', 'clbp', 'bare', '--no-headers'], admin())).stdout).toMatch(/^bare\s+Audit\s+/);

    expect((await tke.emulator.admin.writes(seq)).filter((w) => w.caller === 'loopguard')).toEqual([]);
    const calls = (await tke.emulator.admin.statsSince('bare-policy')).byCaller['loopguard'] ?? {};
    expect(Object.keys(calls).filter((action) => !action.startsWith('Describe'))).toEqual([]);
    expect(Object.keys(calls).length).toBeGreaterThan(0); // not vacuous: loopguard did read the CLB
  }, 180_000);
});
