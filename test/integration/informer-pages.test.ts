// listInPages against the real apiserver (src/runtime/informer.ts): a LIST read in pages of two reads every page, for
// a typed list (Services: client-node deserializes the token as `_continue`) and for a custom resource's list (the
// apiserver's JSON as it came: `continue`). The second shape was once read as the first, and a restart with 2,500
// LoopbackRecords cached 500 of them (the rest taken as lost records).
import { describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/api/loopbackpolicy.js';
import { RECORD_PLURAL, recordName, TARGET_NAMESPACE_LABEL } from '../../src/api/loopbackrecord.js';
import { listInPages } from '../../src/runtime/informer.js';
import { createNamespace, kubeConfig } from '../support/kube.js';

describe('listInPages on the apiserver', () => {
  const kc = kubeConfig();
  const keep = (o: KubernetesObject) => o;

  it('reads every page of a typed list and of a custom resource list', async () => {
    const namespace = await createNamespace('pages');
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) {
      await core.createNamespacedService({ namespace, body: { metadata: { name }, spec: { ports: [{ port: 80 }] } } });
      const target = { kind: 'Service' as const, namespace, name };
      await custom.createClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: RECORD_PLURAL,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'LoopbackRecord', metadata: { name: recordName(target), labels: { [TARGET_NAMESPACE_LABEL]: namespace } }, spec: { target, policy: { namespace, name: 'p' }, originals: { v: 1 } } },
      });
    }
    const services = await listInPages((page) => core.listNamespacedService({ namespace, ...page }), keep, 2);
    expect(services.items.map((s) => s.metadata?.name)).toEqual(names);
    const records = await listInPages(
      async (page) => (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: RECORD_PLURAL, labelSelector: `${TARGET_NAMESPACE_LABEL}=${namespace}`, ...page })) as KubernetesListObject<KubernetesObject>,
      keep,
      2,
    );
    expect(records.items.map((r) => r.metadata?.name)).toEqual(names.map((name) => recordName({ kind: 'Service', namespace, name })));
    expect(records.metadata?.resourceVersion).toMatch(/^\d+$/);
  });
});
