// Which host names `l7.inClusterDNS: Managed` asks CoreDNS to rewrite (docs/dns.md §4): only targets in Enforce whose
// loopback no annotation fixes, only the Service that is the target's own, only where the name is the target's.
import { describe, expect, it } from '@jest/globals';
import { chooseDnsNames as chooseNames, dnsNameOwned, needsDnsRewrite, type DnsCandidate, type DnsLeftOut, type DnsTargetOutcome } from '../../../src/model/dns-names.js';
import type { GatewayFacts, IngressFacts, ServiceFacts } from '../../../src/model/facts.js';
import type { RootCauseId } from '../../../src/model/root-causes.js';

const VIP = '10.0.0.10';

/** The names chosen, split into those to rewrite and those left out (each in target order). */
function chooseDnsNames(...args: Parameters<typeof chooseNames>): { candidates: DnsCandidate[]; leftOut: DnsLeftOut[] } {
  const names = chooseNames(...args);
  return { candidates: names.filter((n): n is DnsCandidate => !('reason' in n)), leftOut: names.filter((n): n is DnsLeftOut => 'reason' in n) };
}

function ingress(extra: Partial<IngressFacts> = {}): IngressFacts {
  return { kind: 'Ingress', namespace: 'shop', name: 'web', tls: false, rules: [{ host: 'shop.example.com', paths: ['/', '/api'], services: ['web', 'web'], servicePorts: [80, 80] }], loadBalancerIps: [VIP], ...extra };
}

function service(name: string, port = 80, protocol: 'TCP' | 'UDP' = 'TCP', namespace = 'shop'): ServiceFacts {
  return { kind: 'Service', namespace, name, type: 'ClusterIP', ports: [{ port, protocol }] };
}

function gateway(extra: Partial<GatewayFacts> = {}): GatewayFacts {
  return {
    kind: 'Gateway',
    namespace: 'shop',
    name: 'gw',
    className: 'eg',
    service: { state: 'Own', facts: { ...service('envoy-shop-gw-1', 443, 'TCP', 'envoy-gateway-system'), type: 'LoadBalancer' } },
    hostnames: ['shop.example.com', 'api.example.com'],
    loadBalancerIps: [VIP],
    ...extra,
  };
}

const outcome = (facts: DnsTargetOutcome['facts'], rootCause: RootCauseId, extra: Partial<DnsTargetOutcome> = {}): DnsTargetOutcome => ({ facts, verdict: 'AtRisk', rootCause, plan: [], enforcing: true, ...extra });

const services = new Map([
  ['shop/web', { ...service('web'), ports: [{ name: 'http', port: 80, protocol: 'TCP' as const }, { name: 'admin', port: 9090, protocol: 'TCP' as const }] }],
  ['shop/web8080', service('web8080', 8080)],
  ['shop/dnsonly', service('dnsonly', 80, 'UDP')],
  ['shop/headless', { ...service('headless'), headless: true as const }],
  ['shop/alias', { ...service('alias'), type: 'ExternalName' }],
]);
const lookup = (ns: string, name: string) => services.get(`${ns}/${name}`);

describe('needsDnsRewrite', () => {
  // [case, outcome, expected]
  const cases: [string, DnsTargetOutcome, boolean][] = [
    ['Ingress without the keepalive ticket, in Enforce', outcome(ingress(), 'KeepaliveCapabilityMissing'), true],
    ['… even with the blocked keepalive step in its plan', outcome(ingress(), 'KeepaliveCapabilityMissing', { plan: ['enable keepalive'] }), true],
    ['… but not in Audit', outcome(ingress(), 'KeepaliveCapabilityMissing', { enforcing: false }), false],
    ['… nor once Mitigated', outcome(ingress(), 'KeepaliveCapabilityMissing', { verdict: 'Mitigated' }), false],
    ['Gateway with DirectAccessSameNode, nothing left to do', outcome(gateway(), 'DirectAccessSameNode'), true],
    ['Gateway with DirectAccessSameNode while a step may still fix it', outcome(gateway(), 'DirectAccessSameNode', { plan: ['set prevent-loopback'] }), false],
    ['Gateway with ipMode Proxy', outcome(gateway(), 'IpModeProxy'), true],
    ['Ingress with plain L7Loopback: keepalive fixes it', outcome(ingress(), 'L7Loopback'), false],
    ['Gateway with VipHealthCheckDropped: an annotation fixes it', outcome(gateway(), 'VipHealthCheckDropped'), false],
    ['a Service: no host name to rewrite', outcome({ ...service('web'), type: 'LoadBalancer' }, 'IpModeProxy'), false],
    ['a Gateway with KeepaliveCapabilityMissing (an Ingress cause only)', outcome(gateway(), 'KeepaliveCapabilityMissing'), false],
  ];
  it.each(cases)('%s', (_, o, expected) => {
    expect(needsDnsRewrite(o)).toBe(expected);
  });
});

describe('chooseDnsNames', () => {
  it('an Ingress host whose every path goes to one Service serving TCP 80: that Service, with the VIP to check', () => {
    expect(chooseDnsNames([outcome(ingress(), 'KeepaliveCapabilityMissing')], lookup)).toEqual({
      candidates: [{ target: 'Ingress shop/web', ref: { kind: 'Ingress', namespace: 'shop', name: 'web' }, host: 'shop.example.com', namespace: 'shop', service: 'web', vips: [VIP] }],
      leftOut: [],
    });
  });

  it('a host over two rules of one Ingress is one host, both rules counted', () => {
    const ing = ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['web'], servicePorts: [80] }, { host: 'shop.example.com', paths: ['/b'], services: ['web'], servicePorts: [80] }, { paths: ['/'], services: ['web'], servicePorts: [80] }] });
    expect(chooseDnsNames([outcome(ing, 'KeepaliveCapabilityMissing')], lookup).candidates.map((c) => c.host)).toEqual(['shop.example.com']);
  });

  it("a path's backend port by the name the Service maps to 80 counts as port 80", () => {
    const ing = ingress({ rules: [{ host: 'shop.example.com', paths: ['/', '/b'], services: ['web', 'web'], servicePorts: ['http', 80] }] });
    expect(chooseDnsNames([outcome(ing, 'KeepaliveCapabilityMissing')], lookup).candidates.map((c) => c.service)).toEqual(['web']);
  });

  // [case, Ingress, the reason left out]
  const leftOut: [string, IngressFacts, string][] = [
    ['paths to two Services', ingress({ rules: [{ host: 'shop.example.com', paths: ['/', '/api'], services: ['web', 'api'], servicePorts: [80, 80] }] }), 'its paths go to several Services (api, web)'],
    ['a path to a resource backend', ingress({ rules: [{ host: 'shop.example.com', paths: ['/', '/static'], services: ['web'], servicePorts: [80] }] }), 'a backend that is not a Service'],
    ['a host without paths', ingress({ rules: [{ host: 'shop.example.com', paths: [] }] }), 'the host has no paths'],
    ['TLS: it ends on the CLB', ingress({ tls: true }), 'the Ingress has TLS, which ends on the CLB'],
    ['a Service that does not exist', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['gone'], servicePorts: [80] }] }), 'its Service shop/gone does not exist'],
    ['a Service without port 80', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['web8080'], servicePorts: [80] }] }), 'does not serve TCP port 80'],
    ['a Service with port 80 over UDP only', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['dnsonly'], servicePorts: [80] }] }), 'does not serve TCP port 80'],
    ['a path to port 8080 of the Service', ingress({ rules: [{ host: 'shop.example.com', paths: ['/', '/x'], services: ['web', 'web'], servicePorts: [80, 8080] }] }), 'its paths go to port 8080 of its Service shop/web, not port 80'],
    ['a path to a port name the Service maps to 9090', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['web'], servicePorts: ['admin'] }] }), 'its paths go to port admin of its Service shop/web, not port 80'],
    ['a path to a port name the Service lacks', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['web'], servicePorts: ['nope'] }] }), 'its paths go to port nope'],
    ['a headless Service', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['headless'], servicePorts: [80] }] }), 'its Service shop/headless is headless (clusterIP: None)'],
    ['an ExternalName Service', ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['alias'], servicePorts: [80] }] }), 'its Service shop/alias is of type ExternalName'],
  ];
  it.each(leftOut)('leaves out an Ingress host with %s, saying why', (_, ing, reason) => {
    const choice = chooseDnsNames([outcome(ing, 'KeepaliveCapabilityMissing')], lookup);
    expect(choice.candidates).toEqual([]);
    expect(choice.leftOut).toEqual([{ target: 'Ingress shop/web', ref: { kind: 'Ingress', namespace: 'shop', name: 'web' }, host: 'shop.example.com', reason: expect.stringContaining(reason) }]);
  });

  it('leaves out a target without a VIP (its name cannot be checked)', () => {
    const choice = chooseDnsNames([outcome(ingress({ loadBalancerIps: [] }), 'KeepaliveCapabilityMissing'), outcome(gateway({ loadBalancerIps: undefined }), 'IpModeProxy')], lookup);
    expect(choice).toEqual({ candidates: [], leftOut: [expect.objectContaining({ target: 'Ingress shop/web', reason: expect.stringContaining('no CLB VIP') }), expect.objectContaining({ target: 'Gateway shop/gw', reason: expect.stringContaining('no CLB VIP') })] });
  });

  it("a Gateway's listener hostnames go to the Service Envoy Gateway generated for it, in EG's namespace", () => {
    const choice = chooseDnsNames([outcome(gateway(), 'DirectAccessSameNode')], lookup);
    expect(choice.leftOut).toEqual([]);
    expect(choice.candidates.map((c) => [c.host, `${c.namespace}/${c.service}`, c.vips])).toEqual([
      ['shop.example.com', 'envoy-gateway-system/envoy-shop-gw-1', [VIP]],
      ['api.example.com', 'envoy-gateway-system/envoy-shop-gw-1', [VIP]],
    ]);
  });

  it('a Gateway without its one Service, or without hostnames, is left out with the reason', () => {
    const none = gateway({ service: { state: 'None', controllerNamespace: 'envoy-gateway-system' } });
    const bare = gateway({ name: 'bare', hostnames: undefined });
    expect(chooseDnsNames([outcome(none, 'IpModeProxy'), outcome(bare, 'IpModeProxy')], lookup)).toEqual({
      candidates: [],
      leftOut: [
        { target: 'Gateway shop/gw', ref: { kind: 'Gateway', namespace: 'shop', name: 'gw' }, reason: 'Envoy Gateway has not generated one Service for it' },
        { target: 'Gateway shop/bare', ref: { kind: 'Gateway', namespace: 'shop', name: 'bare' }, reason: 'no listener names a hostname' },
      ],
    });
  });

  // [case, target, the reason left out]: a CLB the user brought may serve other teams' names on the same VIP.
  const sharedClb: [string, IngressFacts | GatewayFacts, string][] = [
    ['an Ingress on an existing CLB', ingress({ annotations: { 'kubernetes.io/ingress.existLbId': 'lb-shared' } }), 'the Ingress has kubernetes.io/ingress.existLbId'],
    ['… even with an empty id', ingress({ annotations: { 'kubernetes.io/ingress.existLbId': '' } }), 'kubernetes.io/ingress.existLbId'],
    [
      "a Gateway whose generated Service is on an existing CLB",
      gateway({ service: { state: 'Own', facts: { ...service('envoy-shop-gw-1', 443, 'TCP', 'envoy-gateway-system'), type: 'LoadBalancer', annotations: { 'service.kubernetes.io/tke-existed-lbid': 'lb-shared' } } } }),
      'its Service envoy-gateway-system/envoy-shop-gw-1 has service.kubernetes.io/tke-existed-lbid',
    ],
    [
      "a Gateway whose EnvoyProxy (the user's) asks for an existing CLB, before EG copied it",
      gateway({ envoyProxy: { level: 'Gateway', namespace: 'shop', name: 'mine', state: 'Found', annotations: { 'service.kubernetes.io/tke-existed-lbid': 'lb-shared' } } }),
      'its EnvoyProxy shop/mine has service.kubernetes.io/tke-existed-lbid',
    ],
  ];
  it.each(sharedClb)('leaves out %s, saying why', (_, facts, reason) => {
    const choice = chooseDnsNames([outcome(facts, facts.kind === 'Ingress' ? 'KeepaliveCapabilityMissing' : 'IpModeProxy')], lookup);
    expect(choice.candidates).toEqual([]);
    expect(choice.leftOut).toEqual([{ target: `${facts.kind} shop/${facts.name}`, ref: { kind: facts.kind, namespace: 'shop', name: facts.name }, reason: expect.stringContaining(reason) }]);
  });

  it('an Ingress or Gateway with other annotations, on a CLB TKE created for it, still asks', () => {
    const ing = ingress({ annotations: { 'kubernetes.io/ingress.subnetId': 'subnet-1' } });
    const gw = gateway({ envoyProxy: { level: 'Gateway', namespace: 'shop', name: 'mine', state: 'Found', annotations: { 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid': 'subnet-1' } } });
    expect(chooseDnsNames([outcome(ing, 'KeepaliveCapabilityMissing'), outcome(gw, 'IpModeProxy')], lookup).candidates).toHaveLength(3);
  });

  it('asks nothing for targets that do not need it (Audit, a fixable cause), and does not list them', () => {
    expect(chooseDnsNames([outcome(ingress(), 'KeepaliveCapabilityMissing', { enforcing: false }), outcome(gateway(), 'VipHealthCheckDropped')], lookup)).toEqual({ candidates: [], leftOut: [] });
  });
});

describe('dnsNameOwned', () => {
  const cases: [string, string[], string[], boolean][] = [
    ["the upstream answers the target's VIP", [VIP], [VIP], true],
    ['… one of its VIPs', [VIP], ['10.0.0.9', VIP], true],
    ['another address: someone else\'s name', ['10.9.9.9'], [VIP], false],
    ['the VIP and another address', [VIP, '10.9.9.9'], [VIP], false],
    ['no answer (NXDOMAIN: nobody outside the cluster calls it so)', [], [VIP], false],
  ];
  it.each(cases)('%s', (_, answer, vips, owned) => {
    expect(dnsNameOwned(answer, vips)).toBe(owned);
  });
});
