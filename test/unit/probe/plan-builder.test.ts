// The operator's plan (docs/probe.md §1, §11): from each probing policy's managed targets, in a stable order.
import { describe, expect, it } from '@jest/globals';
import { buildProbePlan, privateVip, probesOf, PLAN_TIMEOUT_MS, PLAN_WINDOW_SECONDS } from '../../../src/probe/plan-builder.js';
import type { GatewayFacts, IngressFacts, ServiceFacts, TargetFacts } from '../../../src/model/facts.js';
import { parseCidr, parsePlan, PRIVATE_RANGES } from '../../../src/probe/plan.js';

const svc = (name: string, extra: Partial<ServiceFacts> = {}): ServiceFacts => ({
  kind: 'Service',
  namespace: 'shop',
  name,
  type: 'LoadBalancer',
  ports: [{ port: 80, protocol: 'TCP' }],
  loadBalancerId: `lb-${name}`,
  loadBalancerIps: ['10.0.3.17'],
  ...extra,
});
const ing = (name: string, extra: Partial<IngressFacts> = {}): IngressFacts => ({
  kind: 'Ingress',
  namespace: 'shop',
  name,
  rules: [{ host: 'www.example.com', paths: ['/'] }],
  tls: false,
  loadBalancerId: `lb-${name}`,
  loadBalancerIps: ['10.0.3.40'],
  ...extra,
});
const gw = (name: string, service: GatewayFacts['service']): GatewayFacts => ({
  kind: 'Gateway',
  namespace: 'shop',
  name,
  className: 'eg',
  service,
  ...('facts' in service ? { loadBalancerId: service.facts.loadBalancerId!, loadBalancerIps: service.facts.loadBalancerIps! } : {}),
});
const on = { enabled: true, path: '/', targets: ['Service', 'Ingress'] as ('Service' | 'Ingress')[] };

describe('probesOf: one target’s entries', () => {
  it.each<[string, TargetFacts, string, unknown[]]>([
    ['L4: each TCP port of the VIP, sorted, UDP left out', svc('cart', { ports: [{ port: 443, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }, { port: 80, protocol: 'TCP' }] }), '/', [
      { id: 'Service/shop/cart:80', vip: '10.0.3.17', port: 80, protocol: 'TCP' },
      { id: 'Service/shop/cart:443', vip: '10.0.3.17', port: 443, protocol: 'TCP' },
    ]],
    ['L4: a port named twice (TCP on two names) once', svc('cart', { ports: [{ port: 80, protocol: 'TCP', name: 'a' }, { port: 80, protocol: 'TCP', name: 'b' }] }), '/', [{ id: 'Service/shop/cart:80', vip: '10.0.3.17', port: 80, protocol: 'TCP' }]],
    ['L4: not a LoadBalancer Service: nothing', svc('cart', { type: 'ClusterIP' }), '/', []],
    ['no VIP yet: nothing', svc('cart', { loadBalancerIps: [] }), '/', []],
    ['a public VIP only: nothing', svc('cart', { loadBalancerIps: ['203.0.113.9'] }), '/', []],
    ['the private one of two addresses', svc('cart', { loadBalancerIps: ['203.0.113.9', '172.16.1.2'] }), '/', [{ id: 'Service/shop/cart:80', vip: '172.16.1.2', port: 80, protocol: 'TCP' }]],
    ['L7: HTTP on 80, each host, the policy’s path', ing('web', { rules: [{ host: 'b.example.com', paths: ['/'] }, { host: 'a.example.com', paths: ['/x'] }] }), '/healthz', [
      { id: 'Ingress/shop/web/a.example.com/healthz', vip: '10.0.3.40', port: 80, protocol: 'HTTP', host: 'a.example.com', path: '/healthz' },
      { id: 'Ingress/shop/web/b.example.com/healthz', vip: '10.0.3.40', port: 80, protocol: 'HTTP', host: 'b.example.com', path: '/healthz' },
    ]],
    ['L7 with TLS: HTTPS on 443', ing('web', { tls: true }), '/', [{ id: 'Ingress/shop/web/www.example.com/', vip: '10.0.3.40', port: 443, protocol: 'HTTPS', host: 'www.example.com', path: '/' }]],
    ['a Gateway: each TCP port of its Service, at its VIP', gw('eg', { state: 'Own', facts: svc('envoy-shop-eg', { ports: [{ port: 8080, protocol: 'TCP' }, { port: 80, protocol: 'TCP' }] }) }), '/', [
      { id: 'Gateway/shop/eg:80', vip: '10.0.3.17', port: 80, protocol: 'TCP' },
      { id: 'Gateway/shop/eg:8080', vip: '10.0.3.17', port: 8080, protocol: 'TCP' },
    ]],
    ['a Gateway without a Service: nothing', gw('eg', { state: 'None', controllerNamespace: 'envoy-gateway-system' }), '/', []],
    ['L7 without a host or with a wildcard: the VIP', ing('web', { rules: [{ paths: ['/'] }, { host: '*.example.com', paths: ['/'] }] }), '/', [{ id: 'Ingress/shop/web/10.0.3.40/', vip: '10.0.3.40', port: 80, protocol: 'HTTP', path: '/' }]],
  ])('%s', (_what, target, path, entries) => {
    expect(probesOf(target, path).map((p) => p.entry)).toEqual(entries);
  });

  it('knows private addresses as the agent does', () => {
    expect(privateVip({ loadBalancerIps: ['192.168.0.1'] })).toBe('192.168.0.1');
    expect(privateVip({ loadBalancerIps: ['100.64.0.1', '11.0.0.1'] })).toBeUndefined();
  });
});

describe('buildProbePlan', () => {
  it('takes only probing policies, the kinds probe.targets keeps, sorted by id, whatever the order given', () => {
    const a = { probe: on, targets: [svc('zeta'), ing('web'), svc('alpha')] };
    const b = { probe: { ...on, enabled: false }, targets: [svc('off')] };
    const c = { probe: { ...on, targets: ['Service' as const] }, targets: [svc('beta', { namespace: 'other' }), ing('skipped')] };
    const one = buildProbePlan([a, b, c]);
    const two = buildProbePlan([c, b, { ...a, targets: [...a.targets].reverse() }]);
    expect(one.plan.targets.map((t) => t.id)).toEqual(['Ingress/shop/web/www.example.com/', 'Service/other/beta:80', 'Service/shop/alpha:80', 'Service/shop/zeta:80']);
    expect(JSON.stringify(two.plan)).toBe(JSON.stringify(one.plan));
    expect(one.plan).toMatchObject({ version: 1, windowSeconds: PLAN_WINDOW_SECONDS, timeoutMs: PLAN_TIMEOUT_MS });
    expect(one.probes.find((p) => p.entry.id === 'Service/shop/alpha:80')).toMatchObject({ target: { kind: 'Service', namespace: 'shop', name: 'alpha' }, loadBalancerId: 'lb-alpha' });
    expect(one.dropped).toBe(0);
  });

  it('is a plan the agent accepts whole, and stops at the agent’s limit', () => {
    const many = Array.from({ length: 3001 }, (_, i) => svc(`s${String(i).padStart(4, '0')}`));
    const { plan, dropped } = buildProbePlan([{ probe: on, targets: many }]);
    expect(plan.targets).toHaveLength(3000);
    expect(dropped).toBe(1);
    const parsed = parsePlan(JSON.stringify(plan), { ranges: PRIVATE_RANGES.map((r) => parseCidr(r)!) });
    expect(parsed.ok && parsed.refused).toEqual([]);
  });

  it('shares a full plan between namespaces in turn: one namespace\'s thousands of hosts cannot push another out', () => {
    // Namespace "a" (first by name, as every Ingress id sorts before every Service id) asks for 400 × 8 = 3,200 entries.
    const hosts = Array.from({ length: 8 }, (_, h) => ({ host: `h${h}.example.com`, paths: ['/'] }));
    const crowd = Array.from({ length: 400 }, (_, i) => ing(`w${String(i).padStart(3, '0')}`, { namespace: 'a', rules: hosts }));
    const quiet = [svc('cart', { namespace: 'z' }), svc('pay', { namespace: 'z' })];
    const { plan, dropped, left } = buildProbePlan([{ probe: on, targets: crowd }, { probe: on, targets: quiet }]);
    expect(plan.targets).toHaveLength(3000);
    expect(plan.targets.filter((t) => t.id.startsWith('Service/z/')).map((t) => t.id)).toEqual(['Service/z/cart:80', 'Service/z/pay:80']);
    expect(dropped).toBe(3200 + 2 - 3000);
    // 2,998 entries of "a" are its first 374 Ingresses' 8 hosts and 6 of the next one's: 25 Ingresses get none.
    expect(left.map((t) => t.name)).toEqual(Array.from({ length: 25 }, (_, i) => `w${375 + i}`));
    expect([...plan.targets.map((t) => t.id)].sort()).toEqual(plan.targets.map((t) => t.id));
  });

  it('probes at most 8 ports or hosts of one target', () => {
    const rules = Array.from({ length: 20 }, (_, h) => ({ host: `h${String(h).padStart(2, '0')}.example.com`, paths: ['/'] }));
    const { plan } = buildProbePlan([{ probe: on, targets: [ing('web', { rules })] }]);
    expect(plan.targets.map((t) => t.host)).toEqual(Array.from({ length: 8 }, (_, h) => `h0${h}.example.com`));
  });

  it('takes the operator\'s window (--probe-window)', () => {
    expect(buildProbePlan([{ probe: on, targets: [svc('a')] }], 60).plan.windowSeconds).toBe(60);
  });

  it('no probing policy: an empty plan', () => {
    expect(buildProbePlan([{ probe: { ...on, enabled: false }, targets: [svc('a')] }]).plan.targets).toEqual([]);
  });
});
