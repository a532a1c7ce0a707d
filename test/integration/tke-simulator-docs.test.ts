// The TKE controller simulator where it follows TKE's documentation (tencent-cloud.md §9): an IPv6 Service is public
// because CLB refuses a private IPv6 CLB (#4), and TkeServiceConfigs written like Tencent's own samples are
// accepted and applied (#10). Real kube-apiserver, the CLB emulator, the real SDK.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { startClbEmulator } from '../../sim/clb-emulator/index.js';
import type { TkeSimulator } from '../../sim/tke-simulator/index.js';
import { annotations, applyClusterProfile, startTkeSimulator, TKE_SERVICE_CONFIG } from '../../sim/tke-simulator/index.js';
import { INGRESS_CONTROLLER, SERVICE_CONTROLLER } from '../../sim/tke-simulator/annotations.js';
import { clbClient, type ClbClient } from '../emulator/support.js';
import { createNamespace, deleteNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { lbIngress } from '../support/workload.js';

const { SERVICE, INGRESS } = annotations;
const crd = { group: TKE_SERVICE_CONFIG.group, version: TKE_SERVICE_CONFIG.version, plural: TKE_SERVICE_CONFIG.plural };
const PREFIX = 'tkesim-docs';

describe('TKE controller simulator, as documented', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let net: NetworkingV1Api;
  let custom: CustomObjectsApi;
  let emulator: ClbEmulator;
  let sdk: ClbClient;
  let sim: TkeSimulator;
  let ns: string;
  const namespaces: string[] = [];

  beforeAll(async () => {
    kc = kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    net = kc.makeApiClient(NetworkingV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    await applyClusterProfile(kc, 'ipvs-new');
    emulator = await startClbEmulator({ taskDurationMs: 100 });
    sdk = clbClient(emulator);
    sim = await startTkeSimulator({
      kubeConfig: kc,
      clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: emulator.credentials },
      namespaceFilter: (namespace) => namespace.startsWith(`${PREFIX}-`),
      resyncIntervalMs: 0,
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await sim?.stop();
    await emulator?.close();
    for (const name of namespaces) await deleteNamespace(name, kc);
  });

  beforeEach(async () => {
    ns = await createNamespace(PREFIX, kc);
    namespaces.push(ns);
  });

  async function createService(name: string, ann: Record<string, string>) {
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name, annotations: ann }, spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    });
  }

  async function createIngress(name: string, ann: Record<string, string>): Promise<void> {
    await net.createNamespacedIngress({
      namespace: ns,
      body: lbIngress(name, { annotations: ann, rules: [{ host: 'shop.example.com', paths: ['/'] }], backend: { name: 'web', port: 80 } }),
    });
  }

  function serviceLoadBalancer(name: string): Promise<{ id: string }> {
    return waitFor(`Service ${ns}/${name} to get its CLB`, async () => {
      const svc = await core.readNamespacedService({ namespace: ns, name });
      const id = svc.metadata?.annotations?.[SERVICE.loadBalancerId];
      return id ? { id } : undefined;
    });
  }

  function ingressLoadBalancer(name: string): Promise<{ id: string }> {
    return waitFor(`Ingress ${ns}/${name} to get its CLB`, async () => {
      const ing = await net.readNamespacedIngress({ namespace: ns, name });
      const id = ing.metadata?.annotations?.[INGRESS.loadBalancerId];
      return id ? { id } : undefined;
    });
  }

  async function listeners(lbId: string): Promise<Listener[]> {
    return (await sdk.DescribeListeners({ LoadBalancerId: lbId })).Listeners ?? [];
  }

  const TKE_CONTROLLERS = new Set([SERVICE_CONTROLLER, INGRESS_CONTROLLER]);
  /**
   * TKE's Warning Events on the object. Only TKE's: the apiserver's own controllers may warn on a Service too (its
   * ClusterIP repair loop, on a control plane shared with other suites, once said ClusterIPNotAllocated first).
   */
  async function warnings(kind: string, name: string): Promise<CoreV1Event[]> {
    const list = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
    return list.items.filter((e) => e.type === 'Warning' && TKE_CONTROLLERS.has(e.source?.component ?? ''));
  }

  it('passes a private IPv6 request on to CLB, which refuses it (IPv6 is public-only): a Warning Event, no CLB', async () => {
    await createService('v6-private', { [SERVICE.internalSubnetId]: 'subnet-k8s0001', [SERVICE.extensiveParameters]: '{"AddressIPVersion":"IPv6FullChain"}' });
    const [event] = await waitFor('a Warning Event on the Service', async () => {
      const found = await warnings('Service', 'v6-private');
      return found.length > 0 ? found : undefined;
    });
    expect(event).toMatchObject({ reason: 'SyncLoadBalancerFailed', source: { component: 'tke-service-controller' } });
    expect(event?.message).toContain('CreateLoadBalancer failed: Code=InvalidParameterCombination');
    const svc = await core.readNamespacedService({ namespace: ns, name: 'v6-private' });
    expect(svc.metadata?.annotations?.[SERVICE.loadBalancerId]).toBeUndefined();
    expect((await emulator.admin.state()).loadBalancers.filter((lb) => lb.AddressIPVersion === 'ipv6' && lb.LoadBalancerType === 'INTERNAL')).toEqual([]);
  });

  it('accepts and applies Tencent\'s own samples: scheduler IP_HASH, the session switch spelt enable or enabled', async () => {
    const config = (name: string, loadBalancer: Record<string, unknown>) =>
      custom.createNamespacedCustomObject({
        ...crd,
        namespace: ns,
        body: { apiVersion: 'cloud.tencent.com/v1alpha1', kind: 'TkeServiceConfig', metadata: { name }, spec: { loadBalancer } },
      });
    await config('svc-sample', { l4Listeners: [{ protocol: 'TCP', port: 80, scheduler: 'IP_HASH', session: { enable: true, sessionExpireTime: 60 } }] });
    await config('ing-sample', {
      l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/', scheduler: 'IP_HASH', session: { enabled: true, sessionExpireTime: 120 } }] }] }],
    });
    await createService('sample', { [SERVICE.internalSubnetId]: 'subnet-k8s0001', [SERVICE.tkeServiceConfig]: 'svc-sample' });
    await createIngress('sample', { [INGRESS.subnetId]: 'subnet-k8s0001', [INGRESS.tkeServiceConfig]: 'ing-sample' });
    const svcLb = await serviceLoadBalancer('sample');
    const ingLb = await ingressLoadBalancer('sample');
    await waitFor('the Service config applied', async () => {
      const [l] = await listeners(svcLb.id);
      return l?.Scheduler === 'IP_HASH' && l.SessionExpireTime === 60 ? true : undefined;
    });
    await waitFor('the Ingress config applied', async () => {
      const rule = (await listeners(ingLb.id))[0]?.Rules?.find((r) => r.Domain === 'shop.example.com');
      return rule?.Scheduler === 'IP_HASH' && rule.SessionExpireTime === 120 ? true : undefined;
    });
    expect(await warnings('Service', 'sample')).toEqual([]);
    expect(await warnings('Ingress', 'sample')).toEqual([]);
  });
});
