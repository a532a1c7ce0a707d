// The rules file of `l7.inClusterDNS: Managed` (docs/dns.md §4): deterministic bytes, and untrusted host names that
// could write CoreDNS configuration or take over a name someone else owns are refused, one at a time. The rule
// syntax is the one test/integration/coredns.test.ts runs through real CoreDNS.
import { describe, expect, it } from '@jest/globals';
import { dnsRewriteRules, parseDnsRewrites, renderDnsRewrites, type DnsRewriteRequest } from '../../../src/model/dns-rewrite.js';

/** The longest legal host: 253 characters, labels of at most 63. */
const LONGEST = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(57), 'com'].join('.');
/** The rules and the file for `requests`, each rule with the targets that asked for it. */
function render(policies: string[], clusterDomain: string, requests: DnsRewriteRequest[]) {
  const { rules, refused } = dnsRewriteRules(clusterDomain, requests);
  return { text: renderDnsRewrites(policies, rules), rules: rules.map(({ requests: rs, ...r }) => ({ ...r, targets: rs.map((q) => q.target) })), refused };
}
const req = (host: string, namespace = 'shop', service = 'web', target = `Ingress ${namespace}/${service}`): DnsRewriteRequest => ({ target, host, namespace, service });

describe('dnsRewriteRules and renderDnsRewrites', () => {
  it('writes one exact rule a host, sorted, under a header naming loopguard and the policy', () => {
    const out = render(['tke-defaults'], 'cluster.local', [req('www.example.com', 'blog', 'site'), req('shop.example.com'), req('api.example.com', 'shop', 'api')]);
    expect(out.text).toBe(
      [
        '# Managed by loopguard for ClusterLoopbackPolicy tke-defaults (l7.inClusterDNS: Managed); loopguard rewrites this file whole.',
        '# Each rule sends a host name of an Ingress or Gateway it manages to the Service serving it in-cluster (docs/dns.md).',
        '# 3 rules.',
        'rewrite stop name exact api.example.com. api.shop.svc.cluster.local. answer auto',
        'rewrite stop name exact shop.example.com. web.shop.svc.cluster.local. answer auto',
        'rewrite stop name exact www.example.com. site.blog.svc.cluster.local. answer auto',
        '',
      ].join('\n'),
    );
    expect(out.refused).toEqual([]);
  });

  it('gives the same bytes whatever the order of the requests', () => {
    const rs = [req('b.example.com'), req('a.example.com', 'x', 'y'), req('c.example.org', 'z', 'w')];
    const texts = [rs, [...rs].reverse(), [rs[1]!, rs[2]!, rs[0]!]].map((r) => render(['p'], 'cluster.local', r).text);
    expect(new Set(texts).size).toBe(1);
  });

  it('with nothing to rewrite, the header alone (the file a revert leaves)', () => {
    const out = render(['p'], 'cluster.local', []);
    expect(out.text.trimEnd().split('\n')).toHaveLength(3);
    expect(out.text).toContain('# 0 rules.');
    expect(out.text).not.toContain('rewrite ');
  });

  it('uses the cluster domain given, with or without its root dot', () => {
    for (const domain of ['corp.internal', 'corp.internal.']) {
      expect(render(['p'], domain, [req('shop.example.com')]).text).toContain(' web.shop.svc.corp.internal. answer auto\n');
    }
  });

  it('accepts a trailing dot on the host and writes it once', () => {
    expect(render(['p'], 'cluster.local', [req('shop.example.com.')]).rules).toEqual([{ host: 'shop.example.com', serviceName: 'web.shop.svc.cluster.local', targets: ['Ingress shop/web'] }]);
  });

  it('merges the same mapping asked by two targets (two Ingresses, one host, one Service) into one rule', () => {
    const out = render(['p'], 'cluster.local', [req('shop.example.com', 'shop', 'web', 'Ingress shop/b'), req('shop.example.com', 'shop', 'web', 'Ingress shop/a')]);
    expect(out.rules).toEqual([{ host: 'shop.example.com', serviceName: 'web.shop.svc.cluster.local', targets: ['Ingress shop/a', 'Ingress shop/b'] }]);
    expect(out.text.match(/^rewrite /gm)).toHaveLength(1);
  });

  it('refuses a host two targets claim for different Services, for both, and keeps the other rules', () => {
    const out = render(['p'], 'cluster.local', [req('shop.example.com', 'shop', 'web'), req('shop.example.com', 'mallory', 'grab'), req('blog.example.com', 'blog', 'site')]);
    expect(out.rules.map((r) => r.host)).toEqual(['blog.example.com']);
    expect(out.refused.map((r) => r.target)).toEqual(['Ingress mallory/grab', 'Ingress shop/web']);
    for (const r of out.refused) {
      expect(r.reason).toBe('another target claims the host for a different Service');
      expect(r.claims).toBe('Ingress mallory/grab → grab.mallory.svc.cluster.local; Ingress shop/web → web.shop.svc.cluster.local');
    }
    expect(out.text).not.toContain('shop.example.com');
  });

  // Inputs a namespace user writes: each refused alone, the good one beside it kept, nothing of it in the file.
  const refusals: { name: string; request: DnsRewriteRequest; reason: RegExp }[] = [
    { name: 'newline (a second directive)', request: req('shop.example.com\nforward . 6.6.6.6'), reason: /label that is not/ },
    { name: 'closing brace (end the server block)', request: req('x.example.com}'), reason: /label that is not/ },
    { name: 'opening brace', request: req('x{.example.com'), reason: /label that is not/ },
    { name: 'space (a second argument)', request: req('shop.example.com web.other.svc.cluster.local.'), reason: /label that is not/ },
    { name: 'tab', request: req('shop.example.com\tx'), reason: /label that is not/ },
    { name: 'quote', request: req('"shop.example.com"'), reason: /label that is not/ },
    { name: 'comment sign', request: req('shop.example.com#'), reason: /label that is not/ },
    { name: 'environment placeholder', request: req('{$HOME}.example.com'), reason: /label that is not/ },
    { name: 'import directive smuggled', request: req('import /etc/passwd'), reason: /label that is not/ },
    { name: 'upper case (the apiserver refuses it in an Ingress; here too)', request: req('Shop.example.com'), reason: /label that is not/ },
    { name: 'wildcard', request: req('*.example.com'), reason: /wildcard/ },
    { name: 'wildcard inside', request: req('a.*.example.com'), reason: /wildcard/ },
    { name: 'empty', request: req(''), reason: /empty/ },
    { name: 'empty label', request: req('shop..example.com'), reason: /empty label/ },
    { name: 'leading dot', request: req('.example.com'), reason: /empty label/ },
    { name: 'leading hyphen', request: req('-shop.example.com'), reason: /label that is not/ },
    { name: 'trailing hyphen', request: req('shop-.example.com'), reason: /label that is not/ },
    { name: 'underscore', request: req('_srv.example.com'), reason: /label that is not/ },
    { name: 'non-ASCII', request: req('shöp.example.com'), reason: /label that is not/ },
    { name: 'label of 64', request: req(`${'a'.repeat(64)}.example.com`), reason: /label that is not/ },
    { name: 'name of 254', request: req(`x${LONGEST}`), reason: /longer than 253/ },
    { name: 'single label', request: req('shop'), reason: /single label/ },
    { name: 'IPv4 address', request: req('10.0.0.1'), reason: /IP address/ },
    { name: "another namespace's Service name", request: req('web.other.svc.cluster.local'), reason: /cluster\.local zone/ },
    { name: 'the cluster domain itself', request: req('cluster.local'), reason: /cluster\.local zone/ },
    { name: 'the kubernetes Service', request: req('kubernetes.default.svc.cluster.local.'), reason: /cluster\.local zone/ },
    { name: 'a reverse name', request: req('1.0.0.10.in-addr.arpa'), reason: /in-addr\.arpa zone/ },
    { name: 'bad Service name', request: req('shop.example.com', 'shop', 'web }'), reason: /not a namespace and name/ },
    { name: 'bad namespace', request: req('shop.example.com', 'shop\n', 'web'), reason: /not a namespace and name/ },
    { name: 'empty Service name', request: req('shop.example.com', 'shop', ''), reason: /not a namespace and name/ },
  ];
  it.each(refusals)('refuses $name', ({ request, reason }) => {
    const out = render(['p'], 'cluster.local', [request, req('ok.example.com', 'ok', 'svc')]);
    expect(out.refused).toHaveLength(1);
    expect(out.refused[0]!.target).toBe(request.target);
    expect(out.refused[0]!.reason).toMatch(reason);
    expect(out.rules.map((r) => r.host)).toEqual(['ok.example.com']);
    // Every line is a comment or a rule of exactly the rule's shape: nothing of the refused input reached the file.
    for (const line of out.text.trimEnd().split('\n')) {
      expect(line).toMatch(/^(# [^{}\n]*|rewrite stop name exact [a-z0-9.-]+\. [a-z0-9.-]+\. answer auto)$/);
    }
  });

  it('accepts the longest legal host (253 characters, labels of 63)', () => {
    expect(LONGEST).toHaveLength(253);
    expect(render(['p'], 'cluster.local', [req(LONGEST)]).rules).toHaveLength(1);
  });

  it('takes any Kubernetes object name as a policy name: a label over 63 characters is one (a DNS-1123 subdomain)', () => {
    const long = `team-${'a'.repeat(70)}.v2`;
    const file = render([long], 'cluster.local', [{ target: 'Ingress shop/web', host: 'shop.example.com', namespace: 'shop', service: 'web' }]);
    expect(file.text).toContain(`for ClusterLoopbackPolicy ${long} (l7.inClusterDNS: Managed)`);
    expect(file.rules).toHaveLength(1);
  });

  it('throws on a bad policy name or cluster domain (its own configuration, not a namespace user\'s)', () => {
    expect(() => render(['bad\nname'], 'cluster.local', [])).toThrow(/policy name/);
    expect(() => render(['Upper'], 'cluster.local', [])).toThrow(/policy name/);
    expect(() => render(['x'.repeat(254)], 'cluster.local', [])).toThrow(/policy name/);
    expect(() => render(['p'], 'cluster local', [])).toThrow(/cluster domain/);
    expect(() => render(['p'], '', [])).toThrow(/cluster domain is empty/);
  });

  it('names every policy that asks, sorted and once, and says so when none does', () => {
    const first = (policies: string[]) => render(policies, 'cluster.local', []).text.split('\n')[0];
    expect(first(['zeta', 'alpha', 'zeta'])).toBe('# Managed by loopguard for ClusterLoopbackPolicy alpha, zeta (l7.inClusterDNS: Managed); loopguard rewrites this file whole.');
    expect(first([])).toBe('# Managed by loopguard (no ClusterLoopbackPolicy asks for l7.inClusterDNS: Managed now); loopguard rewrites this file whole.');
  });
});

describe('parseDnsRewrites', () => {
  it('reads back the rules of a rendered file (what the ConfigMap holds after a restart), and nothing else', () => {
    const out = render(['p'], 'cluster.local', [req('shop.example.com'), req('api.example.com', 'shop', 'api')]);
    expect(parseDnsRewrites(out.text)).toEqual(out.rules.map((r) => ({ host: r.host, serviceName: r.serviceName })));
    expect(parseDnsRewrites('# rewrite stop name exact a.example.com. b.c.svc.cluster.local. answer auto\nrewrite name a.example.com b\n')).toEqual([]);
    expect(parseDnsRewrites('')).toEqual([]);
  });
});

describe('renderDnsRewrites writes rule lines only', () => {
  it.each([
    ['a host with a newline and a block', { host: 'a.example.com.\n}\nfoo {', serviceName: 'web.shop.svc.cluster.local' }],
    ['a host with upper case', { host: 'A.example.com', serviceName: 'web.shop.svc.cluster.local' }],
    ['a Service name with a space', { host: 'a.example.com', serviceName: 'web shop' }],
  ])('refuses %s that did not come from dnsRewriteRules', (_what, rule) => {
    expect(() => renderDnsRewrites(['p'], [rule])).toThrow(/renderDnsRewrites: refusing to write/);
  });

  it('writes the rules dnsRewriteRules made', () => {
    const { rules } = dnsRewriteRules('cluster.local', [{ target: 'Ingress/shop/web', host: 'a.example.com', namespace: 'shop', service: 'web' }]);
    expect(renderDnsRewrites(['p'], rules)).toContain('rewrite stop name exact a.example.com. web.shop.svc.cluster.local. answer auto\n');
  });
});
