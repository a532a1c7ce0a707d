// Issue 22 #1 on the local TKE: two Ingresses name one hand-made TkeServiceConfig, one of them opted out with
// loopguard.dev/skip. TKE applies a config to every Ingress naming it, so Enforce on the other must not change
// it: the target is Conflict / SharedConfig, the config stays as the user wrote it, and no write reaches the
// opted-out Ingress's CLB (nor the other's).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, reportedStatus, waitForPolicy } from '../support/policy.js';
import { lbIngress, PRIVATE_INGRESS } from '../support/workload.js';

const LB_ID = 'kubernetes.io/ingress.qcloud-loadbalance-id';
const NAMED = 'ingress.cloud.tencent.com/tke-service-config';
const TSC = { group: 'cloud.tencent.com', version: 'v1alpha1', plural: 'tkeserviceconfigs' };

describe('a TkeServiceConfig shared with an opted-out Ingress', () => {
  let emulator: ClbEmulator;
  let tke: LocalTke;
  const kc = kubeConfig();
  const net = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);

  beforeAll(async () => {
    tke = await startLocalTke({ emulator: { taskDurationMs: 30 }, resyncIntervalMs: 1_500, operator: { leaderElect: false, extraArgs: ['--drift-check-interval=2s'] } });
    emulator = tke.emulator;
  });

  afterAll(async () => {
    await tke?.stop();
  });

  it('Enforce changes nothing through it: SharedConfig, the config as written, no write to either CLB', async () => {
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: true });
    const ns = await createNamespace('shared-cfg');
    tke.namespaces.add(ns);
    const spec = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } };
    await custom.createNamespacedCustomObject({ ...TSC, namespace: ns, body: { apiVersion: 'cloud.tencent.com/v1alpha1', kind: 'TkeServiceConfig', metadata: { name: 'shared' }, spec } });
    const before = (await custom.getNamespacedCustomObject({ ...TSC, namespace: ns, name: 'shared' })) as { metadata: { resourceVersion: string }; spec: unknown };
    const rules = [{ host: 'shop.example.com', paths: ['/'] }];
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('front', { annotations: { ...PRIVATE_INGRESS, [NAMED]: 'shared' }, rules }) });
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('opted-out', { annotations: { ...PRIVATE_INGRESS, [NAMED]: 'shared', 'loopguard.dev/skip': 'true' }, rules }) });
    const lbOf = (name: string) => waitFor(`CLB of ${name}`, async () => (await net.readNamespacedIngress({ namespace: ns, name })).metadata?.annotations?.[LB_ID]);
    const lbs = { front: await lbOf('front'), optedOut: await lbOf('opted-out') };
    for (const id of Object.values(lbs)) await waitFor(`listener on ${id}`, async () => ((await emulator.admin.getLoadBalancer(id)).Listeners[0]?.Rules.length ? true : undefined));
    const seq = (await emulator.admin.writes()).at(-1)?.seq ?? 0;

    await emulator.admin.markStats('shared-config');
    expect((await applyPolicy(`apiVersion: loopguard.dev/v1alpha1
kind: LoopbackPolicy
metadata: {name: l7, namespace: ${ns}}
spec: {mode: Enforce, l7: {keepalive: true, healthCheckSource: Range100_64}}
`)).code).toBe(0);
    const policy = await waitForPolicy({ namespace: ns, name: 'l7' }, 'front is SharedConfig', (p) => p.status?.targets?.some((t) => t.name === 'front' && t.rootCause === 'SharedConfig') ?? false, { timeoutMs: 40_000 });
    const targets = reportedStatus(policy).targets;
    const front = targets.find((t) => t.name === 'front');
    expect(front).toMatchObject({ verdict: 'Conflict', rootCause: 'SharedConfig' });
    expect(front?.message).toMatch(/also governs Ingress opted-out \(opted out\).*of its own/);
    expect(front?.plan ?? []).toEqual([]);
    expect(targets.find((t) => t.name === 'opted-out')).toMatchObject({ verdict: 'Skipped' });

    // Several rounds of loopguard (drift checks every 2 s) and syncs of TKE (every 1.5 s) later, still nothing.
    await waitFor('two more rounds of both controllers', async () => {
      const calls = (await emulator.admin.statsSince('shared-config')).byCaller;
      const reads = (caller: string) => Object.values(calls[caller]?.['DescribeLoadBalancers'] ?? {}).reduce((a, b) => a + b, 0);
      return reads('loopguard') >= 3 && reads('tke') >= 3 ? true : undefined;
    });
    const after = (await custom.getNamespacedCustomObject({ ...TSC, namespace: ns, name: 'shared' })) as { metadata: { resourceVersion: string }; spec: unknown };
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const written = (await emulator.admin.writes(seq)).filter((w) => w.loadBalancerId === lbs.optedOut || w.loadBalancerId === lbs.front);
    expect(written).toEqual([]);
    const optedOut = await emulator.admin.getLoadBalancer(lbs.optedOut);
    expect(optedOut.Listeners.every((l) => l.KeepaliveEnable !== 1)).toBe(true);
  });
});
