// The administrator's one-time CoreDNS setup for `l7.inClusterDNS: Managed` (docs/dns.md §4.1), and its undoing
// before an uninstall (§4.2), run exactly as the page shows them (its two `sh` blocks, in a shell with only KUBECONFIG set) against a CoreDNS Deployment and Corefile
// shaped like TKE's (docs/dns.md §2: the Corefile is TKE's documented default; the Deployment mounts it as upstream's
// manifest does, key Corefile at /etc/coredns). The mount of loopguard's ConfigMap joins the Deployment beside the
// Corefile's; the import line lands in the `.:53` block right after `reload`, and nothing else of the Corefile moves.
// The test apiserver runs no controllers: the Deployment is only stored, which is all the commands touch.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { kubeConfig, kubeconfigPath } from '../support/kube.js';
import { markdownSection, shellBlocks } from '../support/readme.js';

const KUBE_SYSTEM = 'kube-system';
const IMPORT = 'import /etc/coredns/loopguard/*.rules';

/** TKE's default Corefile (docs/dns.md §2, TKE "CoreDNS Notes"), in CoreDNS's usual indentation. */
const TKE_COREFILE = `.:53 {
    template ANY HINFO . {
        rcode NXDOMAIN
    }
    errors
    health {
        lameduck 30s
    }
    ready
    kubernetes cluster.local. in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    prometheus :9153
    forward . /etc/resolv.conf {
        prefer_udp
    }
    cache 30
    reload
    loadbalance
}
`;

const deployment = {
  metadata: { name: 'coredns', labels: { 'k8s-app': 'kube-dns' } },
  spec: {
    selector: { matchLabels: { 'k8s-app': 'kube-dns' } },
    template: {
      metadata: { labels: { 'k8s-app': 'kube-dns' } },
      spec: {
        containers: [
          {
            name: 'coredns',
            image: 'coredns/coredns:1.11.3',
            args: ['-conf', '/etc/coredns/Corefile'],
            volumeMounts: [{ name: 'config-volume', mountPath: '/etc/coredns', readOnly: true }],
          },
        ],
        volumes: [{ name: 'config-volume', configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] } }],
      },
    },
  },
};

describe("the administrator's one-time CoreDNS setup (docs/dns.md §4.1), as written", () => {
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const blocks = shellBlocks(markdownSection("### 4.1 The administrator's one-time setup", 'docs/dns.md'));

  beforeAll(async () => {
    // Another suite of this worker may have left its own Corefile: this one starts from TKE's.
    await core.deleteNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'coredns' }).catch(() => undefined);
    await core.createNamespacedConfigMap({ namespace: KUBE_SYSTEM, body: { metadata: { name: 'coredns' }, data: { Corefile: TKE_COREFILE } } });
    await apps.createNamespacedDeployment({ namespace: KUBE_SYSTEM, body: deployment });
  });

  afterAll(async () => {
    await apps.deleteNamespacedDeployment({ namespace: KUBE_SYSTEM, name: 'coredns' }).catch(() => undefined);
    await core.deleteNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'coredns' }).catch(() => undefined);
  });

  const run = (script: string) =>
    promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', KUBECONFIG: kubeconfigPath() } });

  it('has the two steps to run: the mount, then the import line', () => {
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toContain('patch deployment coredns');
    expect(blocks[1]).toContain(IMPORT);
  });

  it("mounts loopguard's ConfigMap beside the Corefile's, optional, read-only, without subPath", async () => {
    await run(blocks[0]!);
    const spec = JSON.parse(JSON.stringify((await apps.readNamespacedDeployment({ namespace: KUBE_SYSTEM, name: 'coredns' })).spec!.template.spec!)) as typeof deployment.spec.template.spec;
    // The apiserver defaults defaultMode (0644) on both.
    expect(spec.volumes).toEqual([
      { name: 'config-volume', configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }], defaultMode: 420 } },
      { name: 'loopguard-rules', configMap: { name: 'loopguard-coredns-rules', optional: true, defaultMode: 420 } },
    ]);
    expect(spec.containers[0]!.volumeMounts).toEqual([
      { name: 'config-volume', mountPath: '/etc/coredns', readOnly: true },
      { name: 'loopguard-rules', mountPath: '/etc/coredns/loopguard', readOnly: true },
    ]);
  });

  it("adds the import line right after `reload` in TKE's `.:53` block, and changes nothing else", async () => {
    const { stdout } = await run(blocks[1]!);
    // kubectl replace says what it did; the page's own check (grep -n) prints the line it found.
    expect(stdout.trim().split('\n')).toEqual(['configmap/coredns replaced', `20:    ${IMPORT}`]);
    const corefile = (await core.readNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'coredns' })).data?.['Corefile'];
    expect(corefile).toBe(TKE_COREFILE.replace('    reload\n', `    reload\n    ${IMPORT}\n`));
  });

  describe('and its undoing before an uninstall (§4.2)', () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const CLBP = { group: 'loopguard.dev', version: 'v1alpha1', plural: 'clusterloopbackpolicies' };
    const name = `dns-setup-${randomBytes(3).toString('hex')}`;
    const undo = shellBlocks(markdownSection('### 4.2 Uninstalling: take the rules out first', 'docs/dns.md'));
    const header = '# Managed by loopguard (l7.inClusterDNS: Managed); loopguard rewrites this file whole.\n# 0 rules.\n';

    afterAll(async () => {
      await custom.deleteClusterCustomObject({ ...CLBP, name }).catch(() => undefined);
      await core.deleteNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'loopguard-coredns-rules' }).catch(() => undefined);
    });

    it('turns Managed off on every cluster policy and counts the rules left; then takes the import line out and the ConfigMap away', async () => {
      expect(undo).toHaveLength(2);
      await custom.createClusterCustomObject({ ...CLBP, body: { apiVersion: 'loopguard.dev/v1alpha1', kind: 'ClusterLoopbackPolicy', metadata: { name }, spec: { mode: 'Enforce', l7: { inClusterDNS: 'Managed' } } } });
      // What the operator leaves once no policy asks (no operator runs here): the header alone. An install another suite
      // of this worker made (config/default, the chart) may have created the ConfigMap already: this one starts afresh.
      await core.deleteNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'loopguard-coredns-rules' }).catch(() => undefined);
      await core.createNamespacedConfigMap({ namespace: KUBE_SYSTEM, body: { metadata: { name: 'loopguard-coredns-rules' }, data: { 'loopguard.rules': header } } });
      // The count is grep -c's: 0, with grep's exit status 1 (no line matched), as a user sees it.
      const step1 = await run(undo[0]!).catch((err: { stdout?: string; code?: number }) => err);
      expect(step1.stdout?.trim().split('\n').at(-1)).toBe('0');
      const policy = (await custom.getClusterCustomObject({ ...CLBP, name })) as { spec: { l7: { inClusterDNS: string } } };
      expect(policy.spec.l7.inClusterDNS).toBe('Unmanaged');

      // Step 3 with the edit left to the user (EDITOR=true: kubectl edit saves nothing).
      await run(`export EDITOR=true\n${undo[1]!}`);
      expect((await core.readNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'coredns' })).data?.['Corefile']).toBe(TKE_COREFILE);
      await expect(core.readNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: 'loopguard-coredns-rules' })).rejects.toMatchObject({ code: 404 });
    });
  });
});
