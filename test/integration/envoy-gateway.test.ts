// What the real Envoy Gateway controller (built from its Go module: test/support/envoy-gateway.ts) does with the
// LoadBalancer Service it generates for a Gateway, against the test apiserver (issue 42 #1): the facts
// docs/gateways.md rests on, measured.
//   - GatewayClass (parametersRef → EnvoyProxy) + two Gateways → one LoadBalancer Service per Gateway in EG's own
//     namespace, named envoy-<gateway namespace>-<gateway name>-<hash>, labelled with the owning Gateway;
//   - the EnvoyProxy's spec.provider.kubernetes.envoyService.annotations are on both: one EnvoyProxy, every Gateway
//     of the class;
//   - an annotation someone else adds to a Service (as loopguard would if it edited it) survives EG's later writes of
//     that Service; one EG sets from the EnvoyProxy, changed by someone else, is EG's again when EG next writes it
//     (EG writes a Service when its Gateway's infrastructure changes, not because the Service drifted: docs/gateways.md);
//   - an annotation removed from the EnvoyProxy is removed from the Services (the revert), but not from one where
//     someone else also wrote it (same value, so two owners); the added one stays;
//   - with mergeGateways, one Service for the whole class, labelled with the class;
// and loopguard's mapping (src/model/gateway-service.ts) finds each Gateway's Service among the real ones.
// EG's writes are made visible by a Gateway change that changes its Service (a listener added → a port added), so
// "kept" is asserted after EG provably wrote the Service again, not after a sleep.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, type V1Service } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { installCrds } from '../controlplane/crds.js';
import { gatewayServiceOf } from '../../src/model/gateway-service.js';
import { serviceFacts } from '../../src/model/target-facts.js';
import { createGatewayClass, envoyGatewayTools, removeCrds, startEnvoyGateway, type EnvoyGatewayProcess } from '../support/envoy-gateway.js';
import { createNamespace, deleteNamespace, kubeConfig, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';

const SUITE = 'test/integration/envoy-gateway.test.ts';
const tools = envoyGatewayTools(SUITE);

const PREVENT_LOOPBACK = 'service.cloud.tencent.com/prevent-loopback';
const SUBNET = 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid';
const DIRECT = 'loopguard.dev/test-direct';
const OWNING_NAME = 'gateway.envoyproxy.io/owning-gateway-name';
const OWNING_NAMESPACE = 'gateway.envoyproxy.io/owning-gateway-namespace';
const GATEWAY_API = { group: 'gateway.networking.k8s.io', version: 'v1' };
const ENVOY_PROXIES = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', plural: 'envoyproxies' };

describe(`Envoy Gateway ${tools.version} and the LoadBalancer Service it generates for a Gateway`, () => {
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const suffix = randomBytes(3).toString('hex');
  const className = `lg-eg-${suffix}`;
  let egNs = '';
  let appNs = '';
  let eg: EnvoyGatewayProcess | undefined;
  let crds: string[] = [];

  const logs = () => `--- envoy-gateway logs ---\n${eg?.logs().slice(-6000) ?? ''}`;
  const generated = async (gateway: string): Promise<V1Service[]> =>
    (await core.listNamespacedService({ namespace: egNs, labelSelector: `${OWNING_NAME}=${gateway},${OWNING_NAMESPACE}=${appNs}` })).items;
  /** The one Service EG generated for `gateway`, once `until` holds for it. */
  const service = (gateway: string, what: string, until: (svc: V1Service) => boolean = () => true) =>
    waitFor(`${gateway}: ${what}`, async () => {
      const svcs = await generated(gateway);
      return svcs.length === 1 && until(svcs[0]!) ? svcs[0] : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250, context: logs });
  const ports = (svc: V1Service) => (svc.spec?.ports ?? []).map((p) => p.port).sort((a, b) => a - b);
  const setEnvoyServiceAnnotations = (annotations: Record<string, string>) =>
    custom.patchNamespacedCustomObject({
      ...ENVOY_PROXIES,
      namespace: egNs,
      name: 'tke',
      body: [{ op: 'replace', path: '/spec/provider/kubernetes/envoyService/annotations', value: annotations }],
    });
  const listener = (name: string, port: number) => ({ name, protocol: 'HTTP', port });
  const setListeners = (gateway: string, listeners: unknown[]) =>
    custom.patchNamespacedCustomObject({ ...GATEWAY_API, plural: 'gateways', namespace: appNs, name: gateway, body: [{ op: 'replace', path: '/spec/listeners', value: listeners }] });

  beforeAll(async () => {
    crds = await installCrds(kubeconfigPath(), [tools.crds]);
    egNs = await createNamespace('envoy-gateway-system');
    appNs = await createNamespace('shop');
    const controllerName = `loopguard.dev/envoy-gateway-test-${suffix}`;
    eg = await startEnvoyGateway({ binary: tools.binary, namespace: egNs, controllerName });
    // As Tencent's practice guide sets it up, with the L4 fix in the EnvoyProxy: a private CLB (subnet) and
    // prevent-loopback on the Service EG generates.
    await createGatewayClass(custom, { namespace: egNs, className, controllerName, envoyService: { annotations: { [SUBNET]: 'subnet-12345678', [PREVENT_LOOPBACK]: 'true' } } });
    for (const name of ['web', 'api']) {
      await custom.createNamespacedCustomObject({
        ...GATEWAY_API,
        plural: 'gateways',
        namespace: appNs,
        body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name }, spec: { gatewayClassName: className, listeners: [listener('http', 80)] } },
      });
    }
  }, 240_000);

  afterAll(async () => {
    await eg?.stop();
    await custom.deleteClusterCustomObject({ ...GATEWAY_API, plural: 'gatewayclasses', name: className }).catch(() => undefined);
    if (appNs) await deleteNamespace(appNs);
    if (egNs) await deleteNamespace(egNs);
    // Other suites share this apiserver: leave it without the 21 CRDs (their objects go with them).
    if (crds.length > 0) await removeCrds(crds);
  }, 240_000); // removeCrds waits up to 120 s for the CRDs to go, after a kubectl call per object

  it('accepts the GatewayClass and creates one LoadBalancer Service per Gateway, in its own namespace, labelled with the Gateway', async () => {
    const accepted = await waitFor('GatewayClass Accepted', async () => {
      const gc = (await custom.getClusterCustomObject({ ...GATEWAY_API, plural: 'gatewayclasses', name: className })) as { status?: { conditions?: { type: string; status: string }[] } };
      return gc.status?.conditions?.find((c) => c.type === 'Accepted' && c.status === 'True');
    }, { timeoutMs: 60_000, intervalMs: 250, context: logs });
    expect(accepted).toBeDefined();
    for (const gateway of ['web', 'api']) {
      const svc = await service(gateway, 'the generated Service');
      expect(svc.metadata?.name).toMatch(new RegExp(`^envoy-${appNs}-${gateway}-[0-9a-f]{8}$`));
      expect(svc.metadata?.namespace).toBe(egNs);
      expect(svc.spec?.type).toBe('LoadBalancer');
      expect(svc.metadata?.labels).toEqual({
        'app.kubernetes.io/component': 'proxy',
        'app.kubernetes.io/managed-by': 'envoy-gateway',
        'app.kubernetes.io/name': 'envoy',
        [OWNING_NAME]: gateway,
        [OWNING_NAMESPACE]: appNs,
      });
      expect(ports(svc)).toEqual([80]);
      // Nothing points from the Gateway to its Service but those labels: the one owner reference is the GatewayClass.
      expect((svc.metadata?.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}`)).toEqual([`GatewayClass/${className}`]);
    }
    const all = (await core.listNamespacedService({ namespace: egNs })).items;
    expect(all).toHaveLength(2);
    // loopguard's mapping (src/model/gateway-service.ts) finds each Gateway's Service among the real ones.
    const refs = all.map(serviceFacts);
    for (const gateway of ['web', 'api']) {
      const found = gatewayServiceOf({ namespace: appNs, name: gateway, className }, refs, egNs);
      expect(found).toEqual({ state: 'Own', facts: refs.find((r) => r.labels?.[OWNING_NAME] === gateway) });
    }
  });

  it("copies the EnvoyProxy's envoyService.annotations onto every Gateway's Service", async () => {
    for (const gateway of ['web', 'api']) {
      expect((await service(gateway, 'the generated Service')).metadata?.annotations).toEqual({ [SUBNET]: 'subnet-12345678', [PREVENT_LOOPBACK]: 'true' });
    }
  });

  it('keeps an annotation someone else adds to a Service across its writes; one the EnvoyProxy sets gets its value back', async () => {
    const name = (await service('web', 'the generated Service')).metadata!.name!;
    // As a user (or loopguard, if it edited the Service) would: kubectl annotate, its own field manager.
    const annotated = await kubectl(['-n', egNs, 'annotate', 'service', name, `${DIRECT}=kept?`, `${PREVENT_LOOPBACK}=false`, '--overwrite']);
    expect({ code: annotated.code, stderr: annotated.stderr }).toEqual({ code: 0, stderr: '' });

    // A change to web's Gateway: EG writes its Service again (a second port), with the EnvoyProxy's value.
    await setListeners('web', [listener('http', 80), listener('alt', 8080)]);
    const after = await service('web', 'port 8080', (s) => ports(s).includes(8080));
    expect(ports(after)).toEqual([80, 8080]);
    expect(after.metadata?.annotations).toEqual({ [SUBNET]: 'subnet-12345678', [PREVENT_LOOPBACK]: 'true', [DIRECT]: 'kept?' });
    // It writes with server-side apply as its own field manager, forcing what it declares and leaving the rest.
    const owners = Object.fromEntries((after.metadata?.managedFields ?? []).map((f) => [`${f.manager}/${f.operation}`, Object.keys((f.fieldsV1 as { 'f:metadata'?: { 'f:annotations'?: object } })?.['f:metadata']?.['f:annotations'] ?? {}).sort()]));
    expect(owners).toEqual({
      'envoy-gateway/Apply': [`f:${PREVENT_LOOPBACK}`, `f:${SUBNET}`],
      'kubectl-annotate/Update': [`f:${DIRECT}`],
    });
  });

  it('removes from the Services an annotation removed from the EnvoyProxy (the revert), unless someone else also wrote it there', async () => {
    // Someone applies to api's Service (server-side apply, its own field manager) the value the EnvoyProxy already
    // gives it: no conflict, and the field now has two owners. (kubectl annotate with the same value would be a no-op
    // write, which records no owner.)
    const api = (await service('api', 'the generated Service')).metadata!.name!;
    const applied = await kubectl(['apply', '--server-side', '--field-manager=someone', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: api, namespace: egNs, annotations: { [PREVENT_LOOPBACK]: 'true' } } }),
    });
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });

    await setEnvoyServiceAnnotations({ [SUBNET]: 'subnet-12345678' });
    const web = await service('web', `no ${PREVENT_LOOPBACK}`, (s) => s.metadata?.annotations?.[PREVENT_LOOPBACK] === undefined);
    expect(web.metadata?.annotations).toEqual({ [SUBNET]: 'subnet-12345678', [DIRECT]: 'kept?' });
    // EG has written api's Service too (its apply no longer holds the annotation) …
    const owned = (s: V1Service) => (s.metadata?.managedFields ?? []).find((f) => f.manager === 'envoy-gateway')?.fieldsV1 as { 'f:metadata'?: { 'f:annotations'?: object } } | undefined;
    const after = await service('api', `EG's apply without ${PREVENT_LOOPBACK}`, (s) => !(`f:${PREVENT_LOOPBACK}` in (owned(s)?.['f:metadata']?.['f:annotations'] ?? {})));
    // … and the annotation stays: the other owner still holds it. A revert through the EnvoyProxy undoes only what
    // nobody else wrote on the Service.
    expect(after.metadata?.annotations).toEqual({ [SUBNET]: 'subnet-12345678', [PREVENT_LOOPBACK]: 'true' });
  });

  it("mergeGateways: one Service for the whole class, labelled with the class, carrying the EnvoyProxy's annotations", async () => {
    const merged = `lg-eg-merged-${suffix}`;
    await custom.createNamespacedCustomObject({
      ...ENVOY_PROXIES,
      namespace: egNs,
      body: {
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        kind: 'EnvoyProxy',
        metadata: { name: 'merged' },
        spec: { mergeGateways: true, provider: { type: 'Kubernetes', kubernetes: { envoyService: { annotations: { [PREVENT_LOOPBACK]: 'true' } } } } },
      },
    });
    await custom.createClusterCustomObject({
      ...GATEWAY_API,
      plural: 'gatewayclasses',
      body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: merged }, spec: { controllerName: `loopguard.dev/envoy-gateway-test-${suffix}`, parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'merged', namespace: egNs } } },
    });
    try {
      for (const [name, port] of [['blue', 81], ['green', 82]] as const) {
        await custom.createNamespacedCustomObject({
          ...GATEWAY_API,
          plural: 'gateways',
          namespace: appNs,
          body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name }, spec: { gatewayClassName: merged, listeners: [listener('http', port)] } },
        });
      }
      const svc = await waitFor('the class Service with both Gateways\' ports', async () => {
        const svcs = (await core.listNamespacedService({ namespace: egNs, labelSelector: `gateway.envoyproxy.io/owning-gatewayclass=${merged}` })).items;
        return svcs.length === 1 && ports(svcs[0]!).length === 2 ? svcs[0] : undefined;
      }, { timeoutMs: 60_000, intervalMs: 250, context: logs });
      expect(svc.metadata?.name).toMatch(new RegExp(`^envoy-${merged}-[0-9a-f]{8}$`));
      expect(ports(svc)).toEqual([81, 82]);
      expect(svc.metadata?.labels).toEqual({
        'app.kubernetes.io/component': 'proxy',
        'app.kubernetes.io/managed-by': 'envoy-gateway',
        'app.kubernetes.io/name': 'envoy',
        'gateway.envoyproxy.io/owning-gatewayclass': merged,
      });
      expect(svc.metadata?.annotations).toEqual({ [PREVENT_LOOPBACK]: 'true' });
      // No Service of its own for either Gateway: both map to the class's one (and so to one CLB).
      expect(await generated('blue')).toEqual([]);
      const refs = (await core.listNamespacedService({ namespace: egNs })).items.map(serviceFacts);
      for (const name of ['blue', 'green']) {
        expect(gatewayServiceOf({ namespace: appNs, name, className: merged }, refs, egNs)).toEqual({ state: 'Merged', facts: refs.find((r) => r.name === svc.metadata?.name) });
      }
    } finally {
      await custom.deleteClusterCustomObject({ ...GATEWAY_API, plural: 'gatewayclasses', name: merged }).catch(() => undefined);
    }
  });
});
