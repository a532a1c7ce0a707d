// `l7.inClusterDNS: Managed` end to end (issue 42 #2; docs/dns.md §4): the operator, the local TKE (CLB emulator +
// TKE simulator) and real CoreDNS (built from its Go module: test/support/coredns.ts), all on the test apiserver.
//   - The account lacks the L7 keepalive ticket, so a private Ingress stays AtRisk (KeepaliveCapabilityMissing): no
//     annotation fixes it. A ClusterLoopbackPolicy in Enforce with Managed has loopguard write its host's rule into
//     kube-system/loopguard-coredns-rules; CoreDNS, whose Corefile imports that ConfigMap's file, then answers the
//     host with the backend Service's ClusterIP; the policy says so (InClusterDNS True).
//   - A second host of the Ingress, whose upstream answer is not the CLB's VIP (someone else's name), is never
//     written, and the condition says why.
//   - Someone else's broken Corefile edit: the rules changed meanwhile are reported not in effect, naming the
//     Corefile that does not parse, and loopguard never touches the Corefile; fixed, the rules apply.
//   - Managed turned off, and the policy deleted: the rules leave the file (header only) and the host resolves to
//     the CLB's VIP again.
// CoreDNS reads its Corefile and the rules from the ConfigMaps through syncConfigMapFiles, which stands in for the
// kubelet's ConfigMap volume (a test cannot mount one into a process). A `hosts` block on its own port stands in for
// the VPC's DNS: what CoreDNS forwards to and what loopguard asks whose a name is (--dns-upstream).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Condition } from '../../src/api/conditions.js';
import type { ClusterLoopbackPolicy } from '../../src/api/clusterloopbackpolicy.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { coreDnsTools, freeDnsPort, startCoreDns, syncConfigMapFiles, type ConfigMapSync, type CoreDnsProcess } from '../support/coredns.js';
import { addressesOf, queryA } from '../support/dns-query.js';
import { createNamespace, deleteNamespace, kubeConfig, kubeconfigPath, kubectl, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { lbIngress, PRIVATE_INGRESS } from '../support/workload.js';

const SUITE = 'test/integration/dns-managed.test.ts';
const tools = coreDnsTools(SUITE);

const SHOP = 'shop.example.com';
const API_HOST = 'api.example.com';
/** Someone else's name, written into the Ingress too: the upstream answers another address. */
const PARTNER = 'partner.example.net';
const PARTNER_IP = '203.0.113.7';
const KUBE_SYSTEM = 'kube-system';
const RULES_CM = 'loopguard-coredns-rules';
const COREFILE_CM = 'coredns';
const CLBP = { group: 'loopguard.dev', version: 'v1alpha1', plural: 'clusterloopbackpolicies' };
/** loopguard's wait for CoreDNS to apply its rules (--dns-check-wait): short, CoreDNS here reloads every 2 s + 1 s. */
const CHECK_WAIT_S = 12;

describe(`l7.inClusterDNS: Managed with CoreDNS ${tools.version}`, () => {
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const policy = `dns-${randomBytes(3).toString('hex')}`;
  const port = { upstream: 0, main: 0 };
  let tke: LocalTke | undefined;
  let dns: CoreDnsProcess | undefined;
  let sync: ConfigMapSync | undefined;
  let ns = '';
  let vip = '';
  let clusterIp = '';

  const logs = () => `--- coredns logs ---\n${dns?.logs().slice(-3000) ?? ''}\n--- operator logs ---\n${tke?.operator?.logs().slice(-5000) ?? ''}`;
  /** TKE's Corefile shape (docs/dns.md §2) with the one import line the design asks the administrator for. */
  const corefile = () => `# the VPC's DNS, as forward reaches it: the CLB's VIP for the Ingress's hosts
.:${port.upstream} {
  bind 127.0.0.1
  hosts {
    ${vip} ${SHOP}
    ${vip} ${API_HOST}
    ${PARTNER_IP} ${PARTNER}
  }
}
# the cluster's CoreDNS
.:${port.main} {
  bind 127.0.0.1
  errors
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig "${kubeconfigPath()}"
    fallthrough in-addr.arpa ip6.arpa
  }
  forward . 127.0.0.1:${port.upstream}
  cache 30
  reload 2s 1s
  import loopguard/*.rules
}
`;
  /** Someone else's edit: a block opened and never closed (the syntax error of coredns.test.ts, §3 #7 of docs/dns.md). */
  const brokenCorefile = () => `${corefile()}\n.:${port.main} {\n  bind 127.0.0.1\n`;
  const setCorefile = (text: string) => core.patchNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: COREFILE_CM, body: { data: { Corefile: text } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const rulesText = async () => (await core.readNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: RULES_CM })).data?.['loopguard.rules'] ?? '';
  const through = async (name: string) => addressesOf(await queryA(port.main, name), name);
  const resolvesTo = (name: string, want: string) =>
    waitFor(`${name} → ${want} through CoreDNS`, () => through(name), { until: (a) => a.length === 1 && a[0] === want, timeoutMs: 30_000, intervalMs: 200, context: logs });
  const stored = async () => (await custom.getClusterCustomObject({ ...CLBP, name: policy })) as ClusterLoopbackPolicy;
  const dnsCondition = (p: ClusterLoopbackPolicy): Condition | undefined => p.status?.conditions?.find((c) => c.type === 'InClusterDNS');
  const waitForDns = async (what: string, ok: (c: Condition | undefined) => boolean, timeoutMs = 60_000): Promise<Condition> =>
    (await waitFor(`InClusterDNS ${what}`, async () => dnsCondition(await stored()), { until: ok, timeoutMs, intervalMs: 250, context: async () => `${JSON.stringify(dnsCondition(await stored()))}\n${logs()}` })) ?? { type: 'InClusterDNS', status: 'Unknown', reason: 'Absent', message: '', lastTransitionTime: '' };
  const applyPolicy = (inClusterDNS: 'Managed' | 'Unmanaged') =>
    kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'loopguard.dev/v1alpha1',
        kind: 'ClusterLoopbackPolicy',
        metadata: { name: policy },
        spec: { mode: 'Enforce', targets: ['Ingress'], namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } }, l7: { inClusterDNS } },
      }),
    });

  beforeAll(async () => {
    port.upstream = await freeDnsPort();
    do port.main = await freeDnsPort();
    while (port.main === port.upstream);
    tke = await startLocalTke({
      operator: {
        leaderElect: false,
        extraArgs: ['--drift-check-interval=3s', '--tke-grace-period=3s', `--dns-upstream=127.0.0.1:${port.upstream}`, `--coredns-servers=127.0.0.1:${port.main}`, `--dns-check-wait=${CHECK_WAIT_S}s`],
      },
    });
    // The account without the L7 keepalive ticket: the Ingress's loopback has no fix on the TKE side.
    await tke.emulator.admin.setCapabilities({ l7KeepaliveSnat: false });
    ns = await createNamespace('dns');
    tke.namespaces.add(ns);
    await core.createNamespacedService({ namespace: ns, body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } } });
    clusterIp = (await core.readNamespacedService({ namespace: ns, name: 'web' })).spec!.clusterIP!;
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress('web', { annotations: PRIVATE_INGRESS, rules: [{ host: SHOP, paths: ['/'] }, { host: PARTNER, paths: ['/'] }], backend: { name: 'web', port: 80 } }) });
    vip = await waitFor('the Ingress\'s CLB VIP from TKE', async () => (await net.readNamespacedIngress({ namespace: ns, name: 'web' })).status?.loadBalancer?.ingress?.[0]?.ip, { timeoutMs: 60_000, context: logs });
    // What the administrator has: the rules' ConfigMap as config/default creates it, and a Corefile with the import.
    expect((await kubectl(['apply', '-f', join(REPO_ROOT, 'config/manager/coredns_rules.yaml')])).code).toBe(0);
    await core.createNamespacedConfigMap({ namespace: KUBE_SYSTEM, body: { metadata: { name: COREFILE_CM }, data: { Corefile: corefile() } } });
    dns = await startCoreDns({ binary: tools.binary, files: { Corefile: corefile(), 'loopguard/loopguard.rules': await rulesText() } });
    sync = syncConfigMapFiles(core, dns, { Corefile: { namespace: KUBE_SYSTEM, name: COREFILE_CM, key: 'Corefile' }, 'loopguard/loopguard.rules': { namespace: KUBE_SYSTEM, name: RULES_CM, key: 'loopguard.rules' } });
    // Before any policy: the host is the CLB's, through CoreDNS as through the VPC's DNS.
    await resolvesTo(SHOP, vip);
  }, 180_000);

  afterAll(async () => {
    const left = await custom.getClusterCustomObject({ ...CLBP, name: policy }).catch(() => undefined);
    if (left) {
      await custom.patchClusterCustomObject({ ...CLBP, name: policy, body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
      await custom.deleteClusterCustomObject({ ...CLBP, name: policy }).catch(() => undefined);
    }
    await sync?.stop();
    await dns?.stop();
    await tke?.stop();
    for (const name of [RULES_CM, COREFILE_CM]) await core.deleteNamespacedConfigMap({ namespace: KUBE_SYSTEM, name }).catch(() => undefined);
    if (ns) await deleteNamespace(ns);
  });

  it("in Enforce, the Ingress's host resolves to its Service's ClusterIP through CoreDNS; a name that is not the CLB's is never written", async () => {
    expect(await applyPolicy('Managed')).toMatchObject({ code: 0, stderr: '' });
    const inEffect = await waitForDns('RulesInEffect', (c) => c?.status === 'True' && c.reason === 'RulesInEffect', 90_000);
    expect(inEffect.message).toContain(`${SHOP} → web.${ns}.svc.cluster.local`);
    expect(inEffect.message).toContain(`Not rewritten: ${PARTNER} (Ingress ${ns}/web): the upstream DNS (127.0.0.1:${port.upstream}) answers ${PARTNER_IP}, not the target's CLB VIP ${vip}`);
    const target = (await stored()).status?.targets?.find((t) => t.kind === 'Ingress' && t.name === 'web');
    expect({ verdict: target?.verdict, rootCause: target?.rootCause }).toEqual({ verdict: 'AtRisk', rootCause: 'KeepaliveCapabilityMissing' });
    const text = await rulesText();
    expect(text.split('\n').filter((l) => l.startsWith('rewrite '))).toEqual([`rewrite stop name exact ${SHOP}. web.${ns}.svc.cluster.local. answer auto`]);
    expect(text).toContain(`for ClusterLoopbackPolicy ${policy} (l7.inClusterDNS: Managed)`);
    expect(await through(SHOP)).toEqual([clusterIp]);
    expect(await through(PARTNER)).toEqual([PARTNER_IP]);
    // The Ingress's own users read both in `kubectl describe ingress` (the condition is the cluster policy's).
    const events = await waitFor(
      "the DNS Events on the Ingress",
      async () => {
        const list = (await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.kind=Ingress,involvedObject.name=web' })).items;
        const dnsEvents = list.filter((e) => e.reason === 'DnsRewritten' || e.reason === 'DnsRewriteRefused').map((e) => `${e.type} ${e.reason}: ${e.message}`).sort();
        return dnsEvents.length === 2 ? dnsEvents : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, context: logs },
    );
    expect(events).toEqual([
      `Normal DnsRewritten: In-cluster DNS: CoreDNS answers ${SHOP} with the address of web.${ns}.svc.cluster.local, so in-cluster callers skip the CLB (l7.inClusterDNS: Managed).`,
      `Warning DnsRewriteRefused: In-cluster DNS: ClusterLoopbackPolicy/${policy} does not rewrite ${PARTNER}: the upstream DNS (127.0.0.1:${port.upstream}) answers ${PARTNER_IP}, not the target's CLB VIP ${vip}: the name is not shown to be the target's.`,
    ]);
    // The Corefile is the administrator's: as it was.
    expect((await core.readNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: COREFILE_CM })).data?.['Corefile']).toBe(corefile());
  }, 120_000);

  it("reports someone else's broken Corefile edit, never papering over it, and the rules apply once it is fixed", async () => {
    const broken = brokenCorefile();
    await setCorefile(broken);
    try {
      await waitFor('CoreDNS refusing the broken Corefile', () => /plugin\/reload: Corefile parse failed/.test(dns!.logs()) || undefined, { timeoutMs: 30_000, intervalMs: 200, context: logs });
      // A second host on the Ingress: loopguard writes its rule, which the old configuration CoreDNS keeps does not have.
      await net.patchNamespacedIngress(
        { namespace: ns, name: 'web', body: [{ op: 'add', path: '/spec/rules/-', value: { host: API_HOST, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } } }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      await waitFor('the rule of the new host in the ConfigMap', async () => ((await rulesText()).includes(`exact ${API_HOST}.`) ? true : undefined), { timeoutMs: 60_000, intervalMs: 250, context: logs });
      const notInEffect = await waitForDns('RulesNotInEffect', (c) => c?.status === 'False' && c.reason === 'RulesNotInEffect', 90_000);
      expect(notInEffect.message).toContain(`${API_HOST} (127.0.0.1:${port.main} answered ${vip}, not ${clusterIp})`);
      expect(notInEffect.message).toContain('The Corefile (kube-system/coredns) has a block that is not closed (its braces do not balance)');
      expect(notInEffect.message).toContain('loopguard never edits it');
      expect(await through(API_HOST)).toEqual([vip]);
      // Nothing papered over: the Corefile is still the broken one, and the old rules still serve.
      expect((await core.readNamespacedConfigMap({ namespace: KUBE_SYSTEM, name: COREFILE_CM })).data?.['Corefile']).toBe(broken);
      expect(await through(SHOP)).toEqual([clusterIp]);
    } finally {
      // Fixed by whoever broke it (never by loopguard); also when an assertion above failed, for the next tests.
      await setCorefile(corefile());
    }
    await resolvesTo(API_HOST, clusterIp);
    const fixed = await waitForDns('back to RulesInEffect', (c) => c?.status === 'True' && c.reason === 'RulesInEffect');
    expect(fixed.message).toContain(`${API_HOST} → web.${ns}.svc.cluster.local`);
  }, 180_000);

  it("Managed turned off: the rules leave the file (header only), the hosts resolve to the CLB's VIP again, the condition goes", async () => {
    expect(await applyPolicy('Unmanaged')).toMatchObject({ code: 0 });
    const text = await waitFor('the rules file without rules', rulesText, { until: (t) => t.includes('# 0 rules.'), timeoutMs: 60_000, intervalMs: 250, context: logs });
    expect(text.split('\n').filter((l) => !l.startsWith('#'))).toEqual(['']);
    await resolvesTo(SHOP, vip);
    await resolvesTo(API_HOST, vip);
    await waitForDns('removed', (c) => c === undefined);
  }, 120_000);

  it("policy deleted while Managed: its rules are reverted and the host resolves to the CLB's VIP", async () => {
    expect(await applyPolicy('Managed')).toMatchObject({ code: 0 });
    await waitForDns('RulesInEffect again', (c) => c?.reason === 'RulesInEffect', 90_000);
    expect(await through(SHOP)).toEqual([clusterIp]);
    expect((await kubectl(['delete', 'clbp', policy, '--wait=true', '--timeout=90s'])).code).toBe(0);
    await waitFor('the rules file without rules', rulesText, { until: (t) => t.includes('# 0 rules.') && !t.includes('rewrite '), timeoutMs: 60_000, intervalMs: 250, context: logs });
    await resolvesTo(SHOP, vip);
  }, 180_000);
});
