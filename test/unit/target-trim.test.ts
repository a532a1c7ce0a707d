import { describe, expect, it } from '@jest/globals';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../src/api/loopbackpolicy.js';
import { gatewayFacts, ingressFacts, serviceFacts } from '../../src/model/target-facts.js';
import { LAST_APPLIED, trimGateway, trimIngress, trimService } from '../../src/runtime/target-trim.js';
import { slim } from '../../src/runtime/informer.js';
import { setFlagsFromString } from 'node:v8';

// V8's own answer to "is this object a hash table?" (dictionary mode, what `delete` makes of an object).
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;


// Every field a Service can carry that the model reads, and many it does not.
function fullService(): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      namespace: 'shop',
      name: 'web',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 1,
      creationTimestamp: new Date('2025-01-01T00:00:00Z'),
      deletionTimestamp: new Date('2025-01-02T00:00:00Z'),
      labels: { app: 'web' },
      annotations: {
        'service.kubernetes.io/loadbalance-id': 'lb-12345678',
        'service.cloud.tencent.com/prevent-loopback': 'true',
        'loopguard.dev/skip': 'false',
        [LAST_APPLIED]: '{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"}}',
      },
      managedFields: [{ manager: FIELD_MANAGER, operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:service.cloud.tencent.com/prevent-loopback': {} } } } }],
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u-o' }],
      finalizers: ['service.kubernetes.io/load-balancer-cleanup'],
    },
    spec: {
      type: 'LoadBalancer',
      loadBalancerClass: 'tke',
      externalTrafficPolicy: 'Local',
      internalTrafficPolicy: 'Cluster',
      healthCheckNodePort: 31000,
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      selector: { app: 'web' },
      sessionAffinity: 'None',
      allocateLoadBalancerNodePorts: true,
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 },
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53, nodePort: 30053 },
        { port: 81, targetPort: 'web' },
      ],
    },
    status: {
      loadBalancer: { ingress: [{ ip: '10.0.0.10', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }, { hostname: 'x.example' }] },
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(), message: '', reason: 'R' }],
    },
  };
}

function fullIngress(): V1Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      namespace: 'shop',
      name: 'front',
      uid: 'u-2',
      resourceVersion: '43',
      creationTimestamp: new Date('2025-01-01T00:00:00Z'),
      labels: { app: 'front' },
      annotations: { 'kubernetes.io/ingress.class': 'qcloud', 'kubernetes.io/ingress.qcloud-loadbalance-id': 'lb-87654321', [LAST_APPLIED]: '{}' },
    },
    spec: {
      ingressClassName: 'qcloud',
      defaultBackend: { service: { name: 'fallback', port: { number: 80 } } },
      tls: [{ hosts: ['a.example'], secretName: 'tls' }],
      rules: [
        {
          host: 'a.example',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
              { pathType: 'ImplementationSpecific', backend: { resource: { apiGroup: 'x', kind: 'Bucket', name: 'b' } } },
            ],
          },
        },
        { http: { paths: [{ path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } }] } },
        {},
      ],
    },
    status: { loadBalancer: { ingress: [{ ip: '1.2.3.4', ports: [{ port: 80, protocol: 'TCP' }] }] } },
  };
}

describe('trimService', () => {
  it('keeps every field the model reads: the facts of the trimmed Service equal those of the whole one', () => {
    const whole = fullService();
    const trimmed = trimService(fullService());
    const { [LAST_APPLIED]: _, ...kept } = whole.metadata?.annotations ?? {};
    expect(serviceFacts(trimmed)).toEqual({ ...serviceFacts(whole), annotations: kept });
    expect(serviceFacts(trimmed).setByLoopguard).toBeDefined();
  });

  it('drops what nobody reads and keeps what the informer needs', () => {
    const trimmed = trimService(fullService());
    expect(trimmed.metadata?.resourceVersion).toBe('42');
    expect(trimmed.metadata?.deletionTimestamp).toBeDefined();
    expect(trimmed.metadata?.annotations?.[LAST_APPLIED]).toBeUndefined();
    expect(trimmed.metadata?.ownerReferences).toBeUndefined();
    expect(trimmed.spec).toEqual({
      type: 'LoadBalancer',
      loadBalancerClass: 'tke',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }, { port: 81 }],
    });
    expect(trimmed.status).toEqual({ loadBalancer: { ingress: [{ ip: '10.0.0.10', ipMode: 'VIP' }, {}] } });
  });

  it('keeps spec.clusterIP only when it is None (headless: l7.inClusterDNS never rewrites to one)', () => {
    const headless: V1Service = { metadata: { name: 'h', namespace: 'n' }, spec: { type: 'ClusterIP', clusterIP: 'None', ports: [{ port: 80 }] } };
    expect(trimService(headless).spec).toEqual({ type: 'ClusterIP', clusterIP: 'None', ports: [{ port: 80 }] });
    expect(serviceFacts(headless).headless).toBe(true);
    expect(serviceFacts(fullService()).headless).toBeUndefined();
  });

  it('trims in place (the informer cache holds the very object) and leaves a Service without status without one', () => {
    const svc: V1Service = { metadata: { name: 'c', namespace: 'n', resourceVersion: '1' }, spec: { type: 'ClusterIP', clusterIP: '10.0.0.1', ports: [{ port: 80 }] }, status: { loadBalancer: {} } };
    expect(trimService(svc)).toBe(svc);
    expect(svc).toEqual({ metadata: { name: 'c', namespace: 'n', resourceVersion: '1' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } });
  });
});

describe('the cached objects: plain objects V8 keeps in fast mode, without undefined fields', () => {
  // As client-node's deserializer builds them: every field of the metadata set, most undefined.
  const deserialized = (): V1Service => {
    const svc = fullService();
    const md = svc.metadata ?? {};
    svc.metadata = { ...md, clusterName: undefined, deletionGracePeriodSeconds: undefined, generateName: undefined, selfLink: undefined } as typeof md;
    svc.status = { loadBalancer: {} };
    return svc;
  };
  it.each([
    { name: 'a Service (slim, then trimService)', trimmed: () => trimService(slim(deserialized(), true)) },
    { name: 'an Ingress (slim, then trimIngress)', trimmed: () => trimIngress(slim(fullIngress(), true)) },
    { name: 'any other cached object (slim only)', trimmed: () => slim(deserialized(), false) },
  ])('$name', ({ trimmed }) => {
    const obj: { metadata?: object } = trimmed();
    expect(hasFastProperties(obj)).toBe(true);
    expect(hasFastProperties(obj.metadata ?? {})).toBe(true);
    expect(Object.entries(obj.metadata ?? {}).filter(([, v]) => v === undefined)).toEqual([]);
  });
});

describe('trimIngress', () => {
  it('keeps every field the model reads: the facts of the trimmed Ingress equal those of the whole one', () => {
    const whole = fullIngress();
    const trimmed = trimIngress(fullIngress());
    const { [LAST_APPLIED]: _, ...kept } = whole.metadata?.annotations ?? {};
    expect(ingressFacts(trimmed)).toEqual({ ...ingressFacts(whole), annotations: kept });
  });

  it('keeps each rule, path and TLS entry, without their unread parts', () => {
    const trimmed = trimIngress(fullIngress());
    expect(trimmed.spec?.tls).toEqual([{}]);
    expect(trimmed.spec?.rules?.map((r) => r.http?.paths.length ?? 0)).toEqual([2, 1, 0]);
    expect(trimmed.spec?.rules?.[0]?.http?.paths[0]).toEqual({ path: '/', backend: { service: { name: 'web', port: { number: 80 } } } });
    expect(trimmed.spec?.rules?.[1]?.http?.paths[0]?.backend).toEqual({ service: { name: 'api', port: { name: 'http' } } });
    expect(ingressFacts(trimmed).rules.map((r) => r.servicePorts)).toEqual([[80], ['http'], undefined]);
    expect(trimmed.status).toEqual({ loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } });
  });
});

describe('trimGateway', () => {
  it("keeps the listeners' hostnames (the names l7.inClusterDNS may rewrite) and gives the same facts", () => {
    const full = () => ({
      metadata: { namespace: 'shop', name: 'gw', uid: 'u-1', resourceVersion: '7' },
      spec: {
        gatewayClassName: 'eg',
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP', hostname: 'shop.example.com', allowedRoutes: { namespaces: { from: 'Same' } } },
          { name: 'any', port: 8080, protocol: 'HTTP' },
          { name: 'https', port: 443, protocol: 'HTTPS', hostname: 'shop.example.com', tls: { certificateRefs: [{ name: 'cert' }] } },
        ],
      },
      status: { conditions: [] },
    });
    const trimmed = trimGateway(full());
    expect(trimmed.spec).toEqual({ gatewayClassName: 'eg', listeners: [{ hostname: 'shop.example.com' }, { hostname: 'shop.example.com' }] });
    expect(gatewayFacts(trimmed, [])).toEqual(gatewayFacts(full(), []));
    expect(gatewayFacts(trimmed, []).hostnames).toEqual(['shop.example.com']);
  });
});
