// Issue 38 #6 on the test apiserver: the observation checkpoint moves reads, it never makes a target look mitigated.
// A Service with prevent-loopback whose CLB still health-checks from the VIP (TKE did not switch the source, so every
// check is dropped); a well-formed checkpoint entry that loopguard did not write says its listeners are on
// 100.64.0.0/10 with every backend alive (fresh, of the right region, another cluster's owner tag). It is put in
// loopguard-system before the operator starts; the operator ignores it (not sealed with its key), reads the CLB
// itself and does not report the Service Mitigated (the previous code seeded it and did). And only loopguard's ServiceAccount may get the key's Secret: not a viewer of that namespace.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { ClbObserver } from '../../src/cloud/clb-observer.js';
import { TencentClbClient } from '../../src/cloud/index.js';
import type { ClbObservation } from '../../src/model/facts.js';
import { createNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { OPERATOR_NAMESPACE, type OperatorProcess } from '../support/operator.js';
import { applyPolicy, getPolicy, policyManifest } from '../support/policy.js';
import { AT_RISK_L4, lbService } from '../support/workload.js';

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT_LOOPBACK = 'service.cloud.tencent.com/prevent-loopback';

describe('a checkpoint entry loopguard did not write is not an observation', () => {
  let tke: LocalTke;
  let operator: OperatorProcess | undefined;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    tke = await startLocalTke({ operator: false, simulator: { syncScope: 'declared', switchHealthCheckSourceOnPreventLoopback: false } });
  });

  afterAll(async () => {
    await operator?.stop();
    await tke?.stop();
  });

  it('a forged, well-formed entry (100.64 sources, all backends alive) is ignored: the Service is read, not Mitigated', async () => {
    const ns = await createNamespace('checkpoint-trust');
    tke.namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: lbService('web', { ...AT_RISK_L4, annotations: { ...AT_RISK_L4.annotations, [PREVENT_LOOPBACK]: 'true' } }) });
    const id = await waitFor('the CLB of web built', async () => {
      const lb = (await core.readNamespacedService({ namespace: ns, name: 'web' })).metadata?.annotations?.[LB_ID];
      return lb && (await tke.emulator.admin.getLoadBalancer(lb)).Listeners.length >= 2 ? lb : undefined;
    });

    // What a forger writes: the CLB as the real SDK reads it (another caller's key), made to look mitigated.
    const reader = new TencentClbClient({ region: tke.emulator.region, credentials: tke.emulator.callers['tke'] ?? tke.emulator.credentials, endpoint: tke.emulator.url });
    const observer = new ClbObserver(reader);
    await observer.observe([id], 60_000);
    await reader.close();
    const real = observer.cached(id) as Extract<ClbObservation, { state: 'Found' }>;
    expect(real.state).toBe('Found');
    expect(real.clb.listeners.some((l) => l.healthCheck?.sourceIpType !== 1)).toBe(true); // at risk as read
    const forged = {
      state: 'Found',
      clb: {
        ...real.clb,
        tags: { ...real.clb.tags, 'tke-clusterId': 'cls-forged00' },
        listeners: real.clb.listeners.map((l) => ({ ...l, healthCheck: { ...l.healthCheck, sourceIpType: 1 }, health: { alive: 3, dead: 0 } })),
      },
    };
    const now = Date.now();
    // The format the previous code accepted (unsealed), and well-formed for this code's decoder but for the seal.
    const checkpoint = gzipSync(JSON.stringify({ format: 'loopguard.dev/clb-observations/v1', region: tke.emulator.region, writtenAt: now, entries: [{ id, at: now, observation: forged }] }));
    const body: V1ConfigMap = {
      metadata: { name: 'loopguard-observations-0', namespace: OPERATOR_NAMESPACE },
      data: { checkpoint: 'forged', parts: '1' },
      binaryData: { 'observations.json.gz': checkpoint.toString('base64') },
    };
    await core.replaceNamespacedConfigMap({ name: 'loopguard-observations-0', namespace: OPERATOR_NAMESPACE, body }).catch(() => core.createNamespacedConfigMap({ namespace: OPERATOR_NAMESPACE, body }));

    const policy = { namespace: ns, name: 'audit' };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Audit' }))).code).toBe(0);
    await tke.emulator.admin.markStats('trust');
    // A drift interval far beyond the test: a seeded entry would be judged from, not read, all along.
    operator = await tke.startOperator({ extraArgs: ['--drift-check-interval=30m'] });
    const target = await waitFor('web judged', async () => (await getPolicy(policy)).status?.targets?.find((t) => t.name === 'web' && t.verdict !== 'Pending'), {
      timeoutMs: 60_000,
      context: () => operator?.logs().slice(-3000) ?? '',
    });
    expect({ verdict: target.verdict, log: operator.logs().includes('Ignoring the observation checkpoint') }).toEqual({ verdict: expect.not.stringMatching(/^Mitigated$/), log: true });
    // Judged from this process's own read of the CLB.
    const reads = (await tke.emulator.admin.statsSince('trust')).byCaller['loopguard']?.['DescribeListeners'] ?? {};
    expect(reads['OK']).toBeGreaterThan(0);
  }, 180_000);

  it("the checkpoint's key: loopguard's ServiceAccount may get it, a viewer of its namespace may not", async () => {
    const canI = async (as: string, what: string) => (await kubectl(['auth', 'can-i', 'get', what, '-n', OPERATOR_NAMESPACE, `--as=${as}`])).stdout.trim();
    const sa = `system:serviceaccount:${OPERATOR_NAMESPACE}:loopguard`;
    expect(await canI(sa, 'secret/loopguard-observations-key')).toBe('yes');
    expect(await canI(sa, 'secret/anything-else')).toBe('no');
    const viewer = `viewer-${Date.now()}`;
    expect((await kubectl(['create', 'rolebinding', viewer, '--clusterrole=view', `--user=${viewer}`, '-n', OPERATOR_NAMESPACE])).code).toBe(0);
    try {
      expect(await canI(viewer, 'secret/loopguard-observations-key')).toBe('no');
    } finally {
      await kubectl(['delete', 'rolebinding', viewer, '-n', OPERATOR_NAMESPACE]);
    }
  });
});
