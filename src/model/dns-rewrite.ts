// Pure: the CoreDNS rewrite rules of `l7.inClusterDNS: Managed` (issue 42 #2; docs/dns.md §4), the one file
// loopguard owns and CoreDNS imports into its cluster-domain server block. Each rule sends the host name of an
// Ingress or Gateway loopguard manages to the Service that serves it in-cluster, so in-cluster callers no longer go
// through the CLB:
//   rewrite stop name exact shop.example.com. web.shop.svc.cluster.local. answer auto
// (an exact rule rewrites the answer back to the asked name, which stub resolvers check: measured in
// test/integration/coredns.test.ts; `answer auto` says so on the line).
//
// The hosts come from namespace users' Ingresses and Gateways, so they are untrusted, and whatever passes lands in a
// Corefile: one newline, brace, space or quote would let a namespace user write CoreDNS configuration. So a host is
// accepted only as a lower-case RFC 1123 host name (letters, digits, hyphens, dots: nothing Caddyfile syntax can hide
// in), and refused when it could take over a name someone else owns:
//  - a wildcard (`*.example.com`): an exact rule cannot express it, and a suffix or regex rule would capture every
//    name under the zone, including the ones served elsewhere (another CLB, a site outside the cluster);
//  - a name in the cluster domain (`web.other.svc.cluster.local`) or the reverse zones: that would redirect another
//    namespace's Service name to this one's;
//  - a single label (`shop`): a search-path name, never the name a CLB is reached by;
//  - a name two targets claim for different Services: loopguard cannot tell whose it is, so it writes neither.
// Refusals are returned with the reason, for the target's status; they never stop the other rules.
// The rules are sorted by host and carry no timestamps, so the same inputs give the same bytes (CoreDNS reloads
// on any change of the bytes it parses, and so does the ConfigMap's resourceVersion).

export interface DnsRewriteRequest {
  /** What asked, for messages: "Ingress shop/web". */
  target: string;
  /** The host name callers use (spec.rules[].host, a Gateway listener's hostname). Untrusted. */
  host: string;
  /** The Service that serves the host in-cluster, chosen by the caller (docs/dns.md §4 says which). */
  namespace: string;
  service: string;
}

export interface DnsRewriteRule {
  /** Lower-case, no trailing dot. */
  host: string;
  /** <service>.<namespace>.svc.<cluster domain>, no trailing dot. */
  serviceName: string;
  /** Every target that asked for this mapping, sorted. */
  targets: string[];
}

export interface DnsRewriteRefusal extends Pick<DnsRewriteRequest, 'target' | 'host'> {
  /** About the target alone: what its own Event may say. */
  reason: string;
  /** Who claims the host for what (other namespaces' objects): for the cluster policy's condition, never a target's Event. */
  claims?: string;
}

export interface DnsRewriteFile {
  /** The file's bytes: the header, then one rule a line. */
  text: string;
  rules: DnsRewriteRule[];
  refused: DnsRewriteRefusal[];
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_NAME = 253;
const REVERSE_ZONES = ['in-addr.arpa', 'ip6.arpa'];

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
 * A Kubernetes object name (apimachinery's IsDNS1123Subdomain): what the apiserver lets a policy be called, so every
 * policy name passes. Unlike a host name it has no 63-character label limit (a 70-character name without a dot is a
 * valid policy name): checked as a host, such a name threw and stopped every policy's rules. Header text only.
 */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const isSubdomain = (name: string) => name.length <= MAX_NAME && SUBDOMAIN.test(name);

/** `name` is `zone` or below it. */
function within(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

function hostProblem(host: string, clusterDomain: string): string | undefined {
  const problem = nameProblem(host);
  if (problem) return `host ${problem}`;
  if (!host.includes('.')) return 'host is a single label (a search-path name, not a name a CLB is reached by)';
  if (/^[0-9]+$/.test(host.slice(host.lastIndexOf('.') + 1))) return 'host is an IP address, not a name';
  for (const zone of [clusterDomain, ...REVERSE_ZONES]) {
    if (within(host, zone)) return `host is in the ${zone} zone (it would redirect a name the cluster's DNS owns)`;
  }
  return undefined;
}

/** The header: who owns the file, for which policies, and that edits are overwritten. */
function header(policies: readonly string[], count: number): string {
  const who = policies.length === 0 ? '(no ClusterLoopbackPolicy asks for l7.inClusterDNS: Managed now)' : `for ClusterLoopbackPolicy ${policies.join(', ')} (l7.inClusterDNS: Managed)`;
  return [
    `# Managed by loopguard ${who}; loopguard rewrites this file whole.`,
    '# Each rule sends a host name of an Ingress or Gateway it manages to the Service serving it in-cluster (docs/dns.md).',
    `# ${count} rule${count === 1 ? '' : 's'}.`,
  ].join('\n');
}

/**
 * The rules file for `requests`, asked for by the cluster policies named `policies`. Throws on a policy name that is
 * not a Kubernetes name or on a bad `clusterDomain` (loopguard's own configuration and the apiserver's names: nothing to render is better than a wrong
 * file); an untrusted request that fails is refused, with its reason, alone.
 */
export function renderDnsRewrites(policies: readonly string[], clusterDomain: string, requests: readonly DnsRewriteRequest[]): DnsRewriteFile {
  for (const policy of policies) {
    if (!isSubdomain(policy)) throw new Error(`renderDnsRewrites: the policy name ${JSON.stringify(policy.slice(0, 70))} is not a Kubernetes object name (a DNS-1123 subdomain)`);
  }
  const domain = clusterDomain.replace(/\.$/, '');
  const domainProblem = nameProblem(domain);
  if (domainProblem) throw new Error(`renderDnsRewrites: the cluster domain ${domainProblem}`);

  const refused: DnsRewriteRefusal[] = [];
  const wanted = new Map<string, Map<string, string[]>>(); // host → service name → targets
  for (const r of requests) {
    const host = r.host.replace(/\.$/, '');
    const badRef = [r.namespace, r.service].some((label) => !LABEL.test(label));
    const problem = hostProblem(host, domain) ?? (badRef ? `Service ${JSON.stringify(`${r.namespace}/${r.service}`.slice(0, 140))} is not a namespace and name` : undefined);
    if (problem) {
      refused.push({ target: r.target, host: r.host, reason: problem });
      continue;
    }
    const serviceName = `${r.service}.${r.namespace}.svc.${domain}`;
    const byService = wanted.get(host) ?? new Map<string, string[]>();
    byService.set(serviceName, [...(byService.get(serviceName) ?? []), r.target]);
    wanted.set(host, byService);
  }

  const rules: DnsRewriteRule[] = [];
  for (const [host, byService] of wanted) {
    if (byService.size > 1) {
      const claims = [...byService].map(([name, targets]) => `${[...targets].sort().join(', ')} → ${name}`).sort();
      for (const targets of byService.values()) {
        for (const target of targets) refused.push({ target, host, reason: 'another target claims the host for a different Service', claims: claims.join('; ') });
      }
      continue;
    }
    const [[serviceName, targets]] = [...byService] as [[string, string[]]];
    rules.push({ host, serviceName, targets: [...targets].sort() });
  }
  rules.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  refused.sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : a.host < b.host ? -1 : a.host > b.host ? 1 : 0));

  const lines = rules.map((r) => `rewrite stop name exact ${r.host}. ${r.serviceName}. answer auto`);
  return { text: `${[header([...new Set(policies)].sort(), rules.length), ...lines].join('\n')}\n`, rules, refused };
}

const RULE_LINE = /^rewrite stop name exact ([a-z0-9.-]+)\. ([a-z0-9.-]+)\. answer auto$/;

/** The rules of a file renderDnsRewrites wrote (what a ConfigMap holds after a restart); other lines are skipped. */
export function parseDnsRewrites(text: string): { host: string; serviceName: string }[] {
  return text.split('\n').flatMap((line) => {
    const m = RULE_LINE.exec(line.trim());
    return m ? [{ host: m[1]!, serviceName: m[2]! }] : [];
  });
}
