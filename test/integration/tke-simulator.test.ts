// The TKE controller simulator against the real kube-apiserver and the CLB emulator: what a TKE cluster would
// do with LoadBalancer Services, Ingresses and TkeServiceConfigs, seen through the real SDK and the admin API.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, KubeConfig, V1Ingress, V1Service } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { AdminLoadBalancer, ClbEmulator } from '../../sim/clb-emulator/index.js';
import { KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE, startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { TkeServiceConfig, TkeSimulator, TkeSimulatorOptions } from '../../sim/tke-simulator/index.js';
import { annotations, applyClusterProfile, startTkeSimulator, TKE_SERVICE_CONFIG } from '../../sim/tke-simulator/index.js';
import { clbClient, type ClbClient } from '../emulator/support.js';
import { createNamespace, deleteNamespace, kubeConfig, kubectl, waitFor } from '../support/kube.js';
import { lbIngress } from '../support/workload.js';

const { SERVICE, INGRESS } = annotations;
const crd = { group: TKE_SERVICE_CONFIG.group, version: TKE_SERVICE_CONFIG.version, plural: TKE_SERVICE_CONFIG.plural };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Each simulator in this file watches its own namespace prefix, so they never act on each other's objects. */
const MAIN_PREFIX = 'tkesim-main';

describe('TKE controller simulator', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let net: NetworkingV1Api;
  let custom: CustomObjectsApi;
  let emulator: ClbEmulator;
  let sdk: ClbClient;
  let sim: TkeSimulator;
  let ns: string;
  const namespaces: string[] = [];
  const simLog: string[] = [];

  const simulatorOptions = (prefix: string, extra: Partial<TkeSimulatorOptions> = {}): TkeSimulatorOptions => ({
    kubeConfig: kc,
    clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: emulator.credentials },
    namespaceFilter: (namespace) => namespace.startsWith(`${prefix}-`),
    resyncIntervalMs: 0,
    log: (line) => simLog.push(line),
    ...extra,
  });

  async function namespace(prefix = MAIN_PREFIX): Promise<string> {
    const name = await createNamespace(prefix, kc);
    namespaces.push(name);
    return name;
  }

  beforeAll(async () => {
    kc = kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    net = kc.makeApiClient(NetworkingV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    await applyClusterProfile(kc, 'ipvs-new');
    emulator = await startClbEmulator({ taskDurationMs: 100 });
    sdk = clbClient(emulator);
    sim = await startTkeSimulator(simulatorOptions(MAIN_PREFIX));
  });

  afterAll(async () => {
    await sim?.stop();
    await emulator?.close();
    for (const name of namespaces) await deleteNamespace(name, kc);
    if (process.env.TKESIM_DEBUG) console.log(simLog.join('\n'));
  });

  beforeEach(async () => {
    ns = await namespace();
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: false, healthCheckSource100_64: true });
  });

  // ---- helpers ---------------------------------------------------------------------------------------------

  async function createService(name: string, ann: Record<string, string>, ports = [{ name: 'http', port: 80, protocol: 'TCP' }], inNs = ns) {
    await core.createNamespacedService({
      namespace: inNs,
      body: { metadata: { name, annotations: ann }, spec: { type: 'LoadBalancer', selector: { app: name }, ports } },
    });
  }

  /** Waits until the Service carries a CLB ID and a status IP, and returns them. */
  function serviceLoadBalancer(name: string, inNs = ns): Promise<{ id: string; ip: string; svc: V1Service }> {
    return waitFor(`Service ${inNs}/${name} to get its CLB`, async () => {
      const svc = await core.readNamespacedService({ namespace: inNs, name });
      const id = svc.metadata?.annotations?.[SERVICE.loadBalancerId];
      const ip = svc.status?.loadBalancer?.ingress?.[0]?.ip;
      return id && ip ? { id, ip, svc } : undefined;
    });
  }

  function ingressLoadBalancer(name: string, inNs = ns): Promise<{ id: string; ip: string; ing: V1Ingress }> {
    return waitFor(`Ingress ${inNs}/${name} to get its CLB`, async () => {
      const ing = await net.readNamespacedIngress({ namespace: inNs, name });
      const id = ing.metadata?.annotations?.[INGRESS.loadBalancerId];
      const ip = ing.status?.loadBalancer?.ingress?.[0]?.ip;
      return id && ip ? { id, ip, ing } : undefined;
    });
  }

  async function listeners(lbId: string): Promise<Listener[]> {
    return (await sdk.DescribeListeners({ LoadBalancerId: lbId })).Listeners ?? [];
  }

  function lbState(id: string): Promise<AdminLoadBalancer | undefined> {
    return emulator.admin.getLoadBalancer(id).catch(() => undefined);
  }

  /** A host rule and a VIP-domain rule; no ingress.class unless `ann` sets one (TKE takes class-less Ingresses). */
  async function createIngress(name: string, ann: Record<string, string>, inNs = ns): Promise<void> {
    await net.createNamespacedIngress({
      namespace: inNs,
      body: lbIngress(name, {
        annotations: ann,
        rules: [{ host: 'shop.example.com', paths: ['/'] }, { paths: [{ path: '/healthz', pathType: 'Exact' }] }],
        backend: { name: 'web', port: 80 },
      }),
    });
  }

  async function getConfig(name: string, inNs = ns): Promise<TkeServiceConfig | undefined> {
    try {
      return (await custom.getNamespacedCustomObject({ ...crd, namespace: inNs, name })) as TkeServiceConfig;
    } catch {
      return undefined;
    }
  }

  async function warnings(kind: string, name: string, inNs = ns): Promise<CoreV1Event[]> {
    const list = await core.listNamespacedEvent({ namespace: inNs, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
    return list.items.filter((e) => e.type === 'Warning');
  }

  // ---- Services ----------------------------------------------------------------------------------------------

  it('gives a private LoadBalancer Service an INTERNAL CLB with one listener per port, VIP-sourced health checks', async () => {
    await createService('web', { [SERVICE.internalSubnetId]: 'subnet-k8s0001' }, [
      { name: 'http', port: 80, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ]);
    const { id, ip, svc } = await serviceLoadBalancer('web');

    const lb = (await sdk.DescribeLoadBalancers({ LoadBalancerIds: [id] })).LoadBalancerSet?.[0];
    expect(lb).toMatchObject({ LoadBalancerType: 'INTERNAL', SubnetId: 'subnet-k8s0001', LoadBalancerVips: [ip] });
    expect(lb?.Tags).toEqual(expect.arrayContaining([{ TagKey: 'tke-createdBy-flag', TagValue: 'yes' }]));
    const ls = await waitFor('both listeners', async () => {
      const found = await listeners(id);
      return found.length === 2 ? found : undefined;
    });
    expect(ls.map((l) => [l.Protocol, l.Port, l.HealthCheck?.HealthSwitch, l.HealthCheck?.SourceIpType]).sort()).toEqual([
      ['TCP', 80, 1, 0],
      ['UDP', 53, 1, 0],
    ]);
    expect(svc.metadata?.finalizers).toContain('service.kubernetes.io/load-balancer-cleanup');
    // The annotation and status are written under TKE's field manager.
    expect(svc.metadata?.managedFields?.map((m) => m.manager)).toContain('tke-service-controller');
  });

  it('gives a public Service an OPEN CLB, an IPv6 one a public IPv6 CLB, and ignores other Service types', async () => {
    await createService('public', {});
    await createService('v6', { [SERVICE.extensiveParameters]: '{"AddressIPVersion":"IPV6"}' });
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'plain' }, spec: { ports: [{ port: 80 }] } } });

    const pub = await serviceLoadBalancer('public');
    expect((await lbState(pub.id))?.LoadBalancerType).toBe('OPEN');
    const v6 = await serviceLoadBalancer('v6');
    const v6State = await lbState(v6.id);
    expect(v6State).toMatchObject({ AddressIPVersion: 'ipv6', LoadBalancerType: 'OPEN', LoadBalancerVips: [] });
    expect(v6.ip).toBe(v6State?.AddressIPv6);

    await sim.resyncNow();
    const plain = await core.readNamespacedService({ namespace: ns, name: 'plain' });
    expect(plain.metadata?.annotations?.[SERVICE.loadBalancerId]).toBeUndefined();
    expect(plain.metadata?.finalizers ?? []).toEqual([]);
  });

  it('deletes the CLB it created when the Service is deleted, and when a Service stops being a LoadBalancer', async () => {
    await createService('gone', { [SERVICE.tkeServiceConfigAuto]: 'true' });
    await createService('retyped', {});
    const gone = await serviceLoadBalancer('gone');
    const retyped = await serviceLoadBalancer('retyped');
    await waitFor('the auto service config', () => getConfig('gone-auto-service-config'));

    await core.deleteNamespacedService({ namespace: ns, name: 'gone' });
    await waitFor('the Service to be finalized', async () =>
      (await core.readNamespacedService({ namespace: ns, name: 'gone' }).then(() => false, () => true)) || undefined,
    );
    expect(await lbState(gone.id)).toBeUndefined();
    // The test apiserver runs no garbage collector: the simulator deletes the auto config itself.
    expect(await getConfig('gone-auto-service-config')).toBeUndefined();

    await core.patchNamespacedService({ namespace: ns, name: 'retyped', body: { spec: { type: 'ClusterIP' } } }, mergePatch);
    await waitFor('the retyped Service to lose its CLB', async () => {
      const svc = await core.readNamespacedService({ namespace: ns, name: 'retyped' });
      const clean =
        svc.metadata?.annotations?.[SERVICE.loadBalancerId] === undefined &&
        (svc.status?.loadBalancer?.ingress ?? []).length === 0 &&
        !(svc.metadata?.finalizers ?? []).includes('service.kubernetes.io/load-balancer-cleanup');
      return clean || undefined;
    });
    expect(await lbState(retyped.id)).toBeUndefined();
  });

  it('uses the CLB named by tke-existed-lbid and keeps it when the Service goes', async () => {
    const seeded = await emulator.admin.seedLoadBalancer({ LoadBalancerType: 'INTERNAL', SubnetId: 'subnet-user', Listeners: [] });
    await createService('byo', { [SERVICE.existedLbId]: seeded.LoadBalancerId }, [{ name: 'https', port: 443, protocol: 'TCP' }]);
    const { id, ip } = await serviceLoadBalancer('byo');
    expect(id).toBe(seeded.LoadBalancerId);
    expect(ip).toBe(seeded.LoadBalancerVips[0]);
    await waitFor('the listener on the user CLB', async () => ((await listeners(id)).some((l) => l.Port === 443) ? true : undefined));

    await core.deleteNamespacedService({ namespace: ns, name: 'byo' });
    await waitFor('the Service to be finalized', async () =>
      (await core.readNamespacedService({ namespace: ns, name: 'byo' }).then(() => false, () => true)) || undefined,
    );
    expect(await lbState(id)).toBeDefined();
  });

  // ---- kube-proxy profiles and prevent-loopback ----------------------------------------------------------------

  const allBound = (lb: AdminLoadBalancer | undefined): boolean | undefined =>
    lb && lb.nodes.length > 0 ? lb.nodes.every((n) => n.vipBound) : undefined;

  it('marks the VIP bound for prevent-loopback under ipvs-new, not under ipvs-old, and unbinds when the annotation goes', async () => {
    await applyClusterProfile(kc, 'ipvs-old');
    await createService('loop', { [SERVICE.internalSubnetId]: 'subnet-k8s0001', [SERVICE.preventLoopback]: 'true' });
    const { id } = await serviceLoadBalancer('loop');
    await sim.resyncNow();
    expect(allBound(await lbState(id))).toBe(false);

    // A newer kube-proxy rolls out: the simulator notices the DaemonSet change by itself.
    await applyClusterProfile(kc, 'ipvs-new');
    await waitFor('the VIP to be bound', async () => ((allBound(await lbState(id))) ? true : undefined));

    await core.patchNamespacedService(
      { namespace: ns, name: 'loop', body: { metadata: { annotations: { [SERVICE.preventLoopback]: null } } } },
      mergePatch,
    );
    await waitFor('the VIP to be unbound', async () => ((allBound(await lbState(id))) === false ? true : undefined));
    // TKE switched the source to 100.64 for prevent-loopback (the default); without the annotation its view is the
    // account's default (legacy: the VIP), which sync scope `all` (the default) puts back.
    await waitFor('the source back on the VIP', async () => ((await listeners(id))[0]?.HealthCheck?.SourceIpType === 0 ? true : undefined));
  });

  it('does not bind the VIP in iptables mode', async () => {
    await applyClusterProfile(kc, 'iptables');
    try {
      await createService('ipt', { [SERVICE.internalSubnetId]: 'subnet-k8s0001', [SERVICE.preventLoopback]: 'true' });
      const { id } = await serviceLoadBalancer('ipt');
      await sim.resyncNow();
      expect(allBound(await lbState(id))).toBe(false);
    } finally {
      await applyClusterProfile(kc, 'ipvs-new');
    }
  });

  it('with switchHealthCheckSourceOnPreventLoopback, also moves L4 health checks to 100.64 and records it in the auto config', async () => {
    const prefix = 'tkesim-newtke';
    const newTke = await startTkeSimulator(simulatorOptions(prefix, { switchHealthCheckSourceOnPreventLoopback: true }));
    try {
      const own = await namespace(prefix);
      await createService(
        'loop',
        { [SERVICE.internalSubnetId]: 'subnet-k8s0001', [SERVICE.preventLoopback]: 'true', [SERVICE.tkeServiceConfigAuto]: 'true' },
        undefined,
        own,
      );
      const { id } = await serviceLoadBalancer('loop', own);
      await waitFor('SourceIpType 1 on the listener', async () =>
        (await listeners(id))[0]?.HealthCheck?.SourceIpType === 1 ? true : undefined,
      );
      // The simulated kube-proxy binds the VIP in its own step, after the switch: wait for it (under load it lags).
      await waitFor('the VIP to be bound', async () => (allBound(await lbState(id)) ? true : undefined));
      const config = await waitFor('the auto config', () => getConfig('loop-auto-service-config', own));
      expect(config.spec?.loadBalancer?.l4Listeners?.[0]?.healthCheck?.sourceIpType).toBe(1);
    } finally {
      await newTke.stop();
    }
  });

  // ---- Ingress and TkeServiceConfig --------------------------------------------------------------------------

  it('gives a qcloud Ingress with the auto annotation a CLB with rules and its auto TkeServiceConfig', async () => {
    await createIngress('shop', { [INGRESS.subnetId]: 'subnet-k8s0001', [INGRESS.tkeServiceConfigAuto]: 'true' });
    const { id, ip, ing } = await ingressLoadBalancer('shop');
    expect((await lbState(id))?.LoadBalancerType).toBe('INTERNAL');
    const [http] = await waitFor('the HTTP listener with both rules', async () => {
      const found = await listeners(id);
      return found.length === 1 && found[0]?.Rules?.length === 2 ? found : undefined;
    });
    expect(http).toMatchObject({ Protocol: 'HTTP', Port: 80, KeepaliveEnable: 0 });
    expect(http?.Rules?.map((r) => [r.Domain, r.Url, r.HealthCheck?.SourceIpType]).sort()).toEqual([
      [ip, '/healthz', 0],
      ['shop.example.com', '/', 0],
    ]);

    const config = await waitFor('the auto ingress config', () => getConfig('shop-auto-ingress-config'));
    expect(config.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Ingress', name: 'shop', uid: ing.metadata?.uid, controller: true }),
    ]);
    const l7 = config.spec?.loadBalancer?.l7Listeners ?? [];
    expect(l7).toHaveLength(1);
    expect(l7[0]).toMatchObject({ protocol: 'HTTP', port: 80, keepaliveEnable: 0 });
    const rules = (l7[0]?.domains ?? []).flatMap((d) => (d.rules ?? []).map((r) => ({ domain: d.domain, ...r })));
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ domain: 'shop.example.com', url: '/', healthCheck: expect.objectContaining({ sourceIpType: 0, httpCode: 31, intervalTime: 5, timeout: 5 }) }),
        expect.objectContaining({ domain: '', url: '/healthz', healthCheck: expect.objectContaining({ sourceIpType: 0 }) }),
      ]),
    );

    // Ingresses of other classes are not TKE's.
    await createIngress('nginx', { 'kubernetes.io/ingress.class': 'nginx' });
    await sim.resyncNow();
    const other = await net.readNamespacedIngress({ namespace: ns, name: 'nginx' });
    expect(other.metadata?.annotations?.[INGRESS.loadBalancerId]).toBeUndefined();
  });

  it('applies a keepaliveEnable edit to the CLB when the account has the capability', async () => {
    await emulator.admin.setCapabilities({ l7KeepaliveSnat: true });
    await createIngress('keep', { [INGRESS.subnetId]: 'subnet-k8s0001', [INGRESS.tkeServiceConfigAuto]: 'true' });
    const { id } = await ingressLoadBalancer('keep');
    await waitFor('the auto ingress config', () => getConfig('keep-auto-ingress-config'));

    const edit = await kubectl([
      '-n', ns, 'patch', 'tkeserviceconfigs.cloud.tencent.com', 'keep-auto-ingress-config', '--type=json',
      '-p', '[{"op":"replace","path":"/spec/loadBalancer/l7Listeners/0/keepaliveEnable","value":1}]',
    ]);
    expect(edit.stderr).toBe('');
    await waitFor('KeepaliveEnable 1 through DescribeListeners', async () =>
      (await listeners(id))[0]?.KeepaliveEnable === 1 ? true : undefined,
    );
    expect(await warnings('Ingress', 'keep')).toEqual([]);
  });

  it('writes a Warning Event quoting CLB when the change is rejected (keepalive without the capability)', async () => {
    await createIngress('nokeep', { [INGRESS.subnetId]: 'subnet-k8s0001', [INGRESS.tkeServiceConfigAuto]: 'true' });
    const { id } = await ingressLoadBalancer('nokeep');
    await waitFor('the auto ingress config', () => getConfig('nokeep-auto-ingress-config'));
    await custom.patchNamespacedCustomObject(
      { ...crd, namespace: ns, name: 'nokeep-auto-ingress-config', body: [{ op: 'replace', path: '/spec/loadBalancer/l7Listeners/0/keepaliveEnable', value: 1 }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const [event] = await waitFor('a Warning Event on the Ingress', async () => {
      const found = await warnings('Ingress', 'nokeep');
      return found.length > 0 ? found : undefined;
    });
    expect(event).toMatchObject({ reason: 'SyncLoadBalancerFailed', source: { component: 'l7-lb-controller' } });
    expect(event?.message).toContain(`Code=${KEEPALIVE_SNAT_DISABLED_CODE}`);
    expect(event?.message).toContain(KEEPALIVE_SNAT_DISABLED_MESSAGE);
    expect((await listeners(id))[0]?.KeepaliveEnable).toBe(0);

    // TKE retries at every resync; repeats aggregate into the same Event.
    await sim.resyncNow();
    const after = await warnings('Ingress', 'nokeep');
    expect(after).toHaveLength(1);
    expect(after[0]?.count).toBeGreaterThanOrEqual(2);
  });

  it('the periodic resync reverts a declared field changed directly on the CLB', async () => {
    const prefix = 'tkesim-resync';
    const periodic = await startTkeSimulator(simulatorOptions(prefix, { resyncIntervalMs: 500 }));
    try {
      const own = await namespace(prefix);
      await createIngress('drift', { [INGRESS.subnetId]: 'subnet-k8s0001', [INGRESS.tkeServiceConfigAuto]: 'true' }, own);
      const { id } = await ingressLoadBalancer('drift', own);
      await waitFor('the auto ingress config', () => getConfig('drift-auto-ingress-config', own));
      const [http] = await waitFor('rules', async () => {
        const found = await listeners(id);
        return found[0]?.Rules?.length === 2 ? found : undefined;
      });
      const rule = http?.Rules?.find((r) => r.Domain === 'shop.example.com');
      // A console user switches the health-check source (declared: sourceIpType 0) and the probe port
      // (undeclared) in one edit.
      await emulator.admin.patchRule(id, http?.ListenerId ?? '', rule?.LocationId ?? '', { HealthCheck: { SourceIpType: 1, CheckPort: 8080 } });
      const reverted = await waitFor('the resync to revert SourceIpType', async () => {
        const r = (await listeners(id))[0]?.Rules?.find((x) => x.LocationId === rule?.LocationId);
        return r?.HealthCheck?.SourceIpType === 0 ? r : undefined;
      });
      // The full HealthCheck was sent back: the undeclared field survived the revert.
      expect(reverted.HealthCheck?.CheckPort).toBe(8080);
    } finally {
      await periodic.stop();
    }
  });

  it('with sync scope declared, leaves fields a hand-made config does not declare alone, and applies those it does', async () => {
    const prefix = 'tkesim-declared';
    const declaredTke = await startTkeSimulator(simulatorOptions(prefix, { syncScope: 'declared' }));
    try {
      const own = await namespace(prefix);
      await custom.createNamespacedCustomObject({
        ...crd,
        namespace: own,
        body: {
          apiVersion: 'cloud.tencent.com/v1alpha1',
          kind: 'TkeServiceConfig',
          metadata: { name: 'tuned' },
          spec: { loadBalancer: { l4Listeners: [{ protocol: 'TCP', port: 80, healthCheck: { enable: true, intervalTime: 10 } }] } },
        },
      });
      await createService('tuned', { [SERVICE.internalSubnetId]: 'subnet-k8s0001', [SERVICE.tkeServiceConfig]: 'tuned' }, undefined, own);
      const { id } = await serviceLoadBalancer('tuned', own);
      const [listener] = await waitFor('IntervalTime 10 from the config', async () => {
        const found = await listeners(id);
        return found[0]?.HealthCheck?.IntervalTime === 10 ? found : undefined;
      });

      // What loopguard does: switch the source directly. The config does not declare sourceIpType.
      await emulator.admin.patchListener(id, listener?.ListenerId ?? '', { HealthCheck: { SourceIpType: 1 } });
      await declaredTke.resyncNow();
      expect((await listeners(id))[0]?.HealthCheck).toMatchObject({ SourceIpType: 1, IntervalTime: 10 });

      // A declared field drifting is put back.
      await emulator.admin.patchListener(id, listener?.ListenerId ?? '', { HealthCheck: { IntervalTime: 30 } });
      await declaredTke.resyncNow();
      expect((await listeners(id))[0]?.HealthCheck).toMatchObject({ SourceIpType: 1, IntervalTime: 10 });
    } finally {
      await declaredTke.stop();
    }
  });

  it('reports a hand-made config name that looks auto-generated', async () => {
    await createService('badname', { [SERVICE.tkeServiceConfig]: 'x-auto-service-config' });
    // TKE's Warning, not another component's: the apiserver's ClusterIP repair loop can warn about a new Service too
    // (ClusterIPNotAllocated, seen once).
    const [event] = await waitFor("TKE's Warning Event on the Service", async () => {
      const found = (await warnings('Service', 'badname')).filter((e) => e.source?.component === 'tke-service-controller');
      return found.length > 0 ? found : undefined;
    });
    expect(event).toMatchObject({ reason: 'TkeServiceConfigInvalid', source: { component: 'tke-service-controller' } });
  });
});
