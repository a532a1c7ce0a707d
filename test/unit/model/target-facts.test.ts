import { describe, expect, it } from '@jest/globals';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { ingressFacts, serviceFacts } from '../../../src/model/target-facts.js';

describe('serviceFacts', () => {
  it('keeps what the assessment reads', () => {
    const svc: V1Service = {
      metadata: { namespace: 'shop', name: 'web', labels: { app: 'web' }, annotations: { a: 'b' }, creationTimestamp: new Date('2025-01-01T00:00:00Z') },
      spec: {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
          { port: 81 },
        ],
      },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.10' }, { hostname: 'x' }] } },
    };
    expect(serviceFacts(svc)).toEqual({
      kind: 'Service',
      namespace: 'shop',
      name: 'web',
      labels: { app: 'web' },
      annotations: { a: 'b' },
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      ports: [
        { port: 80, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
        { port: 81, protocol: 'TCP' },
      ],
      loadBalancerIps: ['10.0.0.10'],
    });
  });

  it('defaults an empty Service to ClusterIP without ports', () => {
    expect(serviceFacts({})).toMatchObject({ kind: 'Service', type: 'ClusterIP', ports: [] });
  });
});

describe('ingressFacts', () => {
  it('keeps class, rules and TLS', () => {
    const ing: V1Ingress = {
      metadata: { namespace: 'shop', name: 'front' },
      spec: {
        ingressClassName: 'qcloud',
        tls: [{ hosts: ['shop.example.com'] }],
        rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: { service: { name: 'api', port: { name: 'http' } } } }, { path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 80 } } } }] } }],
      },
    };
    expect(ingressFacts(ing)).toEqual({
      kind: 'Ingress',
      namespace: 'shop',
      name: 'front',
      ingressClassName: 'qcloud',
      rules: [{ host: 'shop.example.com', paths: ['/api', '/'], services: ['api', 'api'], servicePorts: ['http', 80] }],
      tls: true,
    });
  });
});
