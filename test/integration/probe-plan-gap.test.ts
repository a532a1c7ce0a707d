// The probe agent's plan watch across a gap: a plan deleted while the agent's watch was down must still stop the
// probing (src/probe/kube.ts follows the plan with an informer: it watches again from the version it last saw, and the
// apiserver replays the deletion). An earlier agent watched again from now, got no event for the plan deleted
// meanwhile, and kept probing with it until a new one came.
// The gap is made with RBAC, which makes it exact: the agent runs under config/components/probe's ServiceAccount and
// Role; without the RoleBinding its next watch (client-node's ends after 30 s without a byte) is refused, and the
// informer tries again with backoff; the plan is deleted then, and the RoleBinding put back. On its own control plane:
// the agent's namespace, Role and plan are cluster-wide names there.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds, REPO_ROOT } from '../controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { entrypointArgs, serviceAccountKubeconfig } from '../support/operator.js';

const NAMESPACE = 'loopguard-system';
const PLAN = 'loopguard-probe-plan';
const DELETED = 'The probe plan was deleted';
const ROLE = join(REPO_ROOT, 'config/components/probe/role.yaml');

/** The agent's informer logged a refused list or watch of the plan (its log lines are JSON objects). */
function refused(log: string): boolean {
  return log.split('\n').some((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry['message'] === 'Informer failed, restarting' && entry['informer'] === 'probe-plan' && /403|forbidden/i.test(String(entry['error']));
    } catch {
      return false;
    }
  });
}

describe('the probe agent after a gap in its plan watch', () => {
  let cp: ControlPlaneState;
  let core: CoreV1Api;
  let listener: Server;
  let connects = 0;
  let agent: ChildProcess | undefined;
  let logs = '';
  const admin = () => ({ kubeconfig: cp.kubeconfig });
  const must = async (args: string[]) => {
    const res = await kubectl(args, admin());
    expect(`${args.join(' ')}: ${res.code} ${res.stderr}`).toBe(`${args.join(' ')}: 0 `);
  };

  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await installCrds(cp.kubeconfig);
    core = kubeConfig(cp.kubeconfig).makeApiClient(CoreV1Api);
    listener = createServer((s) => {
      connects++;
      s.on('error', () => {});
      s.end();
    });
    const port = await new Promise<number>((resolve) => listener.listen(0, '127.0.0.1', () => resolve((listener.address() as AddressInfo).port)));
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    for (const f of ['config/components/probe/service_account.yaml', 'config/components/probe/role.yaml']) await must(['apply', '--server-side', '-f', join(REPO_ROOT, f)]);
    const plan = { version: 1, windowSeconds: 2, timeoutMs: 1000, targets: [{ id: 'Service/app/accepts:80', vip: '127.0.0.1', port, protocol: 'TCP' }] };
    await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: PLAN }, data: { 'plan.json': JSON.stringify(plan) } } });
    const kubeconfig = await serviceAccountKubeconfig(cp.kubeconfig, { name: 'loopguard-probe', namespace: NAMESPACE });
    agent = spawn(
      process.execPath,
      entrypointArgs(['probe', `--kubeconfig=${kubeconfig}`, '--node=gap-node', `--namespace=${NAMESPACE}`, '--allow-cidr=127.0.0.0/8', '--min-window-seconds=1', '--rate=5', '--min-interval-seconds=1']),
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', POD_NAME: 'gap-pod', POD_UID: 'gap-uid' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
    agent.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  });

  afterAll(async () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
    await new Promise((r) => listener?.close(r));
    if (cp) await stopControlPlane(cp);
  });

  it('stops probing when its plan was deleted while its watch was refused', async () => {
    const context = () => logs.slice(-3000);
    await waitFor('the agent probing', () => (connects > 0 ? true : undefined), { timeoutMs: 30_000, intervalMs: 100, context });
    const mark = logs.length; // only what the agent says from now on
    await must(['delete', 'rolebinding', 'loopguard-probe', '-n', NAMESPACE]);
    await waitFor('the agent\'s watch refused', () => (refused(logs.slice(mark)) ? true : undefined), { timeoutMs: 90_000, intervalMs: 100, context });
    await core.deleteNamespacedConfigMap({ namespace: NAMESPACE, name: PLAN });
    // Unseen while refused. (Read before the binding is back: right after it, a retry due at that moment may already
    // have found the deletion, as it once did 0.8 s into its backoff.)
    expect(logs).not.toContain(DELETED);
    await must(['apply', '--server-side', '-f', ROLE]);
    // The informer's next try comes after its backoff (at most 30 s), then the watch replays the deletion.
    await waitFor('the agent to find its plan deleted', () => (logs.includes(DELETED) ? true : undefined), { timeoutMs: 60_000, intervalMs: 100, context });
    // It finishes the window it was in, and sends nothing more.
    await waitFor('the last window written', () => (logs.indexOf('Probe window written', logs.indexOf(DELETED)) >= 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 100, context });
    const sent = connects;
    await new Promise((r) => setTimeout(r, 4_000)); // two windows in which nothing may be sent
    expect(connects).toBe(sent);
  }, 240_000); // up to 90 s for the watch to end and be refused, then 60 s and 15 s
});
