// The CoreDNS rules of `l7.inClusterDNS: Managed` (docs/dns.md §4) as one unit of work: one ConfigMap, one key on
// the shared work queue (DNS_RULES_KEY), as the namespaces' reports are (namespace-reports.ts). When its key runs, the
// unit reads what every asking cluster policy asks for now (targets.ts `managedDnsNames`: each target as the caches show it,
// judged by its round's last outcome, model/dns-names.ts), keeps the names whose upstream answer is their target's own
// VIP, renders the file (model/dns-rewrite.ts) with the rules whose Service name CoreDNS answers (a rule to a name it
// does not would break the host in-cluster), writes it when it differs, resolves each name through every CoreDNS
// server and reports back: per policy an `InClusterDNS` condition (model/dns-check.ts), which the policy's next status
// carries (the unit queues the policy when it changes). A policy's round queues the key while the policy asks, and
// once after it stopped (`changed`). A name no longer asked for (Managed turned off, a target fixed or gone, the policy
// deleted) leaves the file and is checked until it no longer resolves to its Service. A policy's round never waits on
// DNS; a failed read or write is reported in the condition and tried again at the next check, except a write conflict
// (someone wrote the ConfigMap meanwhile), which the pass throws for the work queue to retry with its backoff.
import { dnsCondition, readCorefile, ruleInEffect, ruleReverted, serviceNameProblem, type DnsCondition, type DnsRuleAnswer } from '../../model/dns-check.js';
import { involvedObject } from '../../api/loopbackpolicy.js';
import { EventReason } from '../../api/reasons.js';
import type { EventRecorder } from '../../kube/events.js';
import { dnsNameOwned, type DnsNameChoice } from '../../model/dns-names.js';
import { parseDnsRewrites, renderDnsRewrites, type DnsRewriteRule } from '../../model/dns-rewrite.js';
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
  names: () => ReadonlyMap<OwnerKey, DnsNameChoice> | undefined;
  logger: { info(message: string, extra?: Record<string, unknown>): void; warn(message: string, extra?: Record<string, unknown>): void };
  /** Each target's Events about its names (tellTargets). */
  events: Pick<EventRecorder, 'recordStanding'>;
  now?: () => number;
}

/** A name not written, with why: `reason` for the condition, `own` (when it differs) for the target's own Event. */
interface NotWritten {
  target: string;
  host?: string;
  reason: string;
  own?: string;
}

/** A request's host as its rule spells it (renderDnsRewrites drops the trailing dot). */
const ruleHost = (host: string) => host.replace(/\.$/, '');

/** How soon a check that waits on CoreDNS comes back (ms). */
const PENDING_RECHECK_MS = 2_000;

/** A policy's condition until a pass has checked its names. */
const PENDING: DnsCondition = { status: 'Unknown', reason: 'RulesPending', message: `loopguard has not written the rules to the ConfigMap ${CONFIGMAP} yet.` };

export class DnsRules {
  /** Per policy its condition, for the policies the last pass read as asking. */
  private conditions = new Map<OwnerKey, DnsCondition>();
  /** The file's text as this process last found or wrote it, and since when CoreDNS may have had it. */
  private current: { text: string; since: number } | undefined;
  /** Rules taken out of the file, by host, until CoreDNS no longer answers them by their Service. */
  private readonly reverting = new Map<string, { serviceName: string; since: number }>();
  private readonly now: () => number;

  constructor(private readonly o: DnsRulesOptions) {
    this.now = o.now ?? Date.now;
  }

  /**
   * A cluster policy's round remembered its outcomes (`outcomesChanged`: some of them differ), or the policy is gone:
   * its names may have changed. Queued when they may have for a policy that asks, or one not checked yet, and once for
   * one that stopped asking while the last pass counts it; a round that changed nothing queues nothing (the pass's
   * condition changing queues the policy: queueing back on every round would make the two chase each other).
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
    // What the policies ask for when the pass begins: a round that ends while it awaits DNS queues the key again, and
    // what it changed belongs to that next pass. One asking from now on is pending, so that it queues the key if it
    // stops asking meanwhile (changed); one no longer asking leaves.
    const asked = this.o.names();
    if (!asked) return;
    const before = this.conditions;
    this.conditions = new Map([...asked.keys()].map((o) => [o, before.get(o) ?? PENDING]));
    // Nobody asks: only rules left behind (a policy deleted or turned Unmanaged while no operator ran) need removing.
    // A ConfigMap that holds none, is absent or unreadable needs nothing, not even a warning: the feature is not in use.
    if (asked.size === 0 && this.reverting.size === 0 && parseDnsRewrites(await this.o.store.read().catch(() => '')).length === 0) return;
    const now = this.now();
    const kubeDns = this.o.coredns.length > 0 ? undefined : await this.o.store.kubeDns();
    const servers = this.o.coredns.length > 0 ? [...this.o.coredns] : kubeDns ? [kubeDns] : [];
    const { requests, notWritten } = await this.ownedNames(asked);
    const policies = [...asked.keys()].map((o) => policyRefOf(o).name);
    const ownerOf = new Map(requests.map((r) => [r.target, r.owner]));
    // Only rules whose Service name CoreDNS answers: the file is rendered, its Service names resolved, and rendered
    // again without the rules that would make a host unresolvable in-cluster.
    const rendered = renderDnsRewrites(policies, this.o.clusterDomain, requests);
    const unresolved = new Map<string, string>();
    for (const name of new Set(rendered.rules.map((r) => r.serviceName))) {
      const answers = (await this.ask(servers, [name])).map(({ server, addresses: [addresses = []], error }) => ({ server, addresses, ...(error !== undefined ? { error } : {}) }));
      const problem = serviceNameProblem(name, answers);
      if (problem) unresolved.set(name, problem);
    }
    const dropped = new Map(rendered.rules.filter((r) => unresolved.has(r.serviceName)).map((r) => [r.host, unresolved.get(r.serviceName)!]));
    const file = dropped.size > 0 ? renderDnsRewrites(policies, this.o.clusterDomain, requests.filter((r) => !dropped.has(ruleHost(r.host)))) : rendered;
    for (const r of requests) {
      const reason = dropped.get(ruleHost(r.host));
      if (reason) notWritten.get(r.owner)?.push({ target: r.target, host: r.host, reason });
    }
    // The condition (cluster administrators) names who else claims a host; the target's own Event does not (tellTargets).
    for (const r of file.refused) notWritten.get(ownerOf.get(r.target)!)?.push({ target: r.target, host: r.host, reason: r.claims ? `${r.reason} (${r.claims})` : r.reason, own: r.reason });

    let writeProblem: string | undefined;
    try {
      const stored = await this.o.store.read();
      if (await this.o.store.write(file.text)) {
        this.o.logger.info('CoreDNS rules written', { configMap: CONFIGMAP, rules: file.rules.length });
        this.current = { text: file.text, since: now };
      } else if (this.current?.text !== file.text) {
        // Found as it should be (a restart, another replica's write): CoreDNS gets the usual time from now on.
        this.current = { text: file.text, since: now };
      }
      const kept = new Set(file.rules.map((r) => `${r.host} ${r.serviceName}`));
      for (const r of parseDnsRewrites(stored)) if (!kept.has(`${r.host} ${r.serviceName}`)) this.reverting.set(r.host, { serviceName: r.serviceName, since: now });
      // A host removed and written again is a rule again, not a revert to wait for.
      for (const r of file.rules) this.reverting.delete(r.host);
    } catch (err) {
      // Someone wrote the ConfigMap meanwhile: the queue's retry, soon and with its backoff, not a False condition.
      if (err instanceof RulesWriteConflict) throw err;
      writeProblem = err instanceof Error ? err.message : String(err);
      this.o.logger.warn('CoreDNS rules not written', { configMap: CONFIGMAP, error: writeProblem });
    }

    const answers = new Map<string, DnsRuleAnswer[]>();
    if (!writeProblem) for (const r of file.rules) answers.set(r.host, await this.check(servers, r));
    await this.checkReverts(servers, now);

    let corefile: ReturnType<typeof readCorefile> | undefined;
    const conditionOf = (owner: OwnerKey) =>
      dnsCondition({
        rules: file.rules.filter((r) => r.targets.some((t) => ownerOf.get(t) === owner)).map((r) => ({ host: r.host, serviceName: r.serviceName, ...(answers.has(r.host) ? { answers: answers.get(r.host)! } : {}) })),
        notWritten: notWritten.get(owner) ?? [],
        ...(writeProblem ? { writeProblem } : {}),
        servers,
        writtenAt: this.current?.since ?? now,
        waitMs: this.o.waitMs,
        now,
        ...(corefile ? { corefile } : {}),
        configMap: CONFIGMAP,
      });
    let next = new Map([...asked.keys()].map((o) => [o, conditionOf(o)] as const));
    // Only when the answers are wrong past the wait: the Corefile says which cause it is (read-only, docs/dns.md §4).
    if ([...next.values()].some((c) => c.reason === 'RulesNotInEffect')) {
      const text = await this.o.store.corefile();
      if (text !== undefined) {
        corefile = readCorefile(text);
        next = new Map([...asked.keys()].map((o) => [o, conditionOf(o)] as const));
      }
    }
    for (const [owner, c] of next) {
      const was = this.conditions.get(owner);
      this.conditions.set(owner, c);
      if (!was || was.status !== c.status || was.reason !== c.reason || was.message !== c.message) {
        if (c.status === 'False') this.o.logger.warn('CoreDNS rules not in effect', { policy: owner, reason: c.reason, message: c.message });
        // The policy's next status carries it (publish.ts).
        this.o.queue.add(owner);
      }
    }
    this.tellTargets(asked, notWritten, file.rules, answers);
    const waiting = [...next.values()].some((c) => c.reason === 'RulesPending') || this.reverting.size > 0;
    if (waiting) return { requeueAfterMs: Math.min(PENDING_RECHECK_MS, this.o.waitMs) };
    return asked.size > 0 || writeProblem ? { requeueAfterMs: this.o.recheckMs } : undefined;
  }

  /**
   * What became of each target's names, where the target's own users read it (`kubectl describe`; the condition is
   * the cluster policy's): a Normal Event once its rule is in effect, a Warning for a name refused, each written once
   * and re-asserted while it holds (recordStanding). Names refused before a host is known (no VIP yet) wait for one.
   */
  private tellTargets(asked: ReadonlyMap<OwnerKey, DnsNameChoice>, notWritten: ReadonlyMap<OwnerKey, readonly NotWritten[]>, rules: readonly DnsRewriteRule[], answers: ReadonlyMap<string, DnsRuleAnswer[]>): void {
    const refOf = new Map([...asked.values()].flatMap((c) => [...c.candidates, ...c.leftOut].map((t) => [t.target, t.ref] as const)));
    const tell = (target: string, type: 'Normal' | 'Warning', reason: string, message: string) => {
      const ref = refOf.get(target);
      if (ref) void this.o.events.recordStanding(involvedObject(ref), type, reason, message);
    };
    for (const [owner, left] of notWritten) {
      for (const l of left) if (l.host) tell(l.target, 'Warning', EventReason.DnsRewriteRefused, `In-cluster DNS: ${describeOwner(owner)} does not rewrite ${ruleHost(l.host)}: ${l.own ?? l.reason}.`);
    }
    for (const r of rules) {
      if (!ruleInEffect(answers.get(r.host) ?? [])) continue;
      for (const t of r.targets) tell(t, 'Normal', EventReason.DnsRewritten, `In-cluster DNS: CoreDNS answers ${r.host} with the address of ${r.serviceName}, so in-cluster callers skip the CLB (l7.inClusterDNS: Managed).`);
    }
  }

  /** Every policy's candidates whose upstream answer is their target's own VIP; the others with the reason, per policy. */
  private async ownedNames(asked: ReadonlyMap<OwnerKey, DnsNameChoice>) {
    const requests: { owner: OwnerKey; target: string; host: string; namespace: string; service: string }[] = [];
    const notWritten = new Map<OwnerKey, NotWritten[]>();
    const upstream = new Map<string, Promise<string[]>>();
    for (const [owner, choice] of asked) {
      const left: NotWritten[] = [...choice.leftOut];
      notWritten.set(owner, left);
      for (const c of choice.candidates) {
        const host = c.host.toLowerCase().replace(/\.$/, '');
        let answer = upstream.get(host);
        if (!answer) upstream.set(host, (answer = this.o.lookup.resolve4(this.o.upstream, host)));
        try {
          const ips = await answer;
          if (dnsNameOwned(ips, c.vips)) requests.push({ owner, target: c.target, host: c.host, namespace: c.namespace, service: c.service });
          else left.push({ target: c.target, host: c.host, reason: `the upstream DNS (${this.o.upstream.join(', ')}) answers ${ips.length > 0 ? [...ips].sort().join(', ') : 'no address'}, not the target's CLB VIP ${c.vips.join(', ')}: the name is not shown to be the target's` });
        } catch (err) {
          // The error's words vary from try to try: the target's standing Event says it without them.
          const why = 'the upstream DNS did not answer, so whose name it is cannot be checked';
          left.push({ target: c.target, host: c.host, reason: `${why} (${err instanceof Error ? err.message : String(err)})`, own: why });
        }
      }
    }
    return { requests, notWritten };
  }

  /** What each CoreDNS server, asked alone, answers for each of `names`; a failed lookup: the server's error, no addresses. */
  private ask(servers: readonly string[], names: readonly string[]) {
    return Promise.all(
      servers.map(async (server) => {
        try {
          return { server, addresses: await Promise.all(names.map((n) => this.o.lookup.resolve4([server], n))) };
        } catch (err) {
          return { server, addresses: names.map((): string[] => []), error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }

  /** What each CoreDNS server answers for the rule's host and its Service's name. */
  private async check(servers: readonly string[], r: Pick<DnsRewriteRule, 'host' | 'serviceName'>): Promise<DnsRuleAnswer[]> {
    return (await this.ask(servers, [r.host, r.serviceName])).map(({ server, addresses: [host = [], service = []], error }) => ({ server, host, service, ...(error !== undefined ? { error } : {}) }));
  }

  /** Removed rules: done once no server answers them by their Service; past the wait, said once in the log. */
  private async checkReverts(servers: readonly string[], now: number): Promise<void> {
    for (const [host, r] of [...this.reverting]) {
      if (servers.length === 0 || ruleReverted(await this.check(servers, { host, serviceName: r.serviceName }))) {
        this.reverting.delete(host);
        this.o.logger.info('CoreDNS rule reverted', { host, service: r.serviceName });
      } else if (now - r.since >= this.o.waitMs) {
        this.reverting.delete(host);
        this.o.logger.warn('CoreDNS still answers a removed rule', { host, service: r.serviceName, waitedMs: now - r.since, configMap: CONFIGMAP });
      }
    }
  }
}
