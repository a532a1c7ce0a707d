// Whether loopguard's CoreDNS rules are in effect, from CoreDNS's answers, and what the policy's InClusterDNS
// condition says (docs/dns.md §3, §4): in effect only when every server answers the host by its Service; pending
// within the wait; past it, not in effect with the causes the Corefile narrows down; never papering over a broken one.
import { describe, expect, it } from '@jest/globals';
import { dnsCondition, IMPORT_LINE, readCorefile, ruleInEffect, ruleReverted, serviceNameProblem, type DnsConditionInput, type DnsRuleAnswer, type NameAnswer } from '../../../src/model/dns-check.js';

const CLUSTER_IP = '10.96.0.20';
const VIP = '10.0.0.10';
const a = (server: string, host: string[], service: string[] = [CLUSTER_IP], error?: string): DnsRuleAnswer => ({ server, host, service, ...(error ? { error } : {}) });

describe('ruleInEffect / ruleReverted', () => {
  // [case, answers, in effect, reverted]
  const cases: [string, DnsRuleAnswer[], boolean, boolean][] = [
    ['every server answers the ClusterIP', [a('s1', [CLUSTER_IP]), a('s2', [CLUSTER_IP])], true, false],
    ['one replica has not reloaded yet', [a('s1', [CLUSTER_IP]), a('s2', [VIP])], false, false],
    ['the VIP everywhere (no rule, or lost import line)', [a('s1', [VIP])], false, true],
    ['a server failed to answer', [a('s1', [], [], 'ETIMEOUT')], false, false],
    ['the Service is gone (its name answers nothing)', [a('s1', [VIP], [])], false, true],
    ['no server at all', [], false, true],
  ];
  it.each(cases)('%s', (_, answers, inEffect, reverted) => {
    expect({ inEffect: ruleInEffect(answers), reverted: ruleReverted(answers) }).toEqual({ inEffect, reverted });
  });
});

describe('serviceNameProblem', () => {
  const SVC = 'web.shop.svc.cluster.local';
  const n = (server: string, addresses: string[], error?: string): NameAnswer => ({ server, addresses, ...(error ? { error } : {}) });
  // [case, answers, the reason (undefined: written)]
  const cases: [string, NameAnswer[], string | undefined][] = [
    ['every server answers the ClusterIP', [n('s1', [CLUSTER_IP]), n('s2', [CLUSTER_IP])], undefined],
    ['one server timed out, another answered', [n('s1', [], 'ETIMEOUT'), n('s2', [CLUSTER_IP])], undefined],
    ['NXDOMAIN (a wrong --cluster-domain)', [n('s1', [])], `not written: the Service name ${SVC} does not resolve through CoreDNS (s1 answered no address; check --cluster-domain`],
    ['one server answers, another has no address', [n('s1', [CLUSTER_IP]), n('s2', [])], 'not written: the Service name web.shop.svc.cluster.local does not resolve through CoreDNS (s2 answered'],
    ['no server answered', [n('s1', [], 'ETIMEOUT')], `not written: CoreDNS did not answer for the Service name ${SVC} (s1: ETIMEOUT)`],
    ['no server known', [], `not written: no CoreDNS server is known to check that the Service name ${SVC} resolves`],
  ];
  it.each(cases)('%s', (_, answers, reason) => {
    const problem = serviceNameProblem(SVC, answers);
    if (reason === undefined) expect(problem).toBeUndefined();
    else expect(problem).toContain(reason);
  });
});

describe('readCorefile', () => {
  const tke = (extra: string) => `.:53 {\n    errors\n    kubernetes cluster.local. in-addr.arpa ip6.arpa {\n        pods insecure\n    }\n    forward . /etc/resolv.conf\n    reload\n${extra}}\n`;
  const cases: [string, string, { importsRules: boolean; bracesBalance: boolean }][] = [
    ["TKE's default: no import line", tke(''), { importsRules: false, bracesBalance: true }],
    ['with the import line', tke(`    ${IMPORT_LINE}\n`), { importsRules: true, bracesBalance: true }],
    ['the import line commented out', tke(`    # ${IMPORT_LINE}\n`), { importsRules: false, bracesBalance: true }],
    ['an import of something else', tke('    import /etc/coredns/custom/*.server\n'), { importsRules: false, bracesBalance: true }],
    ['the same glob under another mount path', tke('    import loopguard/*.rules\n'), { importsRules: true, bracesBalance: true }],
    ['an unclosed block (someone\'s edit)', tke(`    ${IMPORT_LINE}\n    hosts {\n`), { importsRules: true, bracesBalance: false }],
    ['a stray closing brace', `${tke(`    ${IMPORT_LINE}\n`)}}\n`, { importsRules: true, bracesBalance: false }],
    ['a block closed before it opens (as many of each)', `${tke(`    ${IMPORT_LINE}\n`)}}\n{\n`, { importsRules: true, bracesBalance: false }],
  ];
  it.each(cases)('%s', (_, text, findings) => {
    expect(readCorefile(text)).toEqual(findings);
  });
});

describe('dnsCondition', () => {
  const base: DnsConditionInput = {
    rules: [{ host: 'shop.example.com', serviceName: 'web.shop.svc.cluster.local', answers: [a('10.96.0.10:53', [CLUSTER_IP])] }],
    notWritten: [],
    servers: ['10.96.0.10:53'],
    writtenAt: 1_000,
    waitMs: 150_000,
    now: 5_000,
    configMap: 'kube-system/loopguard-coredns-rules',
  };
  const off = { ...base, rules: [{ ...base.rules[0]!, answers: [a('10.96.0.10:53', [VIP])] }] };

  it('True when every name answers by its Service, naming them', () => {
    expect(dnsCondition(base)).toEqual({ status: 'True', reason: 'RulesInEffect', message: expect.stringContaining('shop.example.com → web.shop.svc.cluster.local') });
  });

  it('Unknown while CoreDNS may still be reloading, with how long it may take from when (no running count: the status is written only on a change)', () => {
    expect(dnsCondition(off)).toEqual({ status: 'Unknown', reason: 'RulesPending', message: expect.stringContaining('Waiting up to 150 s from 1970-01-01T00:00:01.000Z') });
    expect(dnsCondition({ ...off, now: 100_000 })).toEqual(dnsCondition(off));
  });

  it('False past the wait: the import line missing, confirmed from the Corefile', () => {
    const c = dnsCondition({ ...off, now: 200_000, corefile: { importsRules: false, bracesBalance: true } });
    expect(c.status).toBe('False');
    expect(c.reason).toBe('RulesNotInEffect');
    expect(c.message).toContain(`shop.example.com (10.96.0.10:53 answered ${VIP}, not ${CLUSTER_IP})`);
    expect(c.message).toContain(`has no line "${IMPORT_LINE}"`);
  });

  it("False past the wait: someone's Corefile edit that does not parse is reported, not papered over", () => {
    const c = dnsCondition({ ...off, now: 200_000, corefile: { importsRules: true, bracesBalance: false } });
    expect(c.message).toContain('has a block that is not closed (its braces do not balance)');
    expect(c.message).toContain('loopguard never edits it');
  });

  it('False past the wait with the import line there: reload, mount and NodeLocal DNSCache named; without the Corefile, all causes', () => {
    expect(dnsCondition({ ...off, now: 200_000, corefile: { importsRules: true, bracesBalance: true } }).message).toMatch(/not mounted.*coredns_reload_failed_total.*NodeLocal DNSCache/s);
    expect(dnsCondition({ ...off, now: 200_000 }).message).toMatch(/lacks the line.*not mounted.*NodeLocal DNSCache/s);
  });

  it('False when the ConfigMap cannot be written, whatever CoreDNS answers', () => {
    expect(dnsCondition({ ...base, writeProblem: 'it does not exist' })).toEqual({ status: 'False', reason: 'RulesNotWritten', message: expect.stringContaining('could not be written to the ConfigMap kube-system/loopguard-coredns-rules: it does not exist') });
  });

  it('True with nothing to rewrite, and the names left out are listed with their reasons', () => {
    const c = dnsCondition({ ...base, rules: [], notWritten: [{ target: 'Ingress shop/web', host: 'partner.example.net', reason: 'the upstream DNS answers 1.2.3.4' }] });
    expect(c).toEqual({ status: 'True', reason: 'NothingToRewrite', message: expect.stringContaining('Not rewritten: partner.example.net (Ingress shop/web): the upstream DNS answers 1.2.3.4.') });
  });

  it('False with its own reason when no CoreDNS server is known to check through (no wait ends it)', () => {
    expect(dnsCondition({ ...base, servers: [] })).toEqual({ status: 'False', reason: 'NoCoreDNSServer', message: expect.stringContaining('No CoreDNS server is known to check the rules through (set --coredns-servers') });
    expect(dnsCondition({ ...base, rules: [], servers: [] }).reason).toBe('NoCoreDNSServer');
  });

  it('lists at most ten names and counts the rest', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ target: `Ingress shop/w${i}`, host: `h${i}.example.com`, reason: 'r' }));
    expect(dnsCondition({ ...base, notWritten: many }).message).toContain('; and 2 more.');
  });
});
