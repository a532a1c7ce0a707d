// client-node informers stop on errors; ours must come back after the apiserver itself goes away.
// This suite restarts an apiserver, so it runs its own private control plane, not the shared one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1ConfigMap } from '@kubernetes/client-node';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { restartApiserver, startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { ResilientInformer } from '../../src/runtime/informer.js';
import { kubeConfig, waitFor } from '../support/kube.js';

describe('ResilientInformer', () => {
  let cp: ControlPlaneState;
  let kc: KubeConfig;
  beforeAll(async () => {
    cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    kc = kubeConfig(cp.kubeconfig);
  });
  afterAll(async () => {
    if (cp) await stopControlPlane(cp);
  });

  it('restarts after the apiserver crashes and keeps delivering events', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const seen = new Set<string>();
    const warnings: string[] = [];
    const informer = new ResilientInformer<V1ConfigMap>(kc, {
      name: 'configmaps',
      path: '/api/v1/namespaces/default/configmaps',
      list: () => core.listNamespacedConfigMap({ namespace: 'default' }),
      onEvent: (type, cm) => seen.add(`${type}:${cm.metadata?.name}`),
      logger: { info: () => undefined, warn: (m) => warnings.push(m) },
      restartDelay: () => 200,
    });
    await informer.start();
    expect(informer.hasSynced).toBe(true);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'before' } } });
    await waitFor('event before the crash', () => seen, { until: (events) => events.has('add:before') });

    await restartApiserver(cp, 1_500);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after' } } });
    await waitFor('event after the restart', () => seen, { until: (events) => events.has('add:after'), timeoutMs: 45_000 });
    expect(informer.get('after', 'default')).toBeDefined();
    expect(informer.get('before', 'default')).toBeDefined();
    // client-node alone would have stopped for good: the recovery above is the wrapper's restart.
    expect(informer.restarts).toBeGreaterThanOrEqual(1);
    expect(warnings).toContain('Informer failed, restarting');
    await informer.stop();
  });

  it('an API the apiserver does not serve (an optional CRD absent) is said once, not at every retry, and found once served', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const plural = 'widgets';
    const group = 'loopguard-test.example.com';
    const lines: string[] = [];
    const informer = new ResilientInformer<KubernetesObject>(kc, {
      name: plural,
      path: `/apis/${group}/v1/${plural}`,
      list: async () => (await custom.listClusterCustomObject({ group, version: 'v1', plural })) as KubernetesListObject<KubernetesObject>,
      onEvent: () => undefined,
      logger: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) },
      restartDelay: () => 100,
    });
    void informer.start();
    await waitFor('several LISTs answered 404', async () => (informer.restarts >= 5 ? true : undefined), { timeoutMs: 20_000 });
    expect(informer.notServed).toMatch(/does not serve .* \(HTTP 404\)/);
    expect(lines).toEqual(['info Resource not served; checking again until it is']);
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}` },
      spec: { group, names: { plural, kind: 'Widget', singular: 'widget' }, scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    };
    await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd });
    await waitFor('the CRD served and listed', async () => (informer.hasSynced && informer.notServed === undefined ? true : undefined), { timeoutMs: 30_000 });
    await informer.stop();
  });

});
