// A Gateway → the Service Envoy Gateway generated for it, by EG's labels, trusted only where a namespace user cannot
// forge them (docs/gateways.md). The labels are the ones test/integration/gateways.test.ts observes on the real
// EG's Service.
import { describe, expect, it } from '@jest/globals';
import type { ServiceFacts } from '../../../src/model/facts.js';
import { gatewayServiceOf } from '../../../src/model/gateway-service.js';

const EG_NS = 'envoy-gateway-system';
const gateway = { namespace: 'shop', name: 'web', className: 'eg' };
const managed = { 'app.kubernetes.io/managed-by': 'envoy-gateway', 'app.kubernetes.io/name': 'envoy', 'app.kubernetes.io/component': 'proxy' };
const own = (namespace: string, name: string, extra: Record<string, string> = {}): ServiceFacts => ({
  kind: 'Service',
  type: 'LoadBalancer',
  ports: [],
  namespace,
  name,
  labels: { ...managed, 'gateway.envoyproxy.io/owning-gateway-name': 'web', 'gateway.envoyproxy.io/owning-gateway-namespace': 'shop', ...extra },
});
const merged = (namespace: string, name: string, className = 'eg'): ServiceFacts => ({ kind: 'Service', type: 'LoadBalancer', ports: [], namespace, name, labels: { ...managed, 'gateway.envoyproxy.io/owning-gatewayclass': className } });

describe('gatewayServiceOf', () => {
  const rows: { name: string; services: ServiceFacts[]; state: string; service?: string }[] = [
    { name: "EG's Service in its controller namespace", services: [own(EG_NS, 'envoy-shop-web-1a2b3c4d')], state: 'Own', service: 'envoy-shop-web-1a2b3c4d' },
    { name: 'Gateway Namespace Mode: in the Gateway namespace', services: [own('shop', 'web')], state: 'Own', service: 'web' },
    { name: 'mergeGateways: the class Service', services: [merged(EG_NS, 'envoy-eg-5e6f7a8b')], state: 'Merged', service: 'envoy-eg-5e6f7a8b' },
    { name: 'another class merged Service', services: [merged(EG_NS, 'envoy-other-5e6f7a8b', 'other')], state: 'None' },
    { name: 'another Gateway (same name, other namespace)', services: [own(EG_NS, 'x', { 'gateway.envoyproxy.io/owning-gateway-namespace': 'blog' })], state: 'None' },
    { name: 'another Gateway (same namespace, other name)', services: [own(EG_NS, 'x', { 'gateway.envoyproxy.io/owning-gateway-name': 'api' })], state: 'None' },
    { name: 'labels forged in a third namespace', services: [own('mallory', 'fake'), merged('mallory', 'fake2')], state: 'None' },
    { name: 'owning labels without managed-by envoy-gateway', services: [own(EG_NS, 'x', { 'app.kubernetes.io/managed-by': 'helm' })], state: 'None' },
    { name: 'no Service yet', services: [], state: 'None' },
    { name: 'two candidates', services: [own(EG_NS, 'a'), own('shop', 'b')], state: 'Ambiguous' },
    { name: 'own and merged at once', services: [own(EG_NS, 'a'), merged(EG_NS, 'b')], state: 'Ambiguous' },
    { name: 'forged one ignored beside the real one', services: [own('mallory', 'fake'), own(EG_NS, 'real')], state: 'Own', service: 'real' },
  ];
  it.each(rows)('$name → $state', ({ services, state, service }) => {
    const found = gatewayServiceOf(gateway, services, EG_NS);
    expect(found.state).toBe(state);
    expect('facts' in found ? found.facts.name : undefined).toBe(service);
  });

  it('names every candidate when ambiguous', () => {
    const found = gatewayServiceOf(gateway, [own(EG_NS, 'a'), own('shop', 'b'), own('mallory', 'c')], EG_NS);
    expect(found).toEqual({ state: 'Ambiguous', names: [`${EG_NS}/a`, 'shop/b'] });
  });
});
