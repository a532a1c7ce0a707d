import { describe, expect, it } from '@jest/globals';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { ReportingWatch } from '../../src/runtime/informer.js';

/** A kubeconfig whose credentials come from an exec plugin that fails, as a broken or revoked credential helper does. */
function failingExecKubeconfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false }],
    users: [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', 'echo credential revoked >&2; exit 1'], interactiveMode: 'Never' } }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('ReportingWatch', () => {
  it("client-node's own Watch rejects instead (the rejection ListWatch leaves unhandled when it watches again)", async () => {
    const done: unknown[] = [];
    await expect(new Watch(failingExecKubeconfig()).watch('/api/v1/configmaps', {}, () => undefined, (err) => done.push(err))).rejects.toThrow('credential revoked');
    expect(done).toEqual([]);
  });

  it('a watch whose credentials fail reports the failure to done instead of rejecting', async () => {
    const errors: unknown[] = [];
    const request = new ReportingWatch(failingExecKubeconfig()).watch('/api/v1/configmaps', {}, () => undefined, (err) => errors.push(err));
    await expect(request).resolves.toBeInstanceOf(AbortController);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toContain('credential revoked');
  });
});
