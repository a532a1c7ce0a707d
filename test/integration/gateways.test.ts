// The real Envoy Gateway controller (built from its Go module: test/support/envoy-gateway.ts) against the test
// apiserver, in two blocks, each with its own EG, namespaces and GatewayClass (issue 42 #1):
//   1. What EG does with the LoadBalancer Service it generates for a Gateway: the facts docs/gateways.md §1 rests on.
//   2. Gateways as loopguard targets (docs/gateways.md §5), with the local TKE and the operator.
// One file, so the Gateway API and Envoy Gateway CRDs (21, their schemas large) are installed and removed once:
// the worker's kube-apiserver spends seconds of CPU on each install and removal, and the two blocks as two files did
// both twice (docs/development.md, "The plan to 15 minutes", item 6: 98-121 s of CPU as two files, 72-92 s as one).
//
// 1. Envoy Gateway and its Services:
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
//
// 2. Gateways as targets. EG runs in a namespace of its own name (not envoy-gateway-system: the operator is told with
// --envoy-gateway-namespace, as a user whose EG lives elsewhere would).
//   - A policy in the Gateway's namespace with `targets: [Gateway]` finds the Gateway's Service (in EG's namespace)
//     and CLB, and its EnvoyProxy, its class's, in EG's namespace: only a ClusterLoopbackPolicy changes that one, so
//     the Gateway is Conflict / SharedEnvoyProxy, and in Enforce nothing is written (no listener, no annotation on the
//     generated Service, the Gateway and the EnvoyProxy as they were); `kubectl describe lbp` and the doctor show it.
//   - A Gateway with an EnvoyProxy of its own is mitigated in Enforce: its listeners switched to 100.64.0.0/10 through
//     the CLB API, prevent-loopback set in its EnvoyProxy (and the user's keys there untouched), which EG copies onto
//     its Service; never a write on the Service or the Gateway. Deleting the policy gives it all back: the key out of
//     the EnvoyProxy (EG takes it off the Service), the sources back on the VIP, the record gone.
//   - A ClusterLoopbackPolicy managing every Gateway of the class mitigates them through the class's EnvoyProxy (and
//     a Gateway's own), and its deletion gives it all back.
//   - A mitigated Gateway deleted while its policy stays: its key leaves the EnvoyProxy (which outlives it), its record
//     goes.
//   - A policy in EG's namespace selecting Services skips the Service EG generated (the Gateway is the target).
//   - A Gateway no controller serves has no Service: Pending.
//
// The first block's objects outlive it: the test control plane runs no namespace controller (test/support/kube.ts
// deleteNamespace) and its stopped EG leaves its finalizer on its GatewayClasses, so they go only with the CRDs at the
// end. They do not touch the second block: its EG serves another controllerName, and its policies select only its
// own namespaces, whose Gateways' classes and EnvoyProxies are its own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, type V1Service } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import type { LoopbackPolicy } from '../../src/api/loopbackpolicy.js';
import { gatewayServiceOf } from '../../src/model/gateway-service.js';
import { serviceFacts } from '../../src/model/target-facts.js';
import { installCrds } from '../controlplane/crds.js';
import { runDoctor } from '../support/doctor.js';
import { createGatewayClass, envoyGatewayTools, removeCrds, startEnvoyGateway, type EnvoyGatewayProcess } from '../support/envoy-gateway.js';
import { createNamespace, deleteNamespace, kubeConfig, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, policyManifest, reportedStatus, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { findRecord } from '../support/records.js';

const SUITE = 'test/integration/gateways.test.ts';
const tools = envoyGatewayTools(SUITE);

const LB_ID = 'service.kubernetes.io/loadbalance-id';
const PREVENT_LOOPBACK = 'service.cloud.tencent.com/prevent-loopback';
const SUBNET = 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid';
const DIRECT = 'loopguard.dev/test-direct';
const OWNING_NAME = 'gateway.envoyproxy.io/owning-gateway-name';
const OWNING_NAMESPACE = 'gateway.envoyproxy.io/owning-gateway-namespace';
const GATEWAY_API = { group: 'gateway.networking.k8s.io', version: 'v1' };
const ENVOY_PROXIES = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', plural: 'envoyproxies' };

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
let crds: string[] = [];

beforeAll(async () => {
  crds = await installCrds(kubeconfigPath(), [tools.crds]);
}, 240_000);

afterAll(async () => {
  // Other suites share this apiserver: leave it without the 21 CRDs (both blocks' objects go with them).
  if (crds.length > 0) await removeCrds(crds);
}, 240_000); // removeCrds waits up to 130 s for its kubectl delete, after a kubectl get and a patch

describe(`Envoy Gateway ${tools.version} and the LoadBalancer Service it generates for a Gateway`, () => {
  const suffix = randomBytes(3).toString('hex');
  const className = `lg-eg-${suffix}`;
  let egNs = '';
  let appNs = '';
  let eg: EnvoyGatewayProcess | undefined;

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
  });

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
      // Waited for, and said when not there at first: in one loaded run (2026-12-01) a Service read after the first
      // test had none yet. EG reconciling the Gateway before its cache held the EnvoyProxy, both created moments
      // before, is the likely cause (EG's logs were not kept); docs/gateways.md says what it means on TKE.
      const first = (await service(gateway, 'the generated Service')).metadata?.annotations;
      if (first?.[SUBNET] === undefined) console.log(`[gateways] ${gateway}: the generated Service had none of the EnvoyProxy's annotations when first read (${JSON.stringify(first ?? {})})`);
      const svc = await service(gateway, "the EnvoyProxy's annotations on the generated Service", (x) => x.metadata?.annotations?.[SUBNET] !== undefined);
      expect(svc.metadata?.annotations).toEqual({ [SUBNET]: 'subnet-12345678', [PREVENT_LOOPBACK]: 'true' });
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

describe(`Gateways of Envoy Gateway ${tools.version} as loopguard targets`, () => {
  const suffix = randomBytes(3).toString('hex');
  const className = `lg-gw-${suffix}`;
  let egNs = '';
  let appNs = '';
  let eg: EnvoyGatewayProcess | undefined;
  let tke: LocalTke | undefined;
  let generated: V1Service | undefined;

  const logs = () => `--- envoy-gateway logs ---\n${eg?.logs().slice(-3000) ?? ''}\n--- operator logs ---\n${tke?.operator?.logs().slice(-4000) ?? ''}`;
  const gatewayTarget = (p: LoopbackPolicy) => reportedStatus(p).targets.find((t) => t.kind === 'Gateway' && t.name === 'web');
  const envoyProxy = async () => (await custom.getNamespacedCustomObject({ ...ENVOY_PROXIES, namespace: egNs, name: 'tke' })) as { spec: unknown };
  const gateway = async () => (await custom.getNamespacedCustomObject({ ...GATEWAY_API, plural: 'gateways', namespace: appNs, name: 'web' })) as { metadata: { annotations?: Record<string, string> }; spec: unknown };
  /** A Gateway of the class with an EnvoyProxy of its own (`mergeType: StrategicMerge` over the class's) holding a user's key. */
  async function ownProxyGateway(name: string, team: string, port: number): Promise<void> {
    await custom.createNamespacedCustomObject({
      ...ENVOY_PROXIES,
      namespace: appNs,
      body: {
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        kind: 'EnvoyProxy',
        metadata: { name: `${name}-proxy` },
        spec: { mergeType: 'StrategicMerge', provider: { type: 'Kubernetes', kubernetes: { envoyService: { annotations: { 'example.com/team': team } } } } },
      },
    });
    await custom.createNamespacedCustomObject({
      ...GATEWAY_API,
      plural: 'gateways',
      namespace: appNs,
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name, labels: { team } },
        spec: { gatewayClassName: className, infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: `${name}-proxy` } }, listeners: [{ name: 'http', protocol: 'HTTP', port }] },
      },
    });
  }
  /** The envoyService.annotations of the EnvoyProxy `name` in the Gateways' namespace. */
  const proxyAnnotations = async (name: string) =>
    ((await custom.getNamespacedCustomObject({ ...ENVOY_PROXIES, namespace: appNs, name })) as { spec: { provider: { kubernetes: { envoyService: { annotations?: Record<string, string> } } } } }).spec.provider.kubernetes.envoyService.annotations;

  beforeAll(async () => {
    egNs = await createNamespace('eg');
    appNs = await createNamespace('shop');
    // The operator starts after the Gateway API CRDs (the file's beforeAll): its Gateway informer finds them served.
    tke = await startLocalTke({ operator: { leaderElect: false, extraArgs: [`--envoy-gateway-namespace=${egNs}`, '--drift-check-interval=3s'] } });
    // TKE serves the Services of both namespaces (EG's generated ones live in EG's).
    tke.namespaces.add(egNs);
    tke.namespaces.add(appNs);
    const controllerName = `loopguard.dev/gateway-targets-test-${suffix}`;
    eg = await startEnvoyGateway({ binary: tools.binary, namespace: egNs, controllerName });
    // Tencent's practice guide's setup without the L4 fix: a private CLB (subnet), ETP Local (in-cluster callers'
    // pod IPs reach the CLB under IPVS: loopback).
    await createGatewayClass(custom, { namespace: egNs, className, controllerName, envoyService: { externalTrafficPolicy: 'Local', annotations: { [SUBNET]: 'subnet-12345678' } } });
    const listeners = [{ name: 'http', protocol: 'HTTP', port: 80 }];
    await custom.createNamespacedCustomObject({
      ...GATEWAY_API,
      plural: 'gateways',
      namespace: appNs,
      body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'web', labels: { team: 'shop' } }, spec: { gatewayClassName: className, listeners } },
    });
    // A Gateway of a class no controller serves: EG generates nothing for it.
    await custom.createNamespacedCustomObject({
      ...GATEWAY_API,
      plural: 'gateways',
      namespace: appNs,
      body: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'orphan', labels: { team: 'shop' } }, spec: { gatewayClassName: `nobody-${suffix}`, listeners } },
    });
    generated = await waitFor(
      "EG's Service for shop/web with its CLB from TKE",
      async () => {
        const svc = (await core.listNamespacedService({ namespace: egNs, labelSelector: `gateway.envoyproxy.io/owning-gateway-name=web,gateway.envoyproxy.io/owning-gateway-namespace=${appNs}` })).items[0];
        return svc?.metadata?.annotations?.[LB_ID] && (svc.status?.loadBalancer?.ingress?.length ?? 0) > 0 ? svc : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250, context: logs },
    );
  }, 240_000);

  afterAll(async () => {
    await eg?.stop();
    await tke?.stop();
    await custom.deleteClusterCustomObject({ ...GATEWAY_API, plural: 'gatewayclasses', name: className }).catch(() => undefined);
    if (appNs) await deleteNamespace(appNs);
    if (egNs) await deleteNamespace(egNs);
  });

  it("diagnoses a selected Gateway through the Service EG generated, its CLB and its class's EnvoyProxy, which a namespace's policy does not change", async () => {
    const svcName = generated!.metadata!.name!;
    const lb = generated!.metadata!.annotations![LB_ID]!;
    const ref: PolicyRef = { namespace: appNs, name: 'gateways' };
    expect(await applyPolicy(policyManifest(ref, { mode: 'Audit', targets: ['Gateway'], selector: { matchLabels: { team: 'shop' } } }))).toMatchObject({ code: 0, stderr: '' });
    const audited = await waitForPolicy(ref, 'the Gateway diagnosed', (p) => gatewayTarget(p)?.verdict === 'Conflict', { context: logs });
    const status = reportedStatus(audited);
    // Only Gateways are selected: the Services of the namespace (none here) and of EG's are not this policy's.
    expect(status.targets.map((t) => `${t.kind}/${t.name} ${t.verdict} ${t.rootCause}`).sort()).toEqual([
      'Gateway/orphan Pending GatewayServiceMissing',
      'Gateway/web Conflict SharedEnvoyProxy',
    ]);
    const web = gatewayTarget(audited)!;
    expect(web.loadBalancerId).toBe(lb);
    expect(web.message).toBe(
      `EnvoyProxy ${egNs}/tke is outside this namespace (its class's) and reaches other namespaces' Gateways: only a ClusterLoopbackPolicy changes it; give this Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef; mergeType: StrategicMerge keeps its class's settings)`,
    );
    expect(web.plan ?? []).toEqual([]);
    const orphan = reportedStatus(audited).targets.find((t) => t.name === 'orphan')!;
    expect(orphan.message).toBe(`Envoy Gateway has not generated a LoadBalancer Service for this Gateway (class nobody-${suffix}) in ${egNs} or this namespace yet; loopguard re-assesses when it appears`);

    // The read-only doctor, as a user runs it, judges the Gateways as the operator does.
    const doctor = await runDoctor(['-n', appNs, '-o', 'json', `--envoy-gateway-namespace=${egNs}`], { kubeconfig: kubeconfigPath(), emulator: tke!.emulator, caller: 'loopguard' });
    expect(doctor.code).toBe(0); // nothing at risk that loopguard is not held back from
    const report = JSON.parse(doctor.stdout) as { targets: { kind: string; name: string; verdict: string; rootCause: string; message: string; plan: string[]; policy?: string }[] };
    expect(report.targets.filter((t) => t.kind === 'Gateway').map((t) => ({ name: t.name, verdict: t.verdict, rootCause: t.rootCause, message: t.message, plan: t.plan, policy: t.policy }))).toEqual(
      expect.arrayContaining([
        { name: 'web', verdict: 'Conflict', rootCause: 'SharedEnvoyProxy', message: web.message, plan: [], policy: `LoopbackPolicy ${appNs}/gateways` },
        { name: 'orphan', verdict: 'Pending', rootCause: 'GatewayServiceMissing', message: orphan.message, plan: [], policy: `LoopbackPolicy ${appNs}/gateways` },
      ]),
    );

    const described = await kubectl(['describe', 'lbp', ref.name, '-n', appNs]);
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/Kind: +Gateway\n(.*\n)*? +Name: +web\n/);
    expect(described.stdout).toContain(`EnvoyProxy ${egNs}/tke is outside this namespace`);

    const before = { envoyProxy: (await envoyProxy()).spec, gateway: await gateway() };
    await tke!.emulator.admin.markStats('enforce');
    expect(await applyPolicy(policyManifest(ref, { mode: 'Enforce', targets: ['Gateway'], selector: { matchLabels: { team: 'shop' } } }))).toMatchObject({ code: 0, stderr: '' });
    const enforced = await waitForPolicy(ref, 'Enforce reconciled', (p) => p.status?.observedGeneration === p.metadata.generation && reportedStatus(p).conditions.some((c) => c.type === 'Ready' && c.status === 'True'), { context: logs });
    expect(gatewayTarget(enforced)).toMatchObject({ verdict: 'Conflict', rootCause: 'SharedEnvoyProxy' });
    // Two drift checks later, still nothing written anywhere.
    await waitFor('two drift checks', async () => ((await tke!.emulator.admin.statsSince('enforce')).byCaller['loopguard']?.DescribeListeners?.OK ?? 0) >= 2 ? true : undefined, { timeoutMs: 30_000 });
    const stats = await tke!.emulator.admin.statsSince('enforce');
    expect(stats.byCaller['loopguard']?.ModifyListener ?? {}).toEqual({});
    const svc = await core.readNamespacedService({ namespace: egNs, name: svcName });
    expect(svc.metadata?.annotations?.[PREVENT_LOOPBACK]).toBeUndefined();
    expect((svc.metadata?.managedFields ?? []).map((m) => m.manager)).not.toContain('loopguard');
    expect({ envoyProxy: (await envoyProxy()).spec, gateway: await gateway() }).toEqual(before);
  });

  it("a policy over EG's namespace skips the Service EG generated: its Gateway is the target", async () => {
    const ref: PolicyRef = { namespace: egNs, name: 'services' };
    expect(await applyPolicy(policyManifest(ref, { mode: 'Enforce' }))).toMatchObject({ code: 0, stderr: '' });
    const p = await waitForPolicy(ref, 'the generated Service assessed', (x) => reportedStatus(x).targets.some((t) => t.kind === 'Service'), { context: logs });
    expect(reportedStatus(p).targets.map((t) => ({ kind: t.kind, name: t.name, verdict: t.verdict, rootCause: t.rootCause, message: t.message }))).toEqual([
      {
        kind: 'Service',
        name: generated!.metadata!.name!,
        verdict: 'Skipped',
        rootCause: 'EnvoyGatewayService',
        message: `generated by Envoy Gateway for Gateway ${appNs}/web: loopguard never changes a Service Envoy Gateway owns; select the Gateway instead (spec.targets: [Gateway])`,
      },
    ]);
    const svc = await core.readNamespacedService({ namespace: egNs, name: generated!.metadata!.name! });
    expect(svc.metadata?.annotations?.[PREVENT_LOOPBACK]).toBeUndefined();
  });

  it('mitigates a Gateway through its own EnvoyProxy, and gives everything back when the policy goes', async () => {
    // The Gateway's own EnvoyProxy, merged over its class's (subnet, ETP Local), with a key of the user's.
    await ownProxyGateway('api', 'api', 8080);
    const apiService = () =>
      core.listNamespacedService({ namespace: egNs, labelSelector: `gateway.envoyproxy.io/owning-gateway-name=api,gateway.envoyproxy.io/owning-gateway-namespace=${appNs}` }).then((l) => l.items[0]);
    const svc = await waitFor('the Service of Gateway api with its CLB', async () => {
      const s = await apiService();
      return s?.metadata?.annotations?.[LB_ID] && s.metadata.annotations['example.com/team'] === 'api' && (s.status?.loadBalancer?.ingress?.length ?? 0) > 0 ? s : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250, context: logs });
    const lb = svc.metadata!.annotations![LB_ID]!;
    const source = async () => (await tke!.emulator.admin.getLoadBalancer(lb)).Listeners.find((l) => l.Port === 8080)?.HealthCheck?.SourceIpType;
    expect(await source()).toBe(0);
    const apiProxy = () => proxyAnnotations('api-proxy');
    const gatewayBefore = (await custom.getNamespacedCustomObject({ ...GATEWAY_API, plural: 'gateways', namespace: appNs, name: 'api' })) as { metadata: { annotations?: Record<string, string> } };

    await tke!.emulator.admin.markStats('api');
    const ref: PolicyRef = { namespace: appNs, name: 'api' };
    expect(await applyPolicy(policyManifest(ref, { mode: 'Enforce', targets: ['Gateway'], selector: { matchLabels: { team: 'api' } }, revertOnDelete: true }))).toMatchObject({ code: 0, stderr: '' });
    const mitigated = await waitForPolicy(ref, 'Gateway api mitigated', (p) => reportedStatus(p).targets.some((t) => t.name === 'api' && t.verdict === 'Mitigated'), { context: logs, timeoutMs: 60_000 });
    expect(reportedStatus(mitigated).targets.find((t) => t.name === 'api')).toMatchObject({ kind: 'Gateway', rootCause: 'LoopbackPrevented', loadBalancerId: lb });
    expect(await source()).toBe(1);
    expect(await apiProxy()).toEqual({ 'example.com/team': 'api', [PREVENT_LOOPBACK]: 'true' });
    const after = await apiService();
    expect(after?.metadata?.annotations?.[PREVENT_LOOPBACK]).toBe('true');
    // Written by EG from the EnvoyProxy, never by loopguard; the Gateway untouched.
    expect((after?.metadata?.managedFields ?? []).map((m) => m.manager)).not.toContain('loopguard');
    expect(((await custom.getNamespacedCustomObject({ ...GATEWAY_API, plural: 'gateways', namespace: appNs, name: 'api' })) as typeof gatewayBefore).metadata.annotations).toEqual(gatewayBefore.metadata.annotations);
    expect((await tke!.emulator.admin.statsSince('api')).byCaller['loopguard']?.ModifyListener?.OK).toBe(1);
    const record = await findRecord('Gateway', appNs, 'api');
    expect(record?.spec.originals).toMatchObject({ annotations: { [PREVENT_LOOPBACK]: null }, listeners: { [(await tke!.emulator.admin.getLoadBalancer(lb)).Listeners[0]!.ListenerId]: { sourceIpType: 0 } } });

    await deletePolicy(ref, { context: logs, timeoutMs: 90_000 });
    expect(await apiProxy()).toEqual({ 'example.com/team': 'api' });
    expect(await source()).toBe(0);
    expect(await findRecord('Gateway', appNs, 'api')).toBeUndefined();
    await waitFor('EG took prevent-loopback off the Service', async () => ((await apiService())?.metadata?.annotations?.[PREVENT_LOOPBACK] === undefined ? true : undefined), { timeoutMs: 30_000, context: logs });
  });

  it("a cluster policy managing every Gateway of the class mitigates them through the class's EnvoyProxy, and gives it all back", async () => {
    // The namespace's own policy goes first: the cluster policy is to manage every Gateway the class's EnvoyProxy reaches.
    await deletePolicy({ namespace: appNs, name: 'gateways' }, { context: logs });
    const name = `gateways-${suffix}`;
    const manifest = {
      apiVersion: 'loopguard.dev/v1alpha1',
      kind: 'ClusterLoopbackPolicy',
      metadata: { name },
      spec: { mode: 'Enforce', targets: ['Gateway'], namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': appNs } } },
    };
    const webSvc = generated!.metadata!.name!;
    const webLb = generated!.metadata!.annotations![LB_ID]!;
    const webSource = async () => (await tke!.emulator.admin.getLoadBalancer(webLb)).Listeners.find((l) => l.Port === 80)?.HealthCheck?.SourceIpType;
    const classAnnotations = async () => ((await envoyProxy()) as { spec: { provider: { kubernetes: { envoyService: { annotations?: Record<string, string> } } } } }).spec.provider.kubernetes.envoyService.annotations;
    expect(await webSource()).toBe(0);
    expect(await applyPolicy(JSON.stringify(manifest))).toMatchObject({ code: 0, stderr: '' });
    // Deleted here whatever happens above: left behind, it selects this namespace's Gateways and takes over the next
    // test's target once that test's own policy goes (one failure would become two).
    try {
      const get = async () => (await custom.getClusterCustomObject({ group: 'loopguard.dev', version: 'v1alpha1', plural: 'clusterloopbackpolicies', name })) as LoopbackPolicy;
      const mitigated = await waitFor(
        'web and api Mitigated',
        async () => {
          const p = await get();
          const targets = (p.status?.targets ?? []) as { name: string; verdict: string; rootCause: string }[];
          return ['web', 'api'].every((n) => targets.some((t) => t.name === n && t.verdict === 'Mitigated')) ? targets : undefined;
        },
        { timeoutMs: 60_000, context: async () => `${JSON.stringify((await get()).status?.targets)}\n${logs()}` },
      );
      expect(mitigated.map((t) => `${t.name} ${t.verdict} ${t.rootCause}`).sort()).toEqual(['api Mitigated LoopbackPrevented', 'orphan Pending GatewayServiceMissing', 'web Mitigated LoopbackPrevented']);
      expect(await classAnnotations()).toEqual({ [SUBNET]: 'subnet-12345678', [PREVENT_LOOPBACK]: 'true' });
      expect(await webSource()).toBe(1);
      const svc = await core.readNamespacedService({ namespace: egNs, name: webSvc });
      expect(svc.metadata?.annotations?.[PREVENT_LOOPBACK]).toBe('true');
      expect((svc.metadata?.managedFields ?? []).map((m) => m.manager)).not.toContain('loopguard');

      expect((await kubectl(['delete', 'clbp', name, '--wait=true', '--timeout=90s'])).code).toBe(0);
      expect(await classAnnotations()).toEqual({ [SUBNET]: 'subnet-12345678' });
      expect(await webSource()).toBe(0);
      expect(await findRecord('Gateway', appNs, 'web')).toBeUndefined();
      expect(await findRecord('Gateway', appNs, 'api')).toBeUndefined();
    } finally {
      await kubectl(['delete', 'clbp', name, '--ignore-not-found', '--wait=true', '--timeout=90s']);
    }
  });

  it('a mitigated Gateway deleted while its policy stays: loopguard takes its key out of the EnvoyProxy and forgets the record', async () => {
    await ownProxyGateway('solo', 'solo', 8081);
    const soloAnnotations = () => proxyAnnotations('solo-proxy');
    const ref: PolicyRef = { namespace: appNs, name: 'solo' };
    expect(await applyPolicy(policyManifest(ref, { mode: 'Enforce', targets: ['Gateway'], selector: { matchLabels: { team: 'solo' } } }))).toMatchObject({ code: 0, stderr: '' });
    await waitForPolicy(ref, 'Gateway solo mitigated', (p) => reportedStatus(p).targets.some((t) => t.name === 'solo' && t.verdict === 'Mitigated'), { context: logs, timeoutMs: 90_000 });
    expect(await soloAnnotations()).toEqual({ 'example.com/team': 'solo', [PREVENT_LOOPBACK]: 'true' });
    expect((await findRecord('Gateway', appNs, 'solo'))?.spec.originals).toMatchObject({ annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: appNs, name: 'solo-proxy' } });

    expect((await kubectl(['delete', 'gateway', 'solo', '-n', appNs, '--wait=true', '--timeout=60s'])).code).toBe(0);
    await waitFor('loopguard took its key out of the deleted Gateway\'s EnvoyProxy', async () => ((await soloAnnotations())?.[PREVENT_LOOPBACK] === undefined ? true : undefined), { timeoutMs: 30_000, context: logs });
    expect(await soloAnnotations()).toEqual({ 'example.com/team': 'solo' });
    await waitFor('the record of the deleted Gateway gone', async () => ((await findRecord('Gateway', appNs, 'solo')) === undefined ? true : undefined), { timeoutMs: 30_000, context: logs });
    await deletePolicy(ref, { context: logs });
  });

  it('a mitigated Gateway moved to another EnvoyProxy: the key leaves the first, goes into the second, and the revert finds it there', async () => {
    await ownProxyGateway('mover', 'mover', 8082);
    await custom.createNamespacedCustomObject({
      ...ENVOY_PROXIES,
      namespace: appNs,
      body: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: 'mover-next' }, spec: { mergeType: 'StrategicMerge', provider: { type: 'Kubernetes', kubernetes: { envoyService: { annotations: { 'example.com/team': 'next' } } } } } },
    });
    const ref: PolicyRef = { namespace: appNs, name: 'mover' };
    expect(await applyPolicy(policyManifest(ref, { mode: 'Enforce', targets: ['Gateway'], selector: { matchLabels: { team: 'mover' } }, revertOnDelete: true }))).toMatchObject({ code: 0, stderr: '' });
    await waitForPolicy(ref, 'Gateway mover mitigated', (p) => reportedStatus(p).targets.some((t) => t.name === 'mover' && t.verdict === 'Mitigated'), { context: logs, timeoutMs: 90_000 });
    expect(await proxyAnnotations('mover-proxy')).toEqual({ 'example.com/team': 'mover', [PREVENT_LOOPBACK]: 'true' });

    // The user points the Gateway at the other EnvoyProxy, as a GitOps change would.
    const patch = JSON.stringify({ spec: { infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'mover-next' } } } });
    expect((await kubectl(['patch', 'gateway', 'mover', '-n', appNs, '--type=merge', '-p', patch])).code).toBe(0);
    const record = await waitFor(
      'the record naming the new EnvoyProxy',
      async () => {
        const r = await findRecord('Gateway', appNs, 'mover');
        return r?.spec.originals?.envoyProxy?.name === 'mover-next' ? r : undefined;
      },
      { timeoutMs: 60_000, context: logs },
    );
    expect(record.spec.originals).toMatchObject({ annotations: { [PREVENT_LOOPBACK]: null }, envoyProxy: { namespace: appNs, name: 'mover-next' } });
    expect(await proxyAnnotations('mover-proxy')).toEqual({ 'example.com/team': 'mover' });
    await waitFor('the key in the new EnvoyProxy', async () => ((await proxyAnnotations('mover-next'))?.[PREVENT_LOOPBACK] === 'true' ? true : undefined), { timeoutMs: 30_000, context: logs });
    expect(await proxyAnnotations('mover-next')).toEqual({ 'example.com/team': 'next', [PREVENT_LOOPBACK]: 'true' });
    await waitForPolicy(ref, 'Gateway mover mitigated again', (p) => reportedStatus(p).targets.some((t) => t.name === 'mover' && t.verdict === 'Mitigated'), { context: logs, timeoutMs: 60_000 });

    await deletePolicy(ref, { context: logs, timeoutMs: 90_000 });
    expect(await proxyAnnotations('mover-next')).toEqual({ 'example.com/team': 'next' });
    expect(await proxyAnnotations('mover-proxy')).toEqual({ 'example.com/team': 'mover' });
    expect(await findRecord('Gateway', appNs, 'mover')).toBeUndefined();
  });
});
