import { describe, expect, it } from '@jest/globals';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { PooledKubeConfig } from '../../../src/kube/pooled-kubeconfig.js';

// Two users of one https cluster with a CA: client-node builds an undici Agent for it (TLS options present).
const KUBECONFIG = `
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: "${Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64')}"}
- name: plain
  cluster: {server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true}
users:
- name: a
  user: {token: token-a}
- name: b
  user: {token: token-b}
contexts:
- name: ca
  context: {cluster: c, user: a}
- name: cb
  context: {cluster: c, user: b}
- name: plain
  context: {cluster: plain, user: a}
current-context: ca
`;

async function dispatcherOf(kc: KubeConfig): Promise<unknown> {
  const context = new RequestContext('https://127.0.0.1:6443/api/v1/namespaces/default', HttpMethod.GET);
  await kc.applySecurityAuthentication(context);
  return context.getDispatcher();
}

function load<T extends KubeConfig>(kc: T): T {
  kc.loadFromString(KUBECONFIG);
  return kc;
}

describe('PooledKubeConfig', () => {
  it('client-node itself gives every request an Agent of its own (what the pool is for)', async () => {
    const kc = load(new KubeConfig());
    const [a, b] = [await dispatcherOf(kc), await dispatcherOf(kc)];
    expect(a).toBeDefined();
    expect(a).not.toBe(b);
  });

  it('every request of the same cluster and user goes through one Agent, with the request authenticated as before', async () => {
    const kc = load(new PooledKubeConfig());
    const first = await dispatcherOf(kc);
    expect(first).toBeDefined();
    for (let i = 0; i < 5; i++) expect(await dispatcherOf(kc)).toBe(first);
    const context = new RequestContext('https://127.0.0.1:6443/api', HttpMethod.GET);
    await kc.applySecurityAuthentication(context);
    expect(context.getHeaders()['Authorization']).toBe('Bearer token-a');
  });

  it('another user or cluster gets a pool of its own', async () => {
    const kc = load(new PooledKubeConfig());
    const a = await dispatcherOf(kc);
    kc.setCurrentContext('cb');
    const b = await dispatcherOf(kc);
    expect(b).toBeDefined();
    expect(b).not.toBe(a);
    expect(await dispatcherOf(kc)).toBe(b);
    kc.setCurrentContext('plain');
    const plain = await dispatcherOf(kc);
    expect([a, b]).not.toContain(plain);
    expect(await dispatcherOf(kc)).toBe(plain);
  });
});
