// Pure: the CoreDNS rewrite rules of `l7.inClusterDNS: Managed` (docs/dns.md §4), the file loopguard owns and CoreDNS
// imports into the block that serves the names, one rule a host:
//   rewrite stop name exact shop.example.com. web.shop.svc.cluster.local. answer auto
// (an exact rule rewrites the answer back to the asked name, which stub resolvers check: test/integration/coredns.test.ts).
// Hosts are untrusted and land in a Corefile, where a newline, brace, space or quote would be configuration: only a
// lower-case RFC 1123 name passes, and one that could take over a name someone else owns is refused, alone. Sorted,
// no timestamps: the same inputs give the same bytes (CoreDNS reloads on any change).

export interface DnsRewriteRequest {
  /** What asked, for messages: "Ingress shop/web". */
  target: string;
  /** The host name callers use (spec.rules[].host, a Gateway listener's hostname). Untrusted. */
  host: string;
  /** The Service that serves the host in-cluster, chosen by the caller (docs/dns.md §4 says which). */
  namespace: string;
  service: string;
}

/** A host (no trailing dot) sent to `serviceName` (<service>.<namespace>.svc.<cluster domain>), with every request for it, by target. */
export interface DnsRewriteRule<R extends DnsRewriteRequest = DnsRewriteRequest> {
  host: string;
  serviceName: string;
  requests: R[];
}

/** `reason` is about the target alone (what its own Event may say); `claims`, who claims the host for what, is for the cluster policy's condition only. */
export type DnsRewriteRefusal<R extends DnsRewriteRequest = DnsRewriteRequest> = R & { reason: string; claims?: string };

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_NAME = 253;
const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Why `name` is not a lower-case RFC 1123 DNS name (labels of [a-z0-9-], 1–63 long, 253 in all); undefined if it is. */
function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_NAME) return `is longer than ${MAX_NAME} characters`;
  const bad = name.split('.').find((label) => !LABEL.test(label));
  if (bad === undefined) return undefined;
  if (bad === '*') return 'is a wildcard (an exact rewrite cannot express it, and a wider one would capture names served elsewhere)';
  if (bad === '') return 'has an empty label';
  return `has a label that is not lower-case letters, digits and inner hyphens: ${JSON.stringify(bad.slice(0, 70))}`;
}

/**
 * A Kubernetes object name (apimachinery's IsDNS1123Subdomain), as a policy may be called: unlike a host name it has no
 * 63-character label limit (checked as a host, a 70-character policy name threw and stopped every policy's rules).
 */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function hostProblem(host: string, clusterDomain: string): string | undefined {
  const problem = nameProblem(host);
  if (problem) return `host ${problem}`;
  if (!host.includes('.')) return 'host is a single label (a search-path name, not a name a CLB is reached by)';
  if (/^[0-9]+$/.test(host.slice(host.lastIndexOf('.') + 1))) return 'host is an IP address, not a name';
  const zone = [clusterDomain, 'in-addr.arpa', 'ip6.arpa'].find((z) => host === z || host.endsWith(`.${z}`));
  return zone ? `host is in the ${zone} zone (it would redirect a name the cluster's DNS owns)` : undefined;
}

/**
 * The rules `requests` make, and the requests refused, each alone with its reason. Throws on a bad `clusterDomain`
 * (loopguard's own configuration: no rules are better than wrong ones).
 */
export function dnsRewriteRules<R extends DnsRewriteRequest>(clusterDomain: string, requests: readonly R[]): { rules: DnsRewriteRule<R>[]; refused: DnsRewriteRefusal<R>[] } {
  const domain = clusterDomain.replace(/\.$/, '');
  const domainProblem = nameProblem(domain);
  if (domainProblem) throw new Error(`dnsRewriteRules: the cluster domain ${domainProblem}`);
  const refused: DnsRewriteRefusal<R>[] = [];
  const wanted = new Map<string, { serviceName: string; request: R }[]>(); // by host
  for (const r of requests) {
    const host = r.host.replace(/\.$/, '');
    const badRef = [r.namespace, r.service].some((label) => !LABEL.test(label));
    const reason = hostProblem(host, domain) ?? (badRef ? `Service ${JSON.stringify(`${r.namespace}/${r.service}`.slice(0, 140))} is not a namespace and name` : undefined);
    if (reason) {
      refused.push({ ...r, reason });
      continue;
    }
    wanted.set(host, [...(wanted.get(host) ?? []), { serviceName: `${r.service}.${r.namespace}.svc.${domain}`, request: r }]);
  }
  const rules: DnsRewriteRule<R>[] = [];
  for (const [host, asks] of wanted) {
    const names = [...new Set(asks.map((a) => a.serviceName))];
    const asking = asks.map((a) => a.request).sort((a, b) => order(a.target, b.target));
    const claims = names.map((name) => `${asks.filter((a) => a.serviceName === name).map((a) => a.request.target).sort().join(', ')} → ${name}`).sort().join('; ');
    if (names.length === 1) rules.push({ host, serviceName: names[0]!, requests: asking });
    else for (const r of asking) refused.push({ ...r, host, reason: 'another target claims the host for a different Service', claims });
  }
  rules.sort((a, b) => order(a.host, b.host));
  refused.sort((a, b) => order(a.target, b.target) || order(a.host, b.host));
  return { rules, refused };
}

/**
 * The file's bytes: a header naming loopguard and the cluster policies that ask, then one rule a line. Throws on a
 * policy name that is not a Kubernetes name (the apiserver's: it would be text in the Corefile).
 */
export function renderDnsRewrites(policies: readonly string[], rules: readonly Pick<DnsRewriteRule, 'host' | 'serviceName'>[]): string {
  const bad = policies.find((p) => p.length > MAX_NAME || !SUBDOMAIN.test(p));
  if (bad !== undefined) throw new Error(`renderDnsRewrites: the policy name ${JSON.stringify(bad.slice(0, 70))} is not a Kubernetes object name (a DNS-1123 subdomain)`);
  const names = [...new Set(policies)].sort();
  const who = names.length === 0 ? '(no ClusterLoopbackPolicy asks for l7.inClusterDNS: Managed now)' : `for ClusterLoopbackPolicy ${names.join(', ')} (l7.inClusterDNS: Managed)`;
  const lines = [
    `# Managed by loopguard ${who}; loopguard rewrites this file whole.`,
    '# Each rule sends a host name of an Ingress or Gateway it manages to the Service serving it in-cluster (docs/dns.md).',
    `# ${rules.length} rule${rules.length === 1 ? '' : 's'}.`,
    ...rules.map((r) => `rewrite stop name exact ${r.host}. ${r.serviceName}. answer auto`),
  ];
  // Hosts come from tenants' objects and one newline or brace is CoreDNS configuration: only lines of the one shape
  // parseDnsRewrites reads are written, whoever built the rules (dnsRewriteRules validates them first).
  const unsafe = lines.slice(3).find((l) => !RULE_LINE.test(l));
  if (unsafe !== undefined) throw new Error(`renderDnsRewrites: refusing to write ${JSON.stringify(unsafe.slice(0, 200))}: not a rewrite rule of a valid host and Service`);
  return `${lines.join('\n')}\n`;
}

const RULE_LINE = /^rewrite stop name exact ([a-z0-9.-]+)\. ([a-z0-9.-]+)\. answer auto$/;

/** The rules of a file renderDnsRewrites wrote (what a ConfigMap holds after a restart); other lines are skipped. */
export function parseDnsRewrites(text: string): { host: string; serviceName: string }[] {
  return text.split('\n').flatMap((line) => {
    const m = RULE_LINE.exec(line.trim());
    return m ? [{ host: m[1]!, serviceName: m[2]! }] : [];
  });
}
