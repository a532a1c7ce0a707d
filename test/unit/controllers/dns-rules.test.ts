// The CoreDNS rules' unit of work (src/controllers/policy/dns-rules.ts) over fakes of loopguard's own interfaces (the
// ConfigMap store, the DNS lookup): what it writes, when it holds, what each policy's condition says, and that it
// queues the policy when that changes. The real ConfigMap and real CoreDNS: test/integration/dns-managed.test.ts.
import { describe, expect, it } from '@jest/globals';
import { DNS_RULES_KEY, DnsRules } from '../../../src/controllers/policy/dns-rules.js';
import { RulesWriteConflict, type CorednsRulesAccess } from '../../../src/kube/coredns-rules-store.js';
import type { DnsCandidate, DnsName } from '../../../src/model/dns-names.js';
import type { DnsLookup } from '../../../src/runtime/dns-resolver.js';

const VIP = '10.0.0.10';
const CLUSTER_IP = '10.96.0.20';
const COREDNS = '10.96.0.10:53';
const UPSTREAM = '183.60.83.19';
const OWNER = 'ClusterLoopbackPolicy/tke';

const candidate = (host: string, extra: Partial<DnsCandidate> = {}): DnsCandidate => ({ target: 'Ingress shop/web', ref: { kind: 'Ingress', namespace: 'shop', name: 'web' }, host, namespace: 'shop', service: 'web', vips: [VIP], ...extra });
const choice = (...candidates: DnsCandidate[]): DnsName[] => candidates;

/** A world: what the upstream and CoreDNS answer, and the ConfigMap's text. */
function world(o: { upstream?: Record<string, string[]>; coredns?: (name: string, text: string) => string[]; corefile?: string; missing?: boolean; onUpstream?: (name: string) => void; noKubeDns?: boolean } = {}) {
  const state = { text: '# empty\n', writes: 0, reads: 0, queued: [] as string[], now: 1_000_000, conflicts: 0, held: false };
  const store: CorednsRulesAccess = {
    read: async () => {
      state.reads++;
      if (o.missing) throw new Error('it does not exist');
      return state.text;
    },
    write: async (text) => {
      if (o.missing) throw new Error('it does not exist');
      const stored = state.text;
      if (text === stored) return { stored, wrote: false };
      if (state.conflicts > 0 && state.conflicts--) throw new RulesWriteConflict('loopguard-coredns-rules changed while loopguard wrote it');
      state.text = text;
      state.writes++;
      return { stored, wrote: true };
    },
    corefile: async () => o.corefile,
    kubeDns: async () => (o.noKubeDns ? undefined : COREDNS),
  };
  // CoreDNS by default applies the file at once: a host with a rule answers the Service's ClusterIP.
  const corednsAnswer = o.coredns ?? ((name, text) => (name === 'web.shop.svc.cluster.local' || text.includes(`exact ${name}. web.shop`) ? [CLUSTER_IP] : [VIP]));
  const lookup: DnsLookup = {
    resolve4: async (servers, name) => {
      if (servers[0] !== UPSTREAM) return corednsAnswer(name, state.text);
      o.onUpstream?.(name);
      return o.upstream?.[name] ?? [VIP];
    },
  };
  // What the policies ask for (managedDnsNames), a copy per pass as there; `held`: one is not planned yet.
  const asked = new Map<string, DnsName[]>();
  const warnings: string[] = [];
  const events: string[] = [];
  const dns = new DnsRules({ store, lookup, upstream: [UPSTREAM], coredns: [], clusterDomain: 'cluster.local', waitMs: 60_000, recheckMs: 300_000, queue: { add: (k) => state.queued.push(k) }, names: () => (state.held ? undefined : new Map(asked)), logger: { info: () => {}, warn: (m) => void warnings.push(m) }, events: { recordStanding: async (t, type, reason, message) => void events.push(`${t.kind} ${t.namespace}/${t.name} ${type} ${reason}: ${message}`) }, now: () => state.now });
  return { dns, state, asked, warnings, events };
}

describe('DnsRules', () => {
  it.each<[string, { missing?: boolean; text?: string }]>([
    ['the ConfigMap absent (the feature not installed)', { missing: true }],
    ['the ConfigMap holding no rule', { text: '# Managed by loopguard\n# 0 rules.\n' }],
  ])('nobody asks and nothing is left to remove (%s): nothing written, no warning, no requeue', async (_what, w) => {
    const { dns, state, warnings } = world({ ...(w.missing ? { missing: true } : {}) });
    if (w.text) state.text = w.text;
    expect(await dns.reconcile()).toBeUndefined();
    expect({ writes: state.writes, warnings }).toEqual({ writes: 0, warnings: [] });
  });

  it('writes the names a policy asks for, checks them through CoreDNS, and queues the policy with its condition', async () => {
    const { dns, state, asked } = world();
    asked.set(OWNER, choice(candidate('shop.example.com')));
    dns.changed(OWNER, true, true);
    expect(state.queued).toEqual([DNS_RULES_KEY]);
    expect(dns.condition(OWNER)).toMatchObject({ status: 'Unknown', reason: 'RulesPending' });
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(state.text).toContain('rewrite stop name exact shop.example.com. web.shop.svc.cluster.local. answer auto');
    expect(state.text).toContain('for ClusterLoopbackPolicy tke ');
    expect(state.writes).toBe(1);
    expect(dns.condition(OWNER)).toMatchObject({ status: 'True', reason: 'RulesInEffect' });
    expect(state.queued).toEqual([DNS_RULES_KEY, OWNER]);
    // The policy's next round (carrying the condition) changed no outcome: no pass, so the two never chase each other.
    dns.changed(OWNER, true, false);
    expect(state.queued).toEqual([DNS_RULES_KEY, OWNER]);
    // A round that changed outcomes queues a pass; the same names: nothing written, the policy not queued again.
    dns.changed(OWNER, true, true);
    await dns.reconcile();
    expect({ writes: state.writes, queued: state.queued }).toEqual({ writes: 1, queued: [DNS_RULES_KEY, OWNER, DNS_RULES_KEY] });
  });

  it('an upstream that rotates its answers makes the same condition each pass (no status write, no new Event)', async () => {
    const upstream: Record<string, string[]> = { 'partner.example.net': ['203.0.113.7', '203.0.113.8'] };
    const { dns, state, asked, events } = world({ upstream });
    asked.set(OWNER, choice(candidate('partner.example.net'), candidate('shop.example.com')));
    await dns.reconcile();
    const first = dns.condition(OWNER).message;
    const queued = state.queued.length;
    upstream['partner.example.net'] = ['203.0.113.8', '203.0.113.7'];
    await dns.reconcile();
    expect(dns.condition(OWNER).message).toBe(first);
    expect(state.queued.length).toBe(queued);
    expect(new Set(events).size).toBe(2);
  });

  it("never writes a name whose upstream answer is not the target's VIP, and says so", async () => {
    const { dns, state, asked } = world({ upstream: { 'partner.example.net': ['203.0.113.7'], 'internal.example.com': [] } });
    asked.set(OWNER, choice(candidate('partner.example.net'), candidate('internal.example.com'), candidate('shop.example.com')));
    await dns.reconcile();
    expect(state.text).not.toContain('partner.example.net');
    expect(state.text).not.toContain('internal.example.com');
    expect(state.text).toContain('exact shop.example.com.');
    const c = dns.condition(OWNER)!;
    expect(c.status).toBe('True');
    expect(c.message).toContain(`partner.example.net (Ingress shop/web): the upstream DNS (${UPSTREAM}) answers 203.0.113.7, not the target's CLB VIP ${VIP}`);
    expect(c.message).toContain('internal.example.com (Ingress shop/web): the upstream DNS (183.60.83.19) answers no address');
  });

  it("tells each target's users what became of its names: a Normal Event for a rule in effect, a Warning for a name refused", async () => {
    const { dns, asked, events } = world({ upstream: { 'partner.example.net': ['203.0.113.7'] } });
    const api = { target: 'Ingress shop/api', ref: { kind: 'Ingress' as const, namespace: 'shop', name: 'api' } };
    asked.set(OWNER, [candidate('shop.example.com'), candidate('partner.example.net'), { ...api, host: 'secure.example.com', reason: 'the host has TLS' }, { ...api, reason: 'it has no CLB VIP in its status yet' }]);
    await dns.reconcile();
    expect(events.sort()).toEqual([
      'Ingress shop/api Warning DnsRewriteRefused: In-cluster DNS: ClusterLoopbackPolicy/tke does not rewrite secure.example.com: the host has TLS.',
      `Ingress shop/web Normal DnsRewritten: In-cluster DNS: CoreDNS answers shop.example.com with the address of web.shop.svc.cluster.local, so in-cluster callers skip the CLB (l7.inClusterDNS: Managed).`,
      `Ingress shop/web Warning DnsRewriteRefused: In-cluster DNS: ClusterLoopbackPolicy/tke does not rewrite partner.example.net: the upstream DNS (${UPSTREAM}) answers 203.0.113.7, not the target's CLB VIP ${VIP}: the name is not shown to be the target's.`,
    ]);
  });

  it('no Normal Event while CoreDNS does not answer the rule yet', async () => {
    const { dns, asked, events } = world({ coredns: (name) => (name === 'web.shop.svc.cluster.local' ? [CLUSTER_IP] : [VIP]) });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    expect(events).toEqual([]);
  });

  it("never writes a rule whose Service name CoreDNS does not answer (it would break the host), and says so", async () => {
    // A wrong --cluster-domain: CoreDNS answers nothing under it.
    const { dns, state, asked } = world({ coredns: (name) => (name === 'web.shop.svc.cluster.local' ? [] : name === 'api.shop.svc.cluster.local' ? [CLUSTER_IP] : [VIP]) });
    asked.set(OWNER, choice(candidate('shop.example.com'), candidate('api.example.com', { target: 'Ingress shop/api', service: 'api' })));
    await dns.reconcile();
    expect(state.text).not.toContain('shop.example.com');
    expect(state.text).toContain('rewrite stop name exact api.example.com. api.shop.svc.cluster.local. answer auto');
    expect(dns.condition(OWNER)!.message).toContain(
      'shop.example.com (Ingress shop/web): not written: the Service name web.shop.svc.cluster.local does not resolve through CoreDNS (10.96.0.10:53 answered no address; check --cluster-domain',
    );
  });

  it('a policy whose round ends while a pass awaits DNS is left to the next pass (its condition is not judged from a file without its names)', async () => {
    const OTHER = 'ClusterLoopbackPolicy/other';
    const ref: { dns?: DnsRules; asked?: Map<string, DnsName[]> } = {};
    // The policy asks, and its round ends, while the pass awaits the upstream's answer.
    const { dns, state, asked } = world({
      onUpstream: (name) => {
        if (name !== 'shop.example.com' || ref.asked!.has(OTHER)) return;
        ref.asked!.set(OTHER, choice(candidate('other.example.com', { target: 'Ingress shop/other' })));
        ref.dns!.changed(OTHER, true, true);
      },
    });
    ref.asked = asked;
    ref.dns = dns;
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    expect(state.text).toContain('for ClusterLoopbackPolicy tke ');
    expect(dns.condition(OTHER)).toMatchObject({ status: 'Unknown', reason: 'RulesPending' });
    expect(state.queued.filter((k) => k === DNS_RULES_KEY)).toHaveLength(1);
    await dns.reconcile();
    expect(state.text).toContain('exact other.example.com.');
    expect(dns.condition(OTHER)).toMatchObject({ status: 'True', reason: 'RulesInEffect' });
  });

  it('holds while a policy asking for Managed has not been planned yet (a restart must not drop its names): reads and writes nothing', async () => {
    const { dns, state, asked } = world();
    asked.set(OWNER, choice(candidate('shop.example.com')));
    state.held = true;
    expect(await dns.reconcile()).toBeUndefined();
    expect({ writes: state.writes, reads: state.reads }).toEqual({ writes: 0, reads: 0 });
    state.held = false;
    asked.set('ClusterLoopbackPolicy/other', choice());
    await dns.reconcile();
    expect(state.writes).toBe(1);
    expect(state.text).toContain('for ClusterLoopbackPolicy other, tke ');
  });

  it('pending while CoreDNS has not applied the rules, then not in effect past the wait, with the Corefile read for the cause', async () => {
    const { dns, state, asked } = world({ coredns: (name) => (name.endsWith('.svc.cluster.local') ? [CLUSTER_IP] : [VIP]), corefile: '.:53 {\n    forward . /etc/resolv.conf\n}\n' });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 2_000 });
    expect(dns.condition(OWNER)).toMatchObject({ status: 'Unknown', reason: 'RulesPending' });
    state.now += 61_000;
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(dns.condition(OWNER)).toMatchObject({ status: 'False', reason: 'RulesNotInEffect', message: expect.stringContaining('has no line "import /etc/coredns/loopguard/*.rules"') });
    expect(state.queued.filter((k) => k === OWNER)).toHaveLength(2);
  });

  it('throws a write conflict for the queue to retry, leaving the condition as it was (no RulesNotWritten for one lost race)', async () => {
    const { dns, state, asked } = world();
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    expect(dns.condition(OWNER)).toMatchObject({ reason: 'RulesInEffect' });
    const queued = state.queued.length;
    asked.set(OWNER, choice(candidate('shop.example.com'), candidate('api.example.com', { target: 'Ingress shop/api', service: 'web' })));
    state.conflicts = 1;
    await expect(dns.reconcile()).rejects.toThrow(RulesWriteConflict);
    expect(dns.condition(OWNER)).toMatchObject({ reason: 'RulesInEffect' });
    expect(state.queued.slice(queued)).toEqual([]);
    await dns.reconcile();
    expect(state.text).toContain('exact api.example.com.');
  });

  it('with no CoreDNS server known (kube-dns unreadable), writes no rule, says so with its own reason, and comes back at the recheck interval', async () => {
    const { dns, state, asked } = world({ noKubeDns: true });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(state.text).toContain('# 0 rules.');
    expect(dns.condition(OWNER)).toMatchObject({ status: 'False', reason: 'NoCoreDNSServer', message: expect.stringContaining('shop.example.com (Ingress shop/web): not written: no CoreDNS server is known') });
  });

  it('reports a ConfigMap it cannot write, and writes nothing else anywhere', async () => {
    const { dns, asked } = world({ missing: true });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(dns.condition(OWNER)).toMatchObject({ status: 'False', reason: 'RulesNotWritten', message: expect.stringContaining('it does not exist') });
  });

  it('on forget (policy deleted, Managed off) rewrites the file without its rules, header only, and checks the name no longer answers by the Service', async () => {
    const { dns, state, asked } = world();
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    // No longer asking: its round (or its forgetting) queues the key once, while the last pass still counts it.
    asked.delete(OWNER);
    const queued = state.queued.length;
    dns.changed(OWNER, false, true);
    expect(state.queued.slice(queued)).toEqual([DNS_RULES_KEY]);
    expect(await dns.reconcile()).toBeUndefined();
    expect(state.text).not.toContain('rewrite ');
    expect(state.text).toContain('# 0 rules.');
    expect(state.writes).toBe(2);
    // Its next rounds queue nothing: a cluster where nobody asks has no DNS work.
    dns.changed(OWNER, false, true);
    expect(state.queued.slice(queued)).toEqual([DNS_RULES_KEY]);
  });

  it('after a restart with no policy asking (its key queued at start, clusterUnits), rewrites stored rules to the header alone', async () => {
    const { dns, state } = world();
    state.text = '# Managed by loopguard\nrewrite stop name exact shop.example.com. web.shop.svc.cluster.local. answer auto\n';
    await dns.reconcile();
    expect(state.text).toBe('# Managed by loopguard (no ClusterLoopbackPolicy asks for l7.inClusterDNS: Managed now); loopguard rewrites this file whole.\n# Each rule sends a host name of an Ingress or Gateway it manages to the Service serving it in-cluster (docs/dns.md).\n# 0 rules.\n');
    expect(state.writes).toBe(1);
  });

  it('a host removed and re-added before CoreDNS dropped it is a rule again, not a revert still waited on', async () => {
    const { dns, state, asked } = world({ coredns: (name) => (name.endsWith('.svc.cluster.local') ? [CLUSTER_IP] : name === 'shop.example.com' ? [CLUSTER_IP] : [VIP]) });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    asked.set(OWNER, choice());
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 2_000 });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(state.text).toContain('exact shop.example.com.');
    expect(dns.condition(OWNER)).toMatchObject({ reason: 'RulesInEffect' });
  });

  it('gives up on a removed rule CoreDNS still answers by the Service past the wait, with a warning', async () => {
    const { dns, state, asked, warnings } = world({ coredns: () => [CLUSTER_IP] });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    asked.set(OWNER, choice());
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 2_000 });
    state.now += 61_000;
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(warnings).toEqual(['CoreDNS still answers a removed rule']);
  });

  it('does not take a removed rule as reverted while its Service name does not resolve (a failed lookup shows nothing)', async () => {
    let failing = false;
    const { dns, asked } = world({
      coredns: (name, text) => {
        if (failing && name === 'web.shop.svc.cluster.local') throw new Error('ETIMEOUT');
        return name === 'web.shop.svc.cluster.local' || text.includes(`exact ${name}. web.shop`) ? [CLUSTER_IP] : [VIP];
      },
    });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    asked.set(OWNER, choice());
    failing = true;
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 2_000 });
    failing = false;
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
  });

  it('keeps checking a removed rule while CoreDNS still answers it by the Service', async () => {
    let applied = true;
    const { dns, state, asked } = world({ coredns: (name) => (name.endsWith('.svc.cluster.local') || applied ? [CLUSTER_IP] : [VIP]) });
    asked.set(OWNER, choice(candidate('shop.example.com')));
    await dns.reconcile();
    asked.set(OWNER, choice());
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 2_000 });
    applied = false;
    expect(await dns.reconcile()).toEqual({ requeueAfterMs: 300_000 });
    expect(state.text).toContain('# 0 rules.');
  });
});
