// Asks DNS servers for a name's IPv4 addresses (node:dns's c-ares resolver, which checks that an answer is owned by
// the name asked: CoreDNS's `answer auto` rewrites it back, docs/dns.md §3 #2). The rules' unit asks each CoreDNS
// server alone: each replica reloads on its own clock, so the rules are in effect only when every one answers by them.
import { Resolver } from 'node:dns/promises';

/** No such name, or no A record: an empty answer, not a failure. */
const EMPTY_ANSWER = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

export type DnsLookup = typeof dnsLookup;

export const dnsLookup = {
  /** The name's A records from `servers` (the first that answers), sorted, [] when it has none; throws on a failure. */
  async resolve4(servers: readonly string[], name: string): Promise<string[]> {
    const r = new Resolver({ timeout: 2_000, tries: 2 });
    r.setServers([...servers]);
    try {
      return (await r.resolve4(name)).sort();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code && EMPTY_ANSWER.has(code)) return [];
      throw new Error(`${name} through ${servers.join(', ')}: ${code ?? (err instanceof Error ? err.message : String(err))}`, { cause: err });
    } finally {
      r.cancel();
    }
  },
};
