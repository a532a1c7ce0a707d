// Smoke tests of the test ground itself: the behaviours controllers break on, seen through the same clients
// loopguard uses (client-node 2.x) and that users use (kubectl). If these fail, no other integration test means much.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type KubeConfig,
  type V1Service,
} from '@kubernetes/client-node';
import { createNamespace, deleteNamespace, kubeConfig, kubectl, userKubeconfigPath, waitFor } from '../support/kube.js';

const GROUP = 'fidelity.loopguard.dev';
const WIDGET_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${GROUP}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
  - name: v1
    served: true
    storage: true
    subresources: { status: {} }
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: { type: integer, minimum: 1, maximum: 10 }
          status:
            type: object
            properties:
              phase: { type: string }
`;

function pinnedVersion(): string {
  const goMod = readFileSync(new URL('../controlplane/go.mod', import.meta.url), 'utf8');
  const m = /^\s*k8s\.io\/kubernetes (v\d+\.\d+\.\d+)/m.exec(goMod);
  if (!m?.[1]) throw new Error('go.mod pins no k8s.io/kubernetes version');
  return m[1];
}

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

describe('test ground fidelity', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: string;

  beforeAll(async () => {
    kc = kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createNamespace('fidelity');
  });
  afterAll(async () => {
    await deleteNamespace(ns);
  });

  it('kubectl reports the pinned server version', async () => {
    const res = await kubectl(['version', '-o', 'json']);
    expect(res.code).toBe(0);
    const version = JSON.parse(res.stdout) as { serverVersion: { gitVersion: string } };
    expect(version.serverVersion.gitVersion).toBe(pinnedVersion());
  });

  it('an informer sees a Service being created, updated and deleted', async () => {
    const seen: string[] = [];
    const informer = makeInformer<V1Service>(kc, `/api/v1/namespaces/${ns}/services`, () =>
      core.listNamespacedService({ namespace: ns }),
    );
    informer.on('add', (s) => seen.push(`add:${s.metadata?.name}`));
    informer.on('update', (s) => seen.push(`update:${s.metadata?.name}:${s.metadata?.labels?.stage ?? ''}`));
    informer.on('delete', (s) => seen.push(`delete:${s.metadata?.name}`));
    await informer.start();
    try {
      await core.createNamespacedService({
        namespace: ns,
        body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }], selector: { app: 'web' } } },
      });
      await waitFor('add event', () => seen, { until: (events) => events.includes('add:web') });
      await core.patchNamespacedService({ namespace: ns, name: 'web', body: [{ op: 'add', path: '/metadata/labels', value: { stage: 'two' } }] });
      await waitFor('update event', () => seen, { until: (events) => events.includes('update:web:two') });
      await core.deleteNamespacedService({ namespace: ns, name: 'web' });
      await waitFor('delete event', () => seen, { until: (events) => events.includes('delete:web') });
      expect(informer.get('web', ns)).toBeUndefined();
    } finally {
      await informer.stop();
    }
  });

  it('a stale update is rejected with 409 Conflict (optimistic concurrency)', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'occ' }, data: { v: '1' } } });
    const stale = structuredClone(created);
    await core.replaceNamespacedConfigMap({ namespace: ns, name: 'occ', body: { ...created, data: { v: '2' } } });
    const err = await core
      .replaceNamespacedConfigMap({ namespace: ns, name: 'occ', body: { ...stale, data: { v: '3' } } })
      .catch((e: unknown) => e);
    expect(statusOf(err)).toBe(409);
    expect((await core.readNamespacedConfigMap({ namespace: ns, name: 'occ' })).data).toEqual({ v: '2' });
  });

  it('a finalizer holds deletion until it is removed', async () => {
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'held', finalizers: ['loopguard.dev/test'] } },
    });
    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'held' });
    const terminating = await core.readNamespacedConfigMap({ namespace: ns, name: 'held' });
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    await core.patchNamespacedConfigMap({ namespace: ns, name: 'held', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    const err = await core.readNamespacedConfigMap({ namespace: ns, name: 'held' }).catch((e: unknown) => e);
    expect(statusOf(err)).toBe(404);
  });

  it('RBAC is on: the unprivileged user is forbidden', async () => {
    const user = userKubeconfigPath();
    expect(user).toBeDefined();
    const res = await kubectl(['get', 'configmaps', '-n', ns], { kubeconfig: user! });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/forbidden/i);
  });

  describe('custom resources', () => {
    let co: CustomObjectsApi;
    beforeAll(async () => {
      const apply = await kubectl(['apply', '-f', '-'], { input: WIDGET_CRD });
      expect(apply.stderr).toBe('');
      const wait = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/widgets.${GROUP}`]);
      expect(wait.code).toBe(0);
      co = kc.makeApiClient(CustomObjectsApi);
    });

    it('the CRD schema rejects an invalid object at admission', async () => {
      const bad = `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata: {name: big, namespace: ${ns}}\nspec: {size: 99}\n`;
      const res = await kubectl(['apply', '-f', '-'], { input: bad });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain('spec.size');
      expect(res.stderr).toMatch(/less than or equal to 10/);
    });

    it('a status-subresource update does not bump metadata.generation; a spec change does', async () => {
      const base = { group: GROUP, version: 'v1', namespace: ns, plural: 'widgets' };
      await co.createNamespacedCustomObject({
        ...base,
        body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
      });
      const before = (await co.getNamespacedCustomObject({ ...base, name: 'w1' })) as { metadata: { generation: number } };
      await co.patchNamespacedCustomObjectStatus({ ...base, name: 'w1', body: [{ op: 'add', path: '/status', value: { phase: 'Ready' } }] });
      const afterStatus = (await co.getNamespacedCustomObject({ ...base, name: 'w1' })) as {
        metadata: { generation: number };
        status?: { phase?: string };
      };
      expect(afterStatus.status?.phase).toBe('Ready');
      expect(afterStatus.metadata.generation).toBe(before.metadata.generation);
      // Writing status through the main resource is ignored: the status subresource owns it.
      await co.patchNamespacedCustomObject({ ...base, name: 'w1', body: [{ op: 'replace', path: '/spec/size', value: 2 }, { op: 'replace', path: '/status/phase', value: 'Hacked' }] });
      const afterSpec = (await co.getNamespacedCustomObject({ ...base, name: 'w1' })) as {
        metadata: { generation: number };
        status?: { phase?: string };
      };
      expect(afterSpec.metadata.generation).toBe(before.metadata.generation + 1);
      expect(afterSpec.status?.phase).toBe('Ready');
    });
  });
});
