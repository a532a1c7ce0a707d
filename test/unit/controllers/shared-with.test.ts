// The shared view the operator gathers (targets.ts sharedWith): every Service and Ingress on a target's CLB,
// whatever its namespace, with the policy that manages each; every Ingress naming a target's TkeServiceConfig; every
// Gateway, of any namespace, that a target's EnvoyProxy reaches.
import { describe, expect, it } from '@jest/globals';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { API_VERSION, KIND, type LoopbackPolicy } from '../../../src/api/loopbackpolicy.js';
import type { PolicyCaches } from '../../../src/controllers/policy/deps.js';
import { ClaimsIndex, sharedWith } from '../../../src/controllers/policy/targets.js';
import { serviceFacts } from '../../../src/model/target-facts.js';
import { ownerKey, recordFor } from '../../../src/model/record-registry.js';

const svc = (namespace: string, name: string, lb: string, annotations: Record<string, string> = {}): V1Service => ({
  metadata: { namespace, name, uid: `${namespace}-${name}`, annotations: { 'service.kubernetes.io/tke-existed-lbid': lb, 'service.kubernetes.io/loadbalance-id': lb, ...annotations } },
  spec: { type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP' }] },
});
const ing = (namespace: string, name: string, config: string, annotations: Record<string, string> = {}): V1Ingress => ({
  metadata: { namespace, name, annotations: { 'kubernetes.io/ingress.qcloud-loadbalance-id': `lb-${name}`, 'ingress.cloud.tencent.com/tke-service-config': config, ...annotations } },
  spec: { rules: [{ host: 'a.example.com' }] },
});
const policy = (namespace: string, name: string): LoopbackPolicy => ({ apiVersion: API_VERSION, kind: KIND, metadata: { namespace, name, uid: `${namespace}-${name}`, creationTimestamp: new Date(0) }, spec: { targets: ['Service', 'Ingress', 'Gateway'] } });

describe('sharedWith', () => {
  const PL = 'service.cloud.tencent.com/prevent-loopback';
  const services = [
    svc('h', 'shared', 'lb-1', { [PL]: 'true' }),
    svc('i', 'shared', 'lb-1', { 'loopguard.dev/skip': 'true', [PL]: 'true' }),
    svc('j', 'other', 'lb-1', { [PL]: 'true' }),
    svc('h', 'alone', 'lb-2'),
  ];
  // h/shared's prevent-loopback is loopguard's (its record holds the original); i/shared's record holds none; j/other's
  // record was made for an earlier object of the same name (another uid), so it says nothing about this one.
  const records = [
    recordFor({ kind: 'Service', namespace: 'h', name: 'shared', uid: 'h-shared' }, ownerKey('h', 'p'), { v: 1, annotations: { [PL]: null } }),
    recordFor({ kind: 'Service', namespace: 'i', name: 'shared', uid: 'i-shared' }, ownerKey('i', 'q'), { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } } }),
    recordFor({ kind: 'Service', namespace: 'j', name: 'other', uid: 'j-earlier' }, ownerKey('j', 'r'), { v: 1, annotations: { [PL]: null } }),
  ];
  const ingresses = [ing('h', 'front', 'cfg'), ing('h', 'back', 'cfg', { 'loopguard.dev/skip': 'true' }), ing('h', 'solo', 'own')];
  const policies = [policy('h', 'p'), policy('i', 'q')];
  // Class eg names EnvoyProxy eg/tke: Gateways h/web and i/web use it; h/api has its own (h/api-proxy), which EG may
  // merge over the class's, so the class's reaches it too; j/other is of another class.
  const gw = (namespace: string, name: string, className: string, own?: string) => ({
    metadata: { namespace, name, labels: { app: name } },
    spec: { gatewayClassName: className, ...(own ? { infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: own } } } : {}) },
  });
  const gateways = [gw('h', 'web', 'eg'), gw('h', 'api', 'eg', 'api-proxy'), gw('i', 'web', 'eg'), gw('j', 'other', 'other')];
  const caches = {
    gateways: (ns?: string) => gateways.filter((g) => ns === undefined || g.metadata.namespace === ns),
    envoyProxy: (ns: string, name: string) => (`${ns}/${name}` === 'eg/tke' || `${ns}/${name}` === 'h/api-proxy' ? { metadata: { namespace: ns, name }, spec: {} } : undefined),
    gatewayClass: (name: string) => (name === 'eg' ? { metadata: { name }, spec: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'tke', namespace: 'eg' } } } : undefined),
    services: (ns?: string) => services.filter((s) => ns === undefined || s.metadata?.namespace === ns),
    ingresses: (ns?: string) => ingresses.filter((i) => ns === undefined || i.metadata?.namespace === ns),
    policies: (ns: string) => policies.filter((p) => p.metadata.namespace === ns),
    records: () => records,
  };
  // The views a round makes: no cluster policy, EG in its namespace `eg` (which has no Services here).
  const index = () => new ClaimsIndex({ ...caches, clusterPolicies: () => [], namespace: () => undefined, ownNamespace: 'loopguard-system', envoyGatewayNamespace: 'eg' } as unknown as PolicyCaches);

  it('a CLB shared across namespaces: every Service on it, each with its own namespace\'s policy (none in j), opt-outs marked', () => {
    const views = index();
    const mine = views.view('h').candidates.filter((t) => t.kind === 'Service');
    const shared = sharedWith(mine, caches, new Set(['h']), views);
    expect(shared.clbs.get('lb-1')?.map((u) => [u.facts.namespace, u.facts.name, u.policy, u.optedOut, u.annotatedByLoopguard ?? false])).toEqual([
      ['h', 'shared', 'h/p', false, true],
      ['i', 'shared', 'i/q', true, false],
      ['j', 'other', undefined, false, false],
    ]);
    expect(shared.clbs.get('lb-2')?.map((u) => u.facts.name)).toEqual(['alone']);
  });

  it('a TkeServiceConfig named by several Ingresses of the namespace: all of them, and only them', () => {
    const views = index();
    const mine = views.view('h').candidates.filter((t) => t.kind === 'Ingress' && t.name !== 'back');
    const shared = sharedWith(mine, caches, new Set(['h']), views);
    expect(shared.configs.get('h/cfg')?.map((u) => [u.facts.name, u.policy, u.optedOut])).toEqual([
      ['front', 'h/p', false],
      ['back', 'h/p', true],
    ]);
    expect(shared.configs.get('h/own')?.map((u) => u.facts.name)).toEqual(['solo']);
    expect(serviceFacts(services[0]!).loadBalancerId).toBe('lb-1');
  });

  it("a GatewayClass's EnvoyProxy: every Gateway it reaches, in any namespace, its own EnvoyProxy's users apart", () => {
    const views = index();
    const mine = views.view('h').candidates.filter((t) => t.kind === 'Gateway');
    const shared = sharedWith(mine, caches, new Set(['h']), views);
    expect(shared.configs.get('EnvoyProxy/eg/tke')?.map((u) => `${u.facts.namespace}/${u.facts.name} ${u.policy ?? '-'}`)).toEqual(['h/web h/p', 'h/api h/p', 'i/web i/q']);
    expect(shared.configs.get('EnvoyProxy/h/api-proxy')?.map((u) => u.facts.name)).toEqual(['api']);
    expect([...shared.configs.keys()].filter((k) => k.startsWith('EnvoyProxy/')).sort()).toEqual(['EnvoyProxy/eg/tke', 'EnvoyProxy/h/api-proxy']);
  });
});
