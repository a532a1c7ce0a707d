// The TKE simulator's documented worlds (tencent-cloud.md §9): TKE's sync puts its view of its own listeners back (#2,
// sync scope `all` vs `declared`), an account new to CLB since 2023 gets the 100.64 source by default (#3), and
// TKE manages LoadBalancerPassToTarget through the pass-to-target annotations (#5). Real kube-apiserver, the CLB
// emulator, the real SDK; each simulator watches its own namespace prefix.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { SyncScope, TkeSimulator } from '../../sim/tke-simulator/index.js';
import { annotations, applyClusterProfile, startTkeSimulator } from '../../sim/tke-simulator/index.js';
import { INGRESS_CONTROLLER, SERVICE_CONTROLLER } from '../../sim/tke-simulator/annotations.js';

const TKE_CONTROLLERS: ReadonlySet<string> = new Set([SERVICE_CONTROLLER, INGRESS_CONTROLLER]);
import { clbClient, type ClbClient } from '../emulator/support.js';
import { createNamespace, deleteNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { lbIngress } from '../support/workload.js';

const { SERVICE, INGRESS } = annotations;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const PRIVATE = { [SERVICE.internalSubnetId]: 'subnet-k8s0001' };

describe('TKE controller simulator, documented worlds', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let net: NetworkingV1Api;
  let emulator: ClbEmulator;
  let sdk: ClbClient;
  const sims: TkeSimulator[] = [];
  const namespaces: string[] = [];

  beforeAll(async () => {
    kc = kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    net = kc.makeApiClient(NetworkingV1Api);
    await applyClusterProfile(kc, 'ipvs-new');
    emulator = await startClbEmulator({ taskDurationMs: 50 });
    sdk = clbClient(emulator);
  });

  afterAll(async () => {
    for (const sim of sims) await sim.stop();
    await emulator?.close();
    for (const name of namespaces) await deleteNamespace(name, kc);
  });

  /** A simulator of its own (resync only on demand) and a namespace it watches. */
  async function world(prefix: string, syncScope?: SyncScope): Promise<{ sim: TkeSimulator; ns: string }> {
    const sim = await startTkeSimulator({
      kubeConfig: kc,
      clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: emulator.credentials },
      namespaceFilter: (namespace) => namespace.startsWith(`${prefix}-`),
      resyncIntervalMs: 0,
      ...(syncScope ? { syncScope } : {}),
    });
    sims.push(sim);
    const ns = await createNamespace(prefix, kc);
    namespaces.push(ns);
    return { sim, ns };
  }

  async function createService(ns: string, name: string, ann: Record<string, string>): Promise<string> {
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name, annotations: ann }, spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    });
    return waitFor(`Service ${ns}/${name} to get its CLB`, async () => {
      const svc = await core.readNamespacedService({ namespace: ns, name });
      return svc.status?.loadBalancer?.ingress?.[0]?.ip ? svc.metadata?.annotations?.[SERVICE.loadBalancerId] : undefined;
    });
  }

  async function createIngress(ns: string, name: string, ann: Record<string, string>): Promise<string> {
    await net.createNamespacedIngress({
      namespace: ns,
      body: lbIngress(name, { annotations: ann, rules: [{ host: 'shop.example.com', paths: ['/'] }], backend: { name: 'web', port: 80 } }),
    });
    return waitFor(`Ingress ${ns}/${name} to get its CLB`, async () => {
      const ing = await net.readNamespacedIngress({ namespace: ns, name });
      return ing.status?.loadBalancer?.ingress?.[0]?.ip ? ing.metadata?.annotations?.[INGRESS.loadBalancerId] : undefined;
    });
  }

  async function listener(lbId: string): Promise<Listener> {
    return waitFor(`a listener on ${lbId}`, async () => (await sdk.DescribeListeners({ LoadBalancerId: lbId })).Listeners?.[0]);
  }

  const passToTarget = async (lbId: string): Promise<boolean | undefined> =>
    (await sdk.DescribeLoadBalancers({ LoadBalancerIds: [lbId] })).LoadBalancerSet?.[0]?.LoadBalancerPassToTarget;

  /**
   * TKE's Warning Events on an object. Only its controllers' count: the apiserver may warn on a Service too (its
   * ClusterIP repair loop, "Cluster IP … is not allocated; repairing", on a loaded machine).
   */
  async function warnings(ns: string, kind: string, name: string): Promise<CoreV1Event[]> {
    const list = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
    return list.items.filter((e) => e.type === 'Warning' && TKE_CONTROLLERS.has(e.source?.component ?? ''));
  }

  // ---- #2 sync scope -------------------------------------------------------------------------------------------

  it("sync scope all (the default) puts a console edit of its listener's health check back on the next resync; declared does not", async () => {
    const all = await world('tkew-all');
    const declared = await world('tkew-declared', 'declared');
    const allLb = await createService(all.ns, 'web', PRIVATE);
    const declaredLb = await createService(declared.ns, 'web', PRIVATE);
    const allListener = await listener(allLb);
    const declaredListener = await listener(declaredLb);
    const created = allListener.HealthCheck;
    expect(created).toMatchObject({ HealthSwitch: 1, SourceIpType: 0, IntervalTime: 5 });

    // A console user (or loopguard without prevent-loopback) switches the source and retunes the check.
    const edit = { HealthCheck: { SourceIpType: 1, IntervalTime: 30, CheckPort: 8080 } };
    await emulator.admin.patchListener(allLb, allListener.ListenerId ?? '', edit);
    await emulator.admin.patchListener(declaredLb, declaredListener.ListenerId ?? '', edit);
    await all.sim.resyncNow();
    await declared.sim.resyncNow();

    expect((await listener(allLb)).HealthCheck).toEqual(created);
    expect((await listener(declaredLb)).HealthCheck).toMatchObject({ SourceIpType: 1, IntervalTime: 30, CheckPort: 8080 });

    // Resyncs stay cheap: with nothing to put back, TKE writes nothing.
    await emulator.admin.markStats('tkew-all-idle');
    await all.sim.resyncNow();
    expect((await emulator.admin.statsSince('tkew-all-idle')).listenerWrites).toEqual({});
  });

  it('sync scope all keeps the 100.64 source loopguard sets right before prevent-loopback (TKE wants it too), and puts the rest back', async () => {
    const { sim, ns } = await world('tkew-loop');
    const lbId = await createService(ns, 'loop', PRIVATE);
    const l = await listener(lbId);
    const created = l.HealthCheck;
    // loopguard's L4 order: switch the source, then annotate.
    await sdk.ModifyListener({ LoadBalancerId: lbId, ListenerId: l.ListenerId ?? '', HealthCheck: { ...l.HealthCheck, SourceIpType: 1 } });
    await waitFor('the switch', async () => ((await listener(lbId)).HealthCheck?.SourceIpType === 1 ? true : undefined));
    await core.patchNamespacedService({ namespace: ns, name: 'loop', body: { metadata: { annotations: { [SERVICE.preventLoopback]: 'true' } } } }, mergePatch);
    await waitFor('the VIP bound', async () => ((await emulator.admin.getLoadBalancer(lbId)).nodes.every((n) => n.vipBound) ? true : undefined));
    await emulator.admin.patchListener(lbId, l.ListenerId ?? '', { HealthCheck: { IntervalTime: 30 } });
    await sim.resyncNow();
    expect((await listener(lbId)).HealthCheck).toEqual({ ...created, SourceIpType: 1 });
  });

  // ---- #3 account profiles -------------------------------------------------------------------------------------

  it('an account new to CLB since 2023 gets listeners and rules on 100.64 without TKE asking, and sync scope all keeps them there', async () => {
    const { sim, ns } = await world('tkew-young');
    await emulator.admin.setCapabilities({ account: 'since2023' });
    try {
      const svcLb = await createService(ns, 'web', PRIVATE);
      const ingLb = await createIngress(ns, 'shop', { [INGRESS.subnetId]: 'subnet-k8s0001' });
      expect((await listener(svcLb)).HealthCheck).toMatchObject({ HealthSwitch: 1, SourceIpType: 1 });
      const rule = await waitFor('the rule', async () => (await listener(ingLb)).Rules?.[0]);
      expect(rule.HealthCheck?.SourceIpType).toBe(1);

      await emulator.admin.markStats('tkew-young');
      await sim.resyncNow();
      expect((await listener(svcLb)).HealthCheck?.SourceIpType).toBe(1);
      expect((await emulator.admin.statsSince('tkew-young')).listenerWrites).toEqual({});
    } finally {
      await emulator.admin.setCapabilities({ account: 'legacy' });
    }
  });

  // ---- #5 pass-to-target ---------------------------------------------------------------------------------------

  it('pass-to-target sets and clears LoadBalancerPassToTarget for Services and Ingresses, writing only on a change', async () => {
    const { sim, ns } = await world('tkew-pass');
    const svcLb = await createService(ns, 'web', { ...PRIVATE, [SERVICE.passToTarget]: 'true' });
    const ingLb = await createIngress(ns, 'shop', { [INGRESS.subnetId]: 'subnet-k8s0001', [INGRESS.passToTarget]: 'true' });
    await waitFor('the Service CLB to pass to targets', async () => ((await passToTarget(svcLb)) === true ? true : undefined));
    await waitFor('the Ingress CLB to pass to targets', async () => ((await passToTarget(ingLb)) === true ? true : undefined));

    await emulator.admin.markStats('tkew-pass');
    await sim.resyncNow();
    expect((await emulator.admin.statsSince('tkew-pass')).calls['ModifyLoadBalancerAttributes']).toBeUndefined();

    const patch = (value: string) => ({ metadata: { annotations: { [SERVICE.passToTarget]: value, [INGRESS.passToTarget]: value } } });
    await core.patchNamespacedService({ namespace: ns, name: 'web', body: patch('false') }, mergePatch);
    await net.patchNamespacedIngress({ namespace: ns, name: 'shop', body: patch('false') }, mergePatch);
    await waitFor('the Service CLB to stop', async () => ((await passToTarget(svcLb)) === false ? true : undefined));
    await waitFor('the Ingress CLB to stop', async () => ((await passToTarget(ingLb)) === false ? true : undefined));
    expect(await warnings(ns, 'Service', 'web')).toEqual([]);
    expect(await warnings(ns, 'Ingress', 'shop')).toEqual([]);
  });

  it('passes pass-to-target on to an IPv6 CLB, which refuses it: a Warning Event, the rest of the sync done', async () => {
    const { ns } = await world('tkew-pass6');
    const lbId = await createService(ns, 'v6', { [SERVICE.extensiveParameters]: '{"AddressIPVersion":"IPV6"}', [SERVICE.passToTarget]: 'true' });
    const [event] = await waitFor('a Warning Event on the Service', async () => {
      const found = await warnings(ns, 'Service', 'v6');
      return found.length > 0 ? found : undefined;
    });
    expect(event).toMatchObject({ reason: 'SyncLoadBalancerFailed', source: { component: 'tke-service-controller' } });
    expect(event?.message).toContain(`ModifyLoadBalancerAttributes ${lbId} LoadBalancerPassToTarget failed: Code=InvalidParameterValue`);
    expect(await passToTarget(lbId)).toBe(false);
    expect((await listener(lbId)).Port).toBe(80);
  });
});
