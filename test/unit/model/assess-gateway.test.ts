// A Gateway is diagnosed through the Service Envoy Gateway generated for it (docs/gateways.md §2, §5): the Service's
// gates and L4 rules with the Gateway's own opt-out first, the CLB's owner checked against the Service (TKE made the
// CLB for it); a plan only through the EnvoyProxy in force for it (§4: its own, else its class's; who else it reaches is
// the plan's rule, plan/shared-config.ts), and a Service EG generated is never a target of its own.
import { describe, expect, it } from '@jest/globals';
import { assessTarget } from '../../../src/model/assessment.js';
import type { GatewayFacts, GeneratedService, ServiceFacts } from '../../../src/model/facts.js';
import { ROOT_CAUSES } from '../../../src/model/root-causes.js';
import { gatewayFacts, serviceFacts } from '../../../src/model/target-facts.js';
import { clb, context, l4Listener, service, short } from './fixtures.js';

const EG_NS = 'envoy-gateway-system';
const SVC_UID = 'uid-generated-svc';
const egLabels = { 'app.kubernetes.io/managed-by': 'envoy-gateway', 'gateway.envoyproxy.io/owning-gateway-name': 'web', 'gateway.envoyproxy.io/owning-gateway-namespace': 'shop' };
/** EG's Service for Gateway shop/web, IPVS-exposed with ETP Local (at risk), its CLB lb-abc. */
const generated = (extra: Partial<ServiceFacts> = {}, annotations: Record<string, string> = {}): ServiceFacts =>
  service({ namespace: EG_NS, name: 'envoy-shop-web-1a2b3c4d', uid: SVC_UID, labels: egLabels, externalTrafficPolicy: 'Local', generatedFor: 'Gateway shop/web', ...extra }, annotations);

function gateway(svc: GeneratedService, annotations?: Record<string, string>, envoyProxy?: GatewayFacts['envoyProxy']): GatewayFacts {
  const facts = 'facts' in svc ? svc.facts : undefined;
  return {
    kind: 'Gateway',
    namespace: 'shop',
    name: 'web',
    uid: 'uid-gateway',
    className: 'eg',
    service: svc,
    ...(annotations ? { annotations } : {}),
    ...(envoyProxy ? { envoyProxy } : {}),
    ...(facts?.annotations?.['service.kubernetes.io/loadbalance-id'] ? { loadBalancerId: facts.annotations['service.kubernetes.io/loadbalance-id'] } : {}),
  };
}

/** TKE's owner tag on the CLB: the generated Service's uid. */
const ownClb = (sourceIpType: 0 | 1 = 0) => clb({ tags: { 'tke-lb-serviceuuid': SVC_UID }, listeners: [l4Listener('lbl-tcp', 'TCP', 80, sourceIpType)] });

describe('assessGateway', () => {
  const own = { level: 'Gateway' as const, namespace: 'shop', name: 'web-proxy', state: 'Found' as const, annotations: {} };
  const ofClass = { level: 'Class' as const, namespace: EG_NS, name: 'tke', state: 'Found' as const, annotations: {} };
  const rows: { name: string; gateway: GatewayFacts; clb?: ReturnType<typeof clb>; verdict: string; rootCause: string; message?: RegExp; changes?: string[] }[] = [
    { name: 'its own loopguard.dev/skip', gateway: gateway({ state: 'Own', facts: generated() }, { 'loopguard.dev/skip': 'true' }), verdict: 'Skipped', rootCause: 'SkipAnnotation' },
    { name: 'no Service from EG yet', gateway: gateway({ state: 'None', controllerNamespace: EG_NS }), verdict: 'Pending', rootCause: 'GatewayServiceMissing', message: /class eg.*envoy-gateway-system or this namespace/ },
    {
      name: 'two candidate Services',
      gateway: gateway({ state: 'Ambiguous', names: [`${EG_NS}/a`, 'shop/b'] }),
      verdict: 'Conflict',
      rootCause: 'GatewayServiceAmbiguous',
      message: /envoy-gateway-system\/a, shop\/b.*changes nothing/,
    },
    {
      name: 'at risk, no EnvoyProxy in force (EG defaults): said, not planned',
      gateway: gateway({ state: 'Own', facts: generated() }),
      clb: ownClb(),
      verdict: 'AtRisk',
      rootCause: 'PodSourceNotMasqueraded',
      message: /^Service envoy-gateway-system\/envoy-shop-web-1a2b3c4d: .*neither the Gateway nor its class names an EnvoyProxy/,
    },
    {
      name: "at risk, its class's EnvoyProxy: planned as a Service",
      gateway: gateway({ state: 'Own', facts: generated() }, undefined, ofClass),
      clb: ownClb(),
      verdict: 'AtRisk',
      rootCause: 'PodSourceNotMasqueraded',
      changes: ['src:lbl-tcp:0->1', 'annotate'],
    },
    {
      name: 'at risk, its own EnvoyProxy: planned as a Service',
      gateway: gateway({ state: 'Own', facts: generated() }, undefined, own),
      clb: ownClb(),
      verdict: 'AtRisk',
      rootCause: 'PodSourceNotMasqueraded',
      changes: ['src:lbl-tcp:0->1', 'annotate'],
    },
    {
      name: 'its EnvoyProxy missing',
      gateway: gateway({ state: 'Own', facts: generated() }, undefined, { level: 'Gateway', namespace: 'shop', name: 'web-proxy', state: 'Missing' }),
      clb: ownClb(),
      verdict: 'AtRisk',
      rootCause: 'PodSourceNotMasqueraded',
      message: /EnvoyProxy shop\/web-proxy \(the Gateway's own\) does not exist/,
    },
    {
      name: 'mergeGateways: the class Service, named as shared, not planned even with an EnvoyProxy',
      gateway: gateway({ state: 'Merged', facts: generated({ name: 'envoy-eg-5e6f7a8b' }) }, undefined, own),
      clb: ownClb(),
      verdict: 'AtRisk',
      rootCause: 'PodSourceNotMasqueraded',
      message: /^Service envoy-gateway-system\/envoy-eg-5e6f7a8b \(shared by every Gateway of class eg\): /,
    },
    {
      name: 'mitigated by hand (prevent-loopback from the EnvoyProxy, sources on 100.64)',
      gateway: gateway({ state: 'Own', facts: generated({}, { 'service.cloud.tencent.com/prevent-loopback': 'true' }) }),
      clb: ownClb(1),
      verdict: 'Mitigated',
      rootCause: 'LoopbackPrevented',
    },
    {
      name: "a CLB whose owner tag names the Gateway, not EG's Service, is foreign",
      gateway: gateway({ state: 'Own', facts: generated() }),
      clb: clb({ tags: { 'tke-lb-serviceuuid': 'uid-gateway' } }),
      verdict: 'Conflict',
      rootCause: 'ForeignClb',
    },
    { name: 'ETP Cluster: masqueraded', gateway: gateway({ state: 'Own', facts: generated({ externalTrafficPolicy: 'Cluster' }) }), clb: ownClb(), verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp' },
  ];

  it.each(rows)('$name', (row) => {
    const a = assessTarget(row.gateway, context({ clb: row.clb ?? ownClb() }));
    expect({ verdict: a.verdict, rootCause: a.rootCause.id }).toEqual({ verdict: row.verdict, rootCause: row.rootCause });
    expect(ROOT_CAUSES[a.rootCause.id].verdict).toBe(a.verdict);
    expect(a.target).toEqual({ kind: 'Gateway', namespace: 'shop', name: 'web' });
    // A plan only through the Gateway's own EnvoyProxy.
    expect(a.changes.map(short)).toEqual(row.changes ?? []);
    if (!row.changes) expect(a.desired).toBeUndefined();
    if (row.message) expect(a.rootCause.message).toMatch(row.message);
  });

  it('the Service EG generated, selected as a Service, is skipped in favour of its Gateway', () => {
    const a = assessTarget(generated(), context({ clb: ownClb() }));
    expect({ verdict: a.verdict, rootCause: a.rootCause.id, changes: a.changes }).toEqual({ verdict: 'Skipped', rootCause: 'EnvoyGatewayService', changes: [] });
    expect(a.rootCause.message).toBe(
      'generated by Envoy Gateway for Gateway shop/web: loopguard never changes a Service Envoy Gateway owns; select the Gateway instead (spec.targets: [Gateway])',
    );
  });
});

describe('gatewayFacts', () => {
  const svc = (namespace: string, name: string, labels: Record<string, string>) => ({
    metadata: { namespace, name, uid: `uid-${name}`, labels, annotations: { 'service.kubernetes.io/loadbalance-id': `lb-${name}` } },
    spec: { type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP' }] },
    status: { loadBalancer: { ingress: [{ ip: '10.0.0.7' }] } },
  });
  const gw = { metadata: { namespace: 'shop', name: 'web', uid: 'uid-gw', labels: { app: 'web' } }, spec: { gatewayClassName: 'eg' } };

  it("takes the Gateway's identity and its Service's CLB", () => {
    const facts = gatewayFacts(gw, [serviceFacts(svc(EG_NS, 'envoy-shop-web-1', egLabels))]);
    expect({ ...facts, service: facts.service.state }).toEqual({
      kind: 'Gateway',
      namespace: 'shop',
      name: 'web',
      uid: 'uid-gw',
      labels: { app: 'web' },
      className: 'eg',
      service: 'Own',
      loadBalancerId: 'lb-envoy-shop-web-1',
      loadBalancerIps: ['10.0.0.7'],
    });
    expect('facts' in facts.service && facts.service.facts.generatedFor).toBe('Gateway shop/web');
  });

  it('names every candidate when there are several, and has no CLB then', () => {
    const facts = gatewayFacts(gw, [serviceFacts(svc(EG_NS, 'a', egLabels)), serviceFacts(svc('shop', 'b', egLabels))]);
    expect(facts.service).toEqual({ state: 'Ambiguous', names: [`${EG_NS}/a`, 'shop/b'] });
    expect(facts.loadBalancerId).toBeUndefined();
  });

  it('a Service is generated only with managed-by envoy-gateway and an owner label', () => {
    expect(serviceFacts(svc('shop', 'x', { 'gateway.envoyproxy.io/owning-gateway-name': 'web', 'gateway.envoyproxy.io/owning-gateway-namespace': 'shop' })).generatedFor).toBeUndefined();
    expect(serviceFacts(svc(EG_NS, 'x', { 'app.kubernetes.io/managed-by': 'envoy-gateway' })).generatedFor).toBeUndefined();
    expect(serviceFacts(svc(EG_NS, 'x', { 'app.kubernetes.io/managed-by': 'envoy-gateway', 'gateway.envoyproxy.io/owning-gatewayclass': 'eg' })).generatedFor).toBe('GatewayClass eg');
  });
});
