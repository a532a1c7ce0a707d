// /readyz while a CRD loopguard needs is missing (issue 22 #10): the LoopbackRecord CRD deleted under a running
// operator (a GitOps prune) makes the replica unready, with the CRD and the fix in the reason; re-created, it is
// ready again. Its own operator process and CLB emulator; the CRD is restored whatever happens (other suites share
// the apiserver). LoopbackPolicy's CRD goes through the same informer check (its policies' finalizers make deleting
// it here a test of something else).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startClbEmulator, type ClbEmulator } from '../../sim/clb-emulator/index.js';
import { installCrds } from '../controlplane/crds.js';
import { kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { operatorAccountKubeconfig, startOperatorProcess, type OperatorProcess } from '../support/operator.js';

const CRD = 'loopbackrecords.loopguard.dev';

async function readyz(op: OperatorProcess): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${op.port}/readyz`);
  return { status: res.status, body: await res.text() };
}

describe('/readyz and the CRDs loopguard needs', () => {
  let emulator: ClbEmulator;
  let op: OperatorProcess | undefined;

  beforeAll(async () => {
    emulator = await startClbEmulator({ taskDurationMs: 50 });
  });

  afterAll(async () => {
    await op?.stop();
    await installCrds(kubeconfigPath());
    await emulator?.close();
  });

  it('is 503 naming the missing LoopbackRecord CRD while it is deleted, and 200 once it is back', async () => {
    op = await startOperatorProcess({ kubeconfig: await operatorAccountKubeconfig(), emulator });
    expect((await readyz(op)).status).toBe(200);
    try {
      const deleted = await kubectl(['delete', 'crd', CRD, '--wait=true', '--timeout=60s']);
      expect({ code: deleted.code, stderr: deleted.stderr }).toEqual({ code: 0, stderr: '' });
      const unready = await waitFor('/readyz 503 for the missing CRD', async () => {
        const r = await readyz(op!);
        return r.status === 503 ? r : undefined;
      }, { timeoutMs: 60_000, intervalMs: 250, context: () => op?.logs().slice(-3000) ?? '' });
      expect(unready.body).toContain(
        `[-]informer-loopbackrecords failed: the API server does not serve /apis/loopguard.dev/v1alpha1/loopbackrecords (HTTP 404): the CRD ${CRD} is missing. Fix: apply crds/`,
      );
      expect(unready.body).toContain('[+]informer-loopbackpolicies ok');
    } finally {
      await installCrds(kubeconfigPath());
    }
    await waitFor('/readyz 200 again', async () => ((await readyz(op!)).status === 200 ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 250,
      context: () => op?.logs().slice(-3000) ?? '',
    });
  }, 240_000);
});
