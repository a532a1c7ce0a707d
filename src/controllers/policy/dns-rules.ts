// The CoreDNS rules of `l7.inClusterDNS: Managed` as one unit of work, one key on the shared queue (DNS_RULES_KEY):
// a pass reads what every asking cluster policy asks for now (targets.ts `managedDnsNames`), writes the file when it
// differs, checks it through every CoreDNS server and sets each policy's `InClusterDNS` condition (docs/dns.md §4).
import { dnsCondition, readCorefile, ruleInEffect, ruleReverted, serviceNameProblem, type DnsCondition, type DnsRuleAnswer, type NameAnswer } from '../../model/dns-check.js';
import { involvedObject } from '../../api/loopbackpolicy.js';
import { EventReason } from '../../api/reasons.js';
import type { EventRecorder } from '../../kube/events.js';
import { dnsNameOwned, type DnsCandidate, type DnsLeftOut, type DnsName } from '../../model/dns-names.js';
import { dnsRewriteRules, parseDnsRewrites, renderDnsRewrites, type DnsRewriteRule } from '../../model/dns-rewrite.js';
import { describeOwner, policyRefOf, type OwnerKey } from '../../model/record-registry.js';
import { COREDNS_NAMESPACE, RULES_CONFIGMAP, RulesWriteConflict, type CorednsRulesAccess } from '../../kube/coredns-rules-store.js';
import type { DnsLookup } from '../../runtime/dns-resolver.js';
import type { ReconcileOutcome } from '../../runtime/work-queue.js';

/** The work queue's key of this unit (no owner key or namespace starts with an upper-case `D`). */
export const DNS_RULES_KEY = `DnsRules/${COREDNS_NAMESPACE}/${RULES_CONFIGMAP}`;
const CONFIGMAP = `${COREDNS_NAMESPACE}/${RULES_CONFIGMAP}`;

export interface DnsRulesOptions {
  store: CorednsRulesAccess;
  lookup: DnsLookup;
  /** What CoreDNS forwards to: the answer that shows whose a name is. */
  upstream: readonly string[];
  /** The CoreDNS servers the rules are checked through, each alone; empty: the kube-dns Service's (store.kubeDns). */
  coredns: readonly string[];
  clusterDomain: string;
  /** How long CoreDNS may take to apply a change of the file (ms). */
  waitMs: number;
  /** How often rules in effect are checked again: a Corefile that loses the import line stops them silently (ms). */
  recheckMs: number;
  queue: { add(key: string): void };
  /** What each cluster policy asking for Managed asks for now (managedDnsNames); undefined: one is not planned yet. */
  names: () => ReadonlyMap<OwnerKey, readonly DnsName[]> | undefined;
  logger: { info(message: string, extra?: Record<string, unknown>): void; warn(message: string, extra?: Record<string, unknown>): void };
  /** Each target's Events about its names (tellTargets). */
  events: Pick<EventRecorder, 'recordStanding'>;
  now?: () => number;
}

type Asked = DnsCandidate & { owner: OwnerKey };
/** A name not written, with why: `reason` for the condition, `own` (when it differs) for the target's own Event. */
type NotWritten = DnsLeftOut & { owner: OwnerKey; own?: string };
/** A rule written, with what each CoreDNS server answered for it (undefined: not written). */
type Checked = DnsRewriteRule<Asked> & { answers: DnsRuleAnswer[] | undefined };

/** How soon a check that waits on CoreDNS comes back (ms). */
const PENDING_RECHECK_MS = 2_000;

/** A policy's condition until a pass has checked its names. */
const PENDING: DnsCondition = { status: 'Unknown', reason: 'RulesPending', message: `loopguard has not written the rules to the ConfigMap ${CONFIGMAP} yet.` };

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class DnsRules {
  /** Per policy its condition, for the policies the last pass read as asking. */
  private conditions = new Map<OwnerKey, DnsCondition>();
  /** The file's text as this process last found or wrote it, and since when CoreDNS may have had it. */
  private current: { text: string; since: number } | undefined;
  /** Rules taken out of the file, by host, until CoreDNS no longer answers them by their Service. */
  private readonly reverting = new Map<string, { serviceName: string; since: number }>();

  constructor(private readonly o: DnsRulesOptions) {}

  /**
   * A cluster policy's round remembered its outcomes (`outcomesChanged`: some differ), or the policy is gone: a pass is
   * queued when its names may have changed. Not on every round: a pass queues the policy when its condition changes,
   * and queueing back would make the two chase each other.
   */
  changed(owner: OwnerKey, asks: boolean, outcomesChanged: boolean): void {
    const counted = this.conditions.has(owner);
    if (asks ? outcomesChanged || !counted : counted) this.o.queue.add(DNS_RULES_KEY);
  }

  /** The `InClusterDNS` condition of a policy that asks, as last checked. */
  condition(owner: OwnerKey): DnsCondition {
    return this.conditions.get(owner) ?? PENDING;
  }

  /** The queue's handler for DNS_RULES_KEY. */
  async reconcile(): Promise<ReconcileOutcome | void> {
    // What the policies ask for as the pass begins (a round ending meanwhile queues the key again). One asking from now
    // on is pending, so that changed() queues the key if it stops asking meanwhile; one no longer asking leaves.
    const asked = this.o.names();
    if (!asked) return;
    this.conditions = new Map([...asked.keys()].map((o) => [o, this.conditions.get(o) ?? PENDING]));
    // Nobody asks and no rule is left behind (absent, unreadable or empty ConfigMap): the feature is not in use.
    if (asked.size === 0 && this.reverting.size === 0 && parseDnsRewrites(await this.o.store.read().catch(() => '')).length === 0) return;
    const now = (this.o.now ?? Date.now)();
    const kubeDns = this.o.coredns.length > 0 ? undefined : await this.o.store.kubeDns();
    const servers = kubeDns ? [kubeDns] : [...this.o.coredns];
    const { owned, notWritten } = await this.ownedNames(asked);
    const { rules, refused } = dnsRewriteRules(this.o.clusterDomain, owned);
    const unresolved = new Map<string, string | undefined>();
    for (const r of rules) if (!unresolved.has(r.serviceName)) unresolved.set(r.serviceName, serviceNameProblem(r.serviceName, await this.answers(servers, r.serviceName)));
    const written = rules.filter((r) => {
      const reason = unresolved.get(r.serviceName);
      if (reason) notWritten.push(...r.requests.map((q) => ({ ...q, reason })));
      return !reason;
    });
    // The condition (cluster administrators) names who else claims a host; the target's own Event does not.
    for (const r of refused) notWritten.push({ ...r, reason: r.claims ? `${r.reason} (${r.claims})` : r.reason, own: r.reason });

    const writeProblem = await this.write(renderDnsRewrites([...asked.keys()].map((o) => policyRefOf(o).name), written), written, now);
    const checked: Checked[] = [];
    for (const r of written) checked.push({ ...r, answers: writeProblem ? undefined : await this.check(servers, r) });
    await this.checkReverts(servers, now);

    const conditionOf = (owner: OwnerKey, corefile?: ReturnType<typeof readCorefile>) =>
      dnsCondition({ rules: checked.filter((r) => r.requests.some((q) => q.owner === owner)), notWritten: notWritten.filter((n) => n.owner === owner), writeProblem, servers, writtenAt: this.current?.since ?? now, waitMs: this.o.waitMs, now, corefile, configMap: CONFIGMAP });
    const conditions = (corefile?: ReturnType<typeof readCorefile>) => new Map([...asked.keys()].map((owner) => [owner, conditionOf(owner, corefile)] as const));
    let next = conditions();
    // Only when the answers are wrong past the wait: the Corefile says which cause it is (read-only, docs/dns.md §4).
    if ([...next.values()].some((c) => c.reason === 'RulesNotInEffect')) {
      const text = await this.o.store.corefile();
      if (text !== undefined) next = conditions(readCorefile(text));
    }
    for (const [owner, c] of next) {
      const was = this.conditions.get(owner);
      this.conditions.set(owner, c);
      if (was?.status === c.status && was.reason === c.reason && was.message === c.message) continue;
      if (c.status === 'False') this.o.logger.warn('CoreDNS rules not in effect', { policy: owner, reason: c.reason, message: c.message });
      this.o.queue.add(owner); // the policy's next status carries it (publish.ts)
    }
    this.tellTargets(notWritten, checked);
    if ([...next.values()].some((c) => c.reason === 'RulesPending') || this.reverting.size > 0) return { requeueAfterMs: Math.min(PENDING_RECHECK_MS, this.o.waitMs) };
    return asked.size > 0 || writeProblem ? { requeueAfterMs: this.o.recheckMs } : undefined;
  }

  /**
   * What became of each target's names, for its own users (`kubectl describe`; the condition is the cluster policy's):
   * a Normal Event once its rule is in effect, a Warning for a name refused (without a host, no VIP yet: none), each a
   * standing Event, written once and re-asserted while it holds.
   */
  private tellTargets(notWritten: readonly NotWritten[], checked: readonly Checked[]): void {
    for (const n of notWritten) {
      if (n.host) void this.o.events.recordStanding(involvedObject(n.ref), 'Warning', EventReason.DnsRewriteRefused, `In-cluster DNS: ${describeOwner(n.owner)} does not rewrite ${n.host.replace(/\.$/, '')}: ${n.own ?? n.reason}.`);
    }
    for (const r of checked.filter((r) => ruleInEffect(r.answers ?? []))) {
      for (const q of r.requests) void this.o.events.recordStanding(involvedObject(q.ref), 'Normal', EventReason.DnsRewritten, `In-cluster DNS: CoreDNS answers ${r.host} with the address of ${r.serviceName}, so in-cluster callers skip the CLB (l7.inClusterDNS: Managed).`);
    }
  }

  /** Every policy's candidates whose upstream answer is their target's own VIP; the others, and what it left out, with the reason. */
  private async ownedNames(asked: ReadonlyMap<OwnerKey, readonly DnsName[]>): Promise<{ owned: Asked[]; notWritten: NotWritten[] }> {
    const owned: Asked[] = [];
    const notWritten: NotWritten[] = [];
    const upstream = new Map<string, Promise<string[]>>();
    for (const [owner, names] of asked) {
      for (const c of names) {
        if ('reason' in c) {
          notWritten.push({ ...c, owner });
          continue;
        }
        const host = c.host.toLowerCase().replace(/\.$/, '');
        if (!upstream.has(host)) upstream.set(host, this.o.lookup.resolve4(this.o.upstream, host));
        try {
          const ips = await upstream.get(host)!;
          if (dnsNameOwned(ips, c.vips)) owned.push({ ...c, owner });
          else notWritten.push({ ...c, owner, reason: `the upstream DNS (${this.o.upstream.join(', ')}) answers ${ips.length > 0 ? [...ips].sort().join(', ') : 'no address'}, not the target's CLB VIP ${c.vips.join(', ')}: the name is not shown to be the target's` });
        } catch (err) {
          // The error's words vary from try to try: the target's standing Event says it without them.
          const own = 'the upstream DNS did not answer, so whose name it is cannot be checked';
          notWritten.push({ ...c, owner, reason: `${own} (${errorText(err)})`, own });
        }
      }
    }
    return { owned, notWritten };
  }

  /**
   * Writes the file when it differs and notes the rules it takes out (reverting); returns why it could not. A write
   * conflict (someone wrote the ConfigMap meanwhile) is thrown: the queue's retry, soon and with its backoff.
   */
  private async write(text: string, rules: readonly DnsRewriteRule[], now: number): Promise<string | undefined> {
    try {
      const { stored, wrote } = await this.o.store.write(text);
      if (wrote) this.o.logger.info('CoreDNS rules written', { configMap: CONFIGMAP, rules: rules.length });
      // Found as it should be (a restart, another replica's write): CoreDNS gets the usual time from now on too.
      if (wrote || this.current?.text !== text) this.current = { text, since: now };
      const kept = new Set(rules.map((r) => `${r.host} ${r.serviceName}`));
      for (const r of parseDnsRewrites(stored)) if (!kept.has(`${r.host} ${r.serviceName}`)) this.reverting.set(r.host, { serviceName: r.serviceName, since: now });
      // A host removed and written again is a rule again, not a revert to wait for.
      for (const r of rules) this.reverting.delete(r.host);
      return undefined;
    } catch (err) {
      if (err instanceof RulesWriteConflict) throw err;
      this.o.logger.warn('CoreDNS rules not written', { configMap: CONFIGMAP, error: errorText(err) });
      return errorText(err);
    }
  }

  /** What each CoreDNS server, asked alone, answers for `name`; a failed lookup: the server's error, no address. */
  private answers(servers: readonly string[], name: string): Promise<NameAnswer[]> {
    return Promise.all(servers.map((server) => this.o.lookup.resolve4([server], name).then((addresses) => ({ server, addresses }), (err: unknown) => ({ server, addresses: [], error: errorText(err) }))));
  }

  /** What each CoreDNS server answers for the rule's host and its Service's name. */
  private async check(servers: readonly string[], r: Pick<DnsRewriteRule, 'host' | 'serviceName'>): Promise<DnsRuleAnswer[]> {
    const [host, service] = await Promise.all([this.answers(servers, r.host), this.answers(servers, r.serviceName)]);
    return host.map((h, i) => {
      const s = service[i]!;
      // A server that failed either lookup answered nothing: the condition names its error, not half an answer.
      const error = h.error ?? s.error;
      return error !== undefined ? { server: h.server, host: [], service: [], error } : { server: h.server, host: h.addresses, service: s.addresses };
    });
  }

  /** Removed rules: done once no server answers them by their Service; past the wait, said once in the log. */
  private async checkReverts(servers: readonly string[], now: number): Promise<void> {
    for (const [host, r] of [...this.reverting]) {
      const reverted = ruleReverted(await this.check(servers, { host, serviceName: r.serviceName }));
      if (!reverted && now - r.since < this.o.waitMs) continue;
      this.reverting.delete(host);
      if (reverted) this.o.logger.info('CoreDNS rule reverted', { host, service: r.serviceName });
      else this.o.logger.warn('CoreDNS still answers a removed rule', { host, service: r.serviceName, waitedMs: now - r.since, configMap: CONFIGMAP });
    }
  }
}
