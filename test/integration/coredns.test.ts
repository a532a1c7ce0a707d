// What real CoreDNS (built from its Go module: test/support/coredns.ts) does with the rewrite rules
// `l7.inClusterDNS: Managed` would maintain (issue 42 #2), serving from the test apiserver: the facts docs/dns.md
// rests on, measured. One CoreDNS, its Corefile shaped as TKE ships it (kubernetes, forward, cache, reload,
// prometheus: docs/dns.md §2) plus the one line the design needs, `import loopguard/*.rules`, and:
//   - a stand-in for the VPC's DNS (a `hosts` block on its own port, what `forward` reaches): it answers the
//     Ingress's host name with the CLB's VIP, as the real upstream would;
//   - two other layouts on their own ports, for where the rules could live: a zone block (`example.com:PORT`) holding
//     only the rules, and one that also repeats the kubernetes plugin and the forward.
// Measured, each an assertion:
//   a. the kubernetes plugin answers <svc>.<ns>.svc.cluster.local with the Service's ClusterIP;
//   b. an exact rewrite rule (rendered by src/model/dns-rewrite.ts) makes shop.example.com resolve to that ClusterIP,
//      the answer carrying the name asked; names without a rule still go upstream; without the rule, the VIP again;
//   c. the rules work imported anywhere in the cluster-domain block; a zone block of rules alone answers SERVFAIL for
//      every name of the zone (rewritten or not); one that repeats kubernetes and forward works;
//   d. the reload plugin picks up a change of the imported file alone (it hashes the Corefile with its imports
//      expanded), within its interval plus jitter; a glob that matches no file only warns (and a file of comments
//      hashes the same); a Corefile that loses the import line silently drops the rules;
//   e. a broken Corefile keeps the old configuration serving: a syntax error logs a warning every interval and counts
//      nowhere (coredns_reload_failed_total stays 0), a bad directive logs an error and counts; either way a change
//      of the rules made meanwhile does not take effect, and does once the Corefile is fixed.
// Reloads are awaited through the answers (and CoreDNS's own log lines), never a sleep.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { Resolver } from 'node:dns/promises';
import { dnsRewriteRules, renderDnsRewrites, type DnsRewriteRequest } from '../../src/model/dns-rewrite.js';
import { coreDnsTools, freeDnsPort, startCoreDns, type CoreDnsProcess } from '../support/coredns.js';
import { addressesOf, queryA, Rcode, type DnsAnswer } from '../support/dns-query.js';
import { createNamespace, deleteNamespace, kubeConfig, kubeconfigPath, waitFor } from '../support/kube.js';

const SUITE = 'test/integration/coredns.test.ts';
const tools = coreDnsTools(SUITE);

const POLICY = 'tke-defaults';
const SHOP = 'shop.example.com';
const OTHER = 'other.example.com';
/** What the stand-in upstream answers: the CLBs' VIPs. */
const SHOP_VIP = '10.200.0.7';
const OTHER_VIP = '10.200.0.8';
/** reload's shortest interval and jitter (its README): a change is seen within INTERVAL + JITTER. */
const RELOAD = { intervalS: 2, jitterS: 1 };
/** A reload must show within this: interval + jitter, plus the restart (the kubernetes plugin lists again), loaded. */
const RELOAD_BOUND_MS = 10_000;

describe(`CoreDNS ${tools.version}: rewrite rules for in-cluster callers of a CLB host name`, () => {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  let ns = '';
  let webIp = '';
  let apiIp = '';
  let dns: CoreDnsProcess | undefined;
  const port = { upstream: 0, main: 0, zoneOnly: 0, zoneFull: 0, metrics: 0 };
  const figures: string[] = [];

  const logs = () => `--- coredns logs ---\n${dns?.logs().slice(-4000) ?? ''}`;
  const kubernetesPlugin = () => `kubernetes cluster.local in-addr.arpa ip6.arpa {
      kubeconfig "${kubeconfigPath()}"
      fallthrough in-addr.arpa ip6.arpa
    }`;
  /**
   * The Corefile: TKE's shape in the main block (docs/dns.md §2), the import at its end (after forward: a block's
   * plugin order is CoreDNS's, not the lines'). `mainExtra` is a line someone else adds to the main block.
   */
  const corefile = ({ importRules = true, mainExtra = '' }: { importRules?: boolean; mainExtra?: string } = {}) => `# the VPC's DNS, as forward reaches it: the CLBs' VIPs
.:${port.upstream} {
  bind 127.0.0.1
  hosts {
    ${SHOP_VIP} ${SHOP}
    ${OTHER_VIP} ${OTHER}
  }
}
# the cluster's CoreDNS
.:${port.main} {
  bind 127.0.0.1
  errors
  ${kubernetesPlugin()}
  prometheus 127.0.0.1:${port.metrics}
  forward . 127.0.0.1:${port.upstream}
  cache 30
  reload ${RELOAD.intervalS}s ${RELOAD.jitterS}s
  ${mainExtra}
  ${importRules ? 'import loopguard/*.rules' : ''}
}
# layout: a zone block of the rules alone
.:${port.zoneOnly} {
  bind 127.0.0.1
  ${kubernetesPlugin()}
  forward . 127.0.0.1:${port.upstream}
}
example.com:${port.zoneOnly} {
  bind 127.0.0.1
  import loopguard/*.rules
}
# layout: a zone block that repeats kubernetes and forward
.:${port.zoneFull} {
  bind 127.0.0.1
  forward . 127.0.0.1:${port.upstream}
}
example.com:${port.zoneFull} {
  bind 127.0.0.1
  import loopguard/*.rules
  ${kubernetesPlugin()}
  forward . 127.0.0.1:${port.upstream}
}
`;
  const ingress = (host: string, service: string): DnsRewriteRequest => ({ target: `Ingress ${ns}/${service}`, host, namespace: ns, service });
  const rules = (...requests: DnsRewriteRequest[]) => {
    const out = dnsRewriteRules('cluster.local', requests);
    expect(out.refused).toEqual([]);
    return renderDnsRewrites([POLICY], out.rules);
  };
  const writeRules = (...requests: DnsRewriteRequest[]) => dns!.write('loopguard/loopguard.rules', rules(...requests));
  const resolver = (p: number) => {
    const r = new Resolver({ timeout: 2000, tries: 1 });
    r.setServers([`127.0.0.1:${p}`]);
    return r;
  };
  const addresses = async (p: number, name: string) => addressesOf(await queryA(p, name), name);
  /** Waits for `name` to resolve to `want` through the main block; returns how long that took. */
  const switched = async (what: string, name: string, want: string): Promise<number> => {
    const started = Date.now();
    await waitFor(`${what}: ${name} → ${want}`, () => addresses(port.main, name), {
      until: (a) => a.length === 1 && a[0] === want,
      timeoutMs: RELOAD_BOUND_MS,
      intervalMs: 50,
      context: logs,
    });
    const ms = Date.now() - started;
    figures.push(`${what}: ${ms} ms`);
    return ms;
  };
  /** The kubernetes plugin's TTL (5 s by default; TKE's Corefile sets none), as `cache` counts it down since the miss. */
  const expectKubernetesTtl = (answer: DnsAnswer) => {
    for (const r of answer.answers) {
      expect(r.ttl).toBeGreaterThanOrEqual(1);
      expect(r.ttl).toBeLessThanOrEqual(5);
    }
  };
  const withoutTtl = (answer: DnsAnswer) => ({ ...answer, answers: answer.answers.map((r) => ({ ...r, ttl: 0 })) });
  const lines = (re: RegExp) => dns!.logs().match(new RegExp(re.source, 'g'))?.length ?? 0;
  // Exactly `n` configurations so far. CoreDNS can answer from a new one before its log line has reached this
  // process (seen once: the answer switched, the count still 1), so wait for the line, then hold the count exact.
  const configured = async (n: number): Promise<void> => {
    await waitFor(`${n} configuration(s) in CoreDNS's log`, () => dns!.configurations(), { until: (c) => c >= n, timeoutMs: RELOAD_BOUND_MS, context: logs });
    expect(dns!.configurations()).toBe(n);
  };
  const reloadFailedTotal = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${port.metrics}/metrics`)).text();
    const m = /^coredns_reload_failed_total (\d+)$/m.exec(text);
    if (!m) throw new Error(`no coredns_reload_failed_total in the metrics:\n${text.slice(0, 2000)}`);
    return Number(m[1]);
  };

  beforeAll(async () => {
    ns = await createNamespace('dns');
    for (const name of ['web', 'api']) {
      await core.createNamespacedService({ namespace: ns, body: { metadata: { name }, spec: { ports: [{ port: 443 }], selector: { app: name } } } });
    }
    webIp = (await core.readNamespacedService({ namespace: ns, name: 'web' })).spec?.clusterIP ?? '';
    apiIp = (await core.readNamespacedService({ namespace: ns, name: 'api' })).spec?.clusterIP ?? '';
    for (const k of Object.keys(port) as (keyof typeof port)[]) port[k] = await freeDnsPort();
    // Before Enforce: the rules file as a revert leaves it (the header alone), so the import always matches a file.
    dns = await startCoreDns({ binary: tools.binary, files: { Corefile: corefile(), 'loopguard/loopguard.rules': rules() } });
  });

  afterAll(async () => {
    await dns?.stop();
    if (ns) await deleteNamespace(ns);
    if (figures.length) console.info(`[coredns] reload ${RELOAD.intervalS}s ${RELOAD.jitterS}s; time to the new answer:\n  ${figures.join('\n  ')}`);
  });

  it('a. the kubernetes plugin answers <svc>.<ns>.svc.cluster.local with the ClusterIP, through the test apiserver', async () => {
    expect(webIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const name = `web.${ns}.svc.cluster.local`;
    // The plugin may still be listing when the banner shows (it waits a bounded time for its first sync).
    await waitFor(`${name} to resolve`, () => addresses(port.main, name), { until: (a) => a.length === 1, context: logs });
    expect(await resolver(port.main).resolve4(name)).toEqual([webIp]);
    const answer = await queryA(port.main, name);
    expect(answer).toEqual({ rcode: Rcode.NOERROR, question: name, answers: [{ name, type: 1, ttl: expect.any(Number), data: webIp }] });
    expectKubernetesTtl(answer);
    // The same over TCP (the block listens on both; NodeLocal DNSCache forwards to CoreDNS over TCP).
    expect(withoutTtl(await queryA(port.main, name, { tcp: true }))).toEqual(withoutTtl(answer));
    await configured(1);
  });

  it('before any rule, the host name goes upstream and resolves to the VIP', async () => {
    expect(await resolver(port.main).resolve4(SHOP)).toEqual([SHOP_VIP]);
    expect(await addresses(port.main, OTHER)).toEqual([OTHER_VIP]);
  });

  it('b+d. a rule in the imported file alone: reloaded within interval + jitter, the host resolves to the ClusterIP under its own name', async () => {
    writeRules(ingress(SHOP, 'web'));
    expect(await switched('imported file changed (rule added)', SHOP, webIp)).toBeLessThan(RELOAD_BOUND_MS);
    await configured(2);
    // What a client sees: Node's resolver (c-ares drops records not owned by the name asked) gets the ClusterIP ...
    expect(await resolver(port.main).resolve4(SHOP)).toEqual([webIp]);
    // ... because the response's question and every answer record carry the asked name, not the Service's.
    const answer = await queryA(port.main, SHOP);
    expect(answer.rcode).toBe(Rcode.NOERROR);
    expect(answer.question).toBe(SHOP);
    expect(answer.answers).toEqual([{ name: SHOP, type: 1, ttl: expect.any(Number), data: webIp }]);
    expectKubernetesTtl(answer);
    expect(withoutTtl(await queryA(port.main, SHOP, { tcp: true }))).toEqual(withoutTtl(answer));
    // A name without a rule still goes upstream.
    expect(await addresses(port.main, OTHER)).toEqual([OTHER_VIP]);
  });

  it('c. where the rules can live: a zone block of rules alone fails the whole zone; one repeating kubernetes and forward works', async () => {
    // The rewritten name never reaches another block's kubernetes plugin: a block is chosen before its plugins run,
    // so the rule has nothing after it (SERVFAIL), and every other name of the zone is captured too.
    expect((await queryA(port.zoneOnly, SHOP)).rcode).toBe(Rcode.SERVFAIL);
    expect((await queryA(port.zoneOnly, OTHER)).rcode).toBe(Rcode.SERVFAIL);
    // A zone block works only by repeating what the main block does for the zone: its own kubernetes plugin (another
    // watch of the apiserver) and the upstream, which loopguard would have to copy from the user's Corefile.
    expect(await addresses(port.zoneFull, SHOP)).toEqual([webIp]);
    expect(await addresses(port.zoneFull, OTHER)).toEqual([OTHER_VIP]);
    // The main block's rules came from an import placed after forward: the line's place in the block is not the order.
    expect(await addresses(port.main, SHOP)).toEqual([webIp]);
  });

  it('b. revert: the header-only file gives the VIP back', async () => {
    writeRules();
    await switched('imported file changed (rule removed)', SHOP, SHOP_VIP);
    await configured(3);
    expect(await resolver(port.main).resolve4(SHOP)).toEqual([SHOP_VIP]);
  });

  it('b. an import glob that matches no file: a warning at each check, the Corefile still serves, nothing reloads', async () => {
    const noFiles = /\[WARNING\] No files matching import glob pattern: loopguard\/\*\.rules/;
    // Each check parses the whole Corefile: one warning per import line.
    const perCheck = corefile().split('import loopguard/*.rules').length - 1;
    dns!.remove('loopguard/loopguard.rules');
    // A second check's warnings: the first check has compared its hash (and any reload it caused has logged).
    await waitFor('the glob warnings of two checks', () => lines(noFiles), { until: (n) => n > perCheck, timeoutMs: RELOAD_BOUND_MS, context: logs });
    // No file and a file of comments parse to the same blocks, so the hash, and the configuration, stay.
    expect(dns!.configurations()).toBe(3);
    expect(await addresses(port.main, SHOP)).toEqual([SHOP_VIP]);
    expect(lines(/\[ERROR\]/)).toBe(0);
  });

  it('d. a Corefile that loses the import line drops the rules silently; only resolving shows it', async () => {
    writeRules(ingress(SHOP, 'web'));
    await switched('imported file changed (rule added again)', SHOP, webIp);
    // As an add-on upgrade or someone restoring the default Corefile would: the rules file is still there.
    dns!.write('Corefile', corefile({ importRules: false }));
    await switched('Corefile changed (import line removed)', SHOP, SHOP_VIP);
    await configured(5);
    expect(lines(/\[ERROR\]|\[WARNING\] plugin\/reload/)).toBe(0);
    dns!.write('Corefile', corefile());
    await switched('Corefile changed (import line back)', SHOP, webIp);
    await configured(6);
    expect(await reloadFailedTotal()).toBe(0);
  });

  it('e. a Corefile syntax error: the old configuration serves, a warning each interval, no count; a rules change waits', async () => {
    const parseFailed = /\[WARNING\] plugin\/reload: Corefile parse failed: [^\n]*Syntax error/;
    // Someone else's edit: an unclosed block.
    dns!.write('Corefile', `${corefile()}\n.:${port.main} {\n  bind 127.0.0.1\n`);
    await waitFor('the reload plugin to report the parse failure', () => lines(parseFailed), { until: (n) => n >= 1, timeoutMs: RELOAD_BOUND_MS, context: logs });
    expect(await addresses(port.main, SHOP)).toEqual([webIp]);
    expect(await reloadFailedTotal()).toBe(0);
    // loopguard changes its rules meanwhile; a check after the next interval's attempt finds it not in effect.
    writeRules(ingress(SHOP, 'web'), ingress(OTHER, 'api'));
    const seen = lines(parseFailed);
    await waitFor('another interval to pass', () => lines(parseFailed), { until: (n) => n > seen, timeoutMs: RELOAD_BOUND_MS, context: logs });
    expect(await addresses(port.main, OTHER)).toEqual([OTHER_VIP]);
    expect(dns!.configurations()).toBe(6);
    expect(await reloadFailedTotal()).toBe(0);
  });

  it('e. a bad directive: the old configuration serves, an error and coredns_reload_failed_total per attempt; fixed, the waiting rules apply', async () => {
    const reloadFailed = /\[ERROR\] plugin\/reload: Corefile changed but reload failed: [^\n]*Unknown directive 'forwrad'/;
    dns!.write('Corefile', corefile({ mainExtra: `forwrad . 127.0.0.1:${port.upstream}` }));
    await waitFor('the reload plugin to report the failed reload', () => lines(reloadFailed), { until: (n) => n === 1, timeoutMs: RELOAD_BOUND_MS, context: logs });
    expect(await reloadFailedTotal()).toBe(1);
    expect(await addresses(port.main, SHOP)).toEqual([webIp]);
    expect(await addresses(port.main, OTHER)).toEqual([OTHER_VIP]);
    // It tries a file once: only a new change (here loopguard's rules) makes it try, and fail, again.
    writeRules(ingress(OTHER, 'api'));
    await waitFor('the reload plugin to try the new rules', () => lines(reloadFailed), { until: (n) => n === 2, timeoutMs: RELOAD_BOUND_MS, context: logs });
    expect(await reloadFailedTotal()).toBe(2);
    expect(await addresses(port.main, SHOP)).toEqual([webIp]);
    expect(await addresses(port.main, OTHER)).toEqual([OTHER_VIP]);
    expect(dns!.configurations()).toBe(6);
    // Fixed: the rules written meanwhile take effect with it.
    dns!.write('Corefile', corefile());
    await switched('Corefile fixed (waiting rules applied)', OTHER, apiIp);
    expect(await addresses(port.main, SHOP)).toEqual([SHOP_VIP]);
    await configured(7);
    // A counter: it does not go back down when a reload succeeds.
    expect(await reloadFailedTotal()).toBe(2);
  });
});
