// Pure: whether loopguard's CoreDNS rules are in effect, from CoreDNS's answers, and a policy's `InClusterDNS`
// condition (docs/dns.md §3, §4). Resolving through CoreDNS is the one reliable signal (§3: a lost import line or a
// Corefile syntax error leaves no metric); what answers cannot tell apart, the condition names with the way to tell.

/** What one CoreDNS server answered for a name (an error: no answer). */
export interface NameAnswer {
  server: string;
  addresses: readonly string[];
  error?: string;
}

/** What one CoreDNS server answered for one rule: the host's addresses and the Service name's (an error: none). */
export type DnsRuleAnswer = Pick<NameAnswer, 'server' | 'error'> & { host: readonly string[]; service: readonly string[] };

/** Every server answers the host with exactly the Service name's addresses (and at least one server answered). */
export function ruleInEffect(answers: readonly DnsRuleAnswer[]): boolean {
  return answers.length > 0 && answers.every((a) => !a.error && a.host.length > 0 && a.host.every((ip) => a.service.includes(ip)) && a.service.every((ip) => a.host.includes(ip)));
}

/** A removed rule no longer answers by its Service on any server (a Service gone answers nothing: reverted). */
export function ruleReverted(answers: readonly DnsRuleAnswer[]): boolean {
  return answers.every((a) => !a.error && (a.service.length === 0 || !a.host.some((ip) => a.service.includes(ip))));
}

/**
 * Why a rule to `serviceName` must not be written, from the servers' answers for it; undefined: it resolves (an address
 * on some server, and no server answering none). A rule to a name CoreDNS does not answer (a wrong --cluster-domain)
 * would make the host NXDOMAIN in-cluster: worse than the loopback it works around.
 */
export function serviceNameProblem(serviceName: string, answers: readonly NameAnswer[]): string | undefined {
  if (answers.length === 0) return `not written: no CoreDNS server is known to check that the Service name ${serviceName} resolves`;
  const empty = answers.filter((x) => !x.error && x.addresses.length === 0);
  if (empty.length > 0) return `not written: the Service name ${serviceName} does not resolve through CoreDNS (${empty.map((x) => x.server).join(', ')} answered no address; check --cluster-domain, and that the Service has a ClusterIP), so the rule would make the host unresolvable in-cluster`;
  if (answers.every((x) => x.error)) return `not written: CoreDNS did not answer for the Service name ${serviceName} (${answers.map((x) => `${x.server}: ${x.error}`).join('; ')}), so that it resolves is not shown`;
  return undefined;
}

/** The directory the administrator mounts the ConfigMap at, and the import line that reads it (docs/dns.md §4). */
const RULES_MOUNT_DIR = '/etc/coredns/loopguard';
export const IMPORT_LINE = `import ${RULES_MOUNT_DIR}/*.rules`;

/** What the Corefile's text (comments dropped) says: whether a line imports a `loopguard/*.rules` glob, whether its braces balance. */
export function readCorefile(text: string): { importsRules: boolean; bracesBalance: boolean } {
  const lines = text.split('\n').map((l) => l.replace(/#.*$/, '').trim());
  // The documented line, or the same glob under another mount path (a `loopguard/` directory of `*.rules` files).
  const importsRules = lines.some((l) => /^import\s+(\S*\/)?loopguard\/\*\.rules$/.test(l));
  let depth = 0;
  const neverBelowZero = [...lines.join('').replace(/[^{}]/g, '')].every((ch) => (depth += ch === '{' ? 1 : -1) >= 0);
  return { importsRules, bracesBalance: neverBelowZero && depth === 0 };
}

export interface DnsConditionInput {
  /** The names this policy asked for that were written, by host, with what CoreDNS answered (undefined: not checked yet). */
  rules: readonly { host: string; serviceName: string; answers?: readonly DnsRuleAnswer[] }[];
  /** Names this policy's targets would need but that were not written, with the reason. */
  notWritten: readonly { target: string; host?: string; reason: string }[];
  /** Why the ConfigMap could not be written or read; undefined: written (or already equal). */
  writeProblem?: string;
  /** The CoreDNS servers checked; empty: none known. */
  servers: readonly string[];
  /** Since when the current rules have been in the ConfigMap, and how long CoreDNS may take to apply them (ms). */
  writtenAt: number;
  waitMs: number;
  now: number;
  /** The Corefile as read; undefined: it could not be read. */
  corefile?: ReturnType<typeof readCorefile>;
  /** The ConfigMap holding the rules, for messages ("kube-system/loopguard-coredns-rules"). */
  configMap: string;
}

export interface DnsCondition {
  status: 'True' | 'False' | 'Unknown';
  reason: 'RulesInEffect' | 'NothingToRewrite' | 'RulesPending' | 'RulesNotInEffect' | 'RulesNotWritten' | 'NoCoreDNSServer';
  message: string;
}

export const CONDITION_IN_CLUSTER_DNS = 'InClusterDNS';
/** Names listed in a message; the rest are counted. */
const SHOWN = 10;

function list(items: readonly string[]): string {
  return items.slice(0, SHOWN).join('; ') + (items.length > SHOWN ? `; and ${items.length - SHOWN} more` : '');
}

/** The causes resolving alone cannot tell apart (docs/dns.md §3 #6–#8, §2), narrowed by the Corefile when read. */
function notInEffectCauses(corefile: DnsConditionInput['corefile'], configMap: string): string {
  const mount = `the ConfigMap ${configMap} not mounted into the CoreDNS Deployment at ${RULES_MOUNT_DIR} (kubectl -n kube-system get deploy coredns -o jsonpath='{.spec.template.spec.volumes}')`;
  const reload = 'CoreDNS not reloading: a Corefile edit that does not parse or start keeps the last configuration serving (look for "plugin/reload" warnings and errors in the CoreDNS logs and at coredns_reload_failed_total); fix the Corefile, loopguard never edits it';
  const nodeLocal = 'NodeLocal DNSCache answering names outside the cluster domain without CoreDNS (kubectl -n kube-system get cm node-local-dns -o yaml)';
  if (!corefile) return `Possible causes: the Corefile (kube-system/coredns) lacks the line "${IMPORT_LINE}" in the block that serves these names; ${mount}; ${reload}; ${nodeLocal}. docs/dns.md has the one-time patch.`;
  if (!corefile.importsRules) return `The Corefile (kube-system/coredns) has no line "${IMPORT_LINE}": add it to the block that serves these names (docs/dns.md has the one-time patch; a reset of the Corefile by the add-on removes it).`;
  // Measured (docs/dns.md §3 #7): CoreDNS refuses such a Corefile and keeps its last configuration; a block left open
  // to the end of the file may instead be read as running to the end, changing what the block does.
  if (!corefile.bracesBalance) return `The Corefile (kube-system/coredns) has a block that is not closed (its braces do not balance): CoreDNS refuses such a Corefile and keeps serving its last configuration, ignoring the rules (it logs "plugin/reload: Corefile parse failed"), or reads a block left open to the end of the file otherwise than written. Fix the Corefile (someone else's edit; loopguard never edits it).`;
  return `The Corefile imports the rules, so the cause is one of: ${mount}; ${reload}; ${nodeLocal}.`;
}

/** The policy's `InClusterDNS` condition. */
export function dnsCondition(i: DnsConditionInput): DnsCondition {
  const left = i.notWritten.map((n) => `${n.host ? `${n.host} (${n.target})` : n.target}: ${n.reason}`);
  const leftText = left.length > 0 ? ` Not rewritten: ${list(left)}.` : '';
  if (i.writeProblem) {
    return { status: 'False', reason: 'RulesNotWritten', message: `The rules could not be written to the ConfigMap ${i.configMap}: ${i.writeProblem}. The Helm chart and config/default create it empty; loopguard may only get and update it.${leftText}` };
  }
  // Not a wait: nothing changes it but the administrator (the caller checks again at its long interval).
  if (i.servers.length === 0) {
    return { status: 'False', reason: 'NoCoreDNSServer', message: `No CoreDNS server is known to check the rules through (set --coredns-servers, or the kube-system/kube-dns Service cannot be read or has no ClusterIP), so no rule is written: one that cannot be checked could break its host.${leftText}` };
  }
  if (i.rules.length === 0) {
    return { status: 'True', reason: 'NothingToRewrite', message: `No host name of this policy's targets needs a CoreDNS rewrite now.${leftText}` };
  }
  const off = i.rules.filter((r) => !r.answers || !ruleInEffect(r.answers));
  const mapped = (r: { host: string; serviceName: string }) => `${r.host} → ${r.serviceName}`;
  if (off.length === 0) {
    return { status: 'True', reason: 'RulesInEffect', message: `CoreDNS (${i.servers.join(', ')}) answers ${i.rules.length} host name(s) with their Service's ClusterIP: ${list(i.rules.map(mapped))}.${leftText}` };
  }
  // No running count in the message: the status is written only when the condition changes.
  if (i.now - i.writtenAt < i.waitMs) {
    return { status: 'Unknown', reason: 'RulesPending', message: `Waiting up to ${Math.round(i.waitMs / 1000)} s from ${new Date(i.writtenAt).toISOString()} for CoreDNS to apply the rules (its reload interval and the kubelet's ConfigMap propagation): ${list(off.map(mapped))}.${leftText}` };
  }
  const seen = (r: (typeof off)[number]) => {
    const a = r.answers?.find((x) => !ruleInEffect([x]));
    // Sorted: a server that rotates its answers must not make a new message (and a new status write) each check.
    const got = a ? (a.error ? `error ${a.error}` : a.host.length > 0 ? [...a.host].sort().join(', ') : 'no address') : 'not checked';
    return `${r.host} (${a?.server ?? 'CoreDNS'} answered ${got}, not ${[...(a?.service ?? [])].sort().join(', ') || 'the ClusterIP'})`;
  };
  return {
    status: 'False',
    reason: 'RulesNotInEffect',
    message: `${off.length} of ${i.rules.length} rule(s) are not in effect more than ${Math.round(i.waitMs / 1000)} s after they were written: ${list(off.map(seen))}. ${notInEffectCauses(i.corefile, i.configMap)}${leftText}`,
  };
}
