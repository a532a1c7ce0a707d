// The policies' `probe:` field (issue 41; docs/probe.md) through a real kube-apiserver, as a user meets it with
// kubectl: off by default (the apiserver fills probe: {enabled: false, path: /}), and a bad path or a probe.targets
// naming a kind the policy does not select are refused with the CRD's message, in both kinds.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createNamespace, deleteNamespace, kubectl } from '../support/kube.js';

const CLUSTER_NAME = `probe-policy-${process.pid}`;

const apply = (doc: object) => kubectl(['apply', '-f', '-'], { input: JSON.stringify(doc) });
const lbp = (ns: string, name: string, spec: object) => ({ apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { name, namespace: ns }, spec });
const clbp = (spec: object) => ({ apiVersion: 'loopguard.dev/v1alpha1', kind: 'ClusterLoopbackPolicy', metadata: { name: CLUSTER_NAME }, spec });

const PATH_MESSAGE = 'probe.path must be an absolute path of visible ASCII characters, without spaces, such as /healthz';
const NARROW_MESSAGE = 'probe.targets can only narrow spec.targets: every kind it names must be in spec.targets';

describe('probe: in the policies', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await createNamespace('probe-policy');
  });
  afterAll(async () => {
    await kubectl(['delete', 'clbp', CLUSTER_NAME, '--ignore-not-found']);
    await deleteNamespace(ns);
  });

  it('is off by default, and takes enabled, a path and narrower kinds', async () => {
    expect((await apply(lbp(ns, 'plain', {}))).code).toBe(0);
    expect((await apply(lbp(ns, 'probed', { targets: ['Service', 'Ingress'], probe: { enabled: true, path: '/healthz', targets: ['Ingress'] } }))).code).toBe(0);
    const spec = async (name: string) => (JSON.parse((await kubectl(['get', 'lbp', name, '-n', ns, '-o', 'json'])).stdout) as { spec: { probe: unknown } }).spec.probe;
    expect(await spec('plain')).toEqual({ enabled: false, path: '/' });
    expect(await spec('probed')).toEqual({ enabled: true, path: '/healthz', targets: ['Ingress'] });
  });

  it.each([
    ['a relative path', { probe: { enabled: true, path: 'healthz' } }, PATH_MESSAGE],
    ['a path with a space', { probe: { enabled: true, path: '/a b' } }, PATH_MESSAGE],
    ['a kind the policy does not select', { targets: ['Service'], probe: { enabled: true, targets: ['Ingress'] } }, NARROW_MESSAGE],
  ])('refuses %s, saying why (LoopbackPolicy and ClusterLoopbackPolicy)', async (_what, spec, message) => {
    const ours = await apply(lbp(ns, 'bad', spec));
    expect(ours.code).not.toBe(0);
    expect(ours.stderr).toContain(message);
    const cluster = await apply(clbp(spec));
    expect(cluster.code).not.toBe(0);
    expect(cluster.stderr).toContain(message);
  });
});
