// Pure planning of the TKE simulator: kube-proxy profiles, Service and Ingress plans, config choice.
import { describe, expect, it } from '@jest/globals';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { INGRESS, SERVICE } from '../../sim/tke-simulator/annotations.js';
import { isQcloudIngress, planIngress } from '../../sim/tke-simulator/ingress-plan.js';
import {
  bindsVip,
  imageTag,
  kubeProxyProfile,
  parseTkeVersion,
  proxyModeFromArgs,
  supportsPreventLoopback,
} from '../../sim/tke-simulator/kube-proxy.js';
import { clusterProfile } from '../../sim/tke-simulator/profiles.js';
import { extensiveParametersFrom, planService } from '../../sim/tke-simulator/service-plan.js';
import { chooseConfig } from '../../sim/tke-simulator/tke-service-config.js';

const v = (tag: string) => {
  const parsed = parseTkeVersion(tag);
  if (!parsed) throw new Error(`bad tag ${tag}`);
  return parsed;
};

describe('kube-proxy version and mode', () => {
  it('parses TKE tags and rejects others', () => {
    expect(parseTkeVersion('v1.20.6-tke.12')).toEqual({ major: 1, minor: 20, patch: 6, tke: 12 });
    expect(parseTkeVersion('v1.20.6')).toBeUndefined();
    expect(parseTkeVersion('1.20.6-tke.12')).toBeUndefined();
  });

  it.each([
    ['v1.12.4-tke.30', true],
    ['v1.12.4-tke.29', false],
    ['v1.14.3-tke.24', true],
    ['v1.14.3-tke.23', false],
    ['v1.16.3-tke.25', true],
    ['v1.16.3-tke.24', false],
    ['v1.18.4-tke.20', true],
    ['v1.18.4-tke.8', false],
    ['v1.18.5-tke.1', true],
    ['v1.20.6-tke.12', true],
    ['v1.20.6-tke.11', false],
    ['v1.20.6-tke.33', true],
    ['v1.22.5-tke.1', true],
    ['v1.28.3-tke.3', true],
    ['v1.10.5-tke.99', false],
    ['v1.13.1-tke.99', false],
  ])('%s supports prevent-loopback: %s', (tag, expected) => {
    expect(supportsPreventLoopback(v(tag))).toBe(expected);
  });

  it('reads the image tag with registry ports and digests', () => {
    expect(imageTag('ccr.ccs.tencentyun.com/tkeimages/hyperkube:v1.20.6-tke.12')).toBe('v1.20.6-tke.12');
    expect(imageTag('registry:5000/hyperkube:v1.18.4-tke.8@sha256:abc')).toBe('v1.18.4-tke.8');
    expect(imageTag('registry:5000/hyperkube')).toBeUndefined();
  });

  it('finds --proxy-mode in both flag forms, defaulting to iptables', () => {
    expect(proxyModeFromArgs(['kube-proxy', '--proxy-mode=ipvs'])).toBe('ipvs');
    expect(proxyModeFromArgs(['kube-proxy', '--proxy-mode', 'ipvs'])).toBe('ipvs');
    expect(proxyModeFromArgs(['kube-proxy', '--proxy-mode=iptables'])).toBe('iptables');
    expect(proxyModeFromArgs(['kube-proxy', '--v=2'])).toBe('iptables');
  });

  it('reads flags hidden in a shell command string', () => {
    const profile = kubeProxyProfile({
      spec: {
        selector: {},
        template: {
          spec: {
            containers: [{ name: 'kube-proxy', image: 'x/hyperkube:v1.20.6-tke.12', command: ['sh', '-c', 'kube-proxy --proxy-mode=ipvs --v=2'] }],
          },
        },
      },
    });
    expect(profile).toMatchObject({ present: true, mode: 'ipvs', supportsPreventLoopback: true });
  });

  it.each([
    ['ipvs-new', 'ipvs', true],
    ['ipvs-old', 'ipvs', false],
    ['iptables', 'iptables', false],
    ['ipvs-1.28', 'ipvs', true],
  ] as const)('fixture %s: mode %s, binds the VIP with prevent-loopback: %s', (name, mode, binds) => {
    const profile = kubeProxyProfile(clusterProfile(name));
    expect(profile.mode).toBe(mode);
    expect(bindsVip(profile, true)).toBe(binds);
    expect(bindsVip(profile, false)).toBe(false);
  });

  it('without a kube-proxy DaemonSet nothing binds', () => {
    expect(bindsVip(kubeProxyProfile(undefined), true)).toBe(false);
  });
});

const service = (annotations: Record<string, string> = {}, ports = [{ port: 80, protocol: 'TCP' }]): V1Service => ({
  metadata: { name: 'web', namespace: 'shop', annotations },
  spec: { type: 'LoadBalancer', ports },
});

describe('Service plan', () => {
  it('is INTERNAL with the subnet annotation, OPEN without', () => {
    expect(planService(service({ [SERVICE.internalSubnetId]: 'subnet-1' }), 'cls-1').loadBalancer).toMatchObject({
      type: 'INTERNAL',
      subnetId: 'subnet-1',
      addressIpVersion: 'IPV4',
    });
    expect(planService(service(), 'cls-1').loadBalancer.type).toBe('OPEN');
  });

  it('has one listener per distinct TCP/UDP port, skipping SCTP', () => {
    const plan = planService(
      service({}, [
        { port: 443, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
        { port: 53, protocol: 'TCP' },
        { port: 443, protocol: 'TCP' },
        { port: 9, protocol: 'SCTP' },
      ]),
      'cls-1',
    );
    expect(plan.listeners).toEqual([
      { protocol: 'TCP', port: 53 },
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 443 },
    ]);
  });

  it('reads IPv6 and a chosen Vip from extensiveParameters and reports bad JSON', () => {
    expect(extensiveParametersFrom('{"AddressIPVersion":"IPV6"}').version).toBe('IPV6');
    expect(extensiveParametersFrom('{"AddressIPVersion":"IPv6FullChain"}').version).toBe('IPv6FullChain');
    expect(extensiveParametersFrom('{"VipIsp":"CMCC"}')).toEqual({ version: 'IPV4' });
    expect(extensiveParametersFrom('{"Vip":"10.0.0.100"}')).toEqual({ version: 'IPV4', vip: '10.0.0.100' });
    expect(extensiveParametersFrom('{"Vip":100}').problem).toMatch(/Vip must be a string/);
    const bad = planService(service({ [SERVICE.extensiveParameters]: '{oops' }), 'cls-1');
    expect(bad.loadBalancer.addressIpVersion).toBe('IPV4');
    expect(bad.problems[0]).toMatch(/not valid JSON/);
  });

  it('carries tke-existed-lbid and prevent-loopback', () => {
    const plan = planService(service({ [SERVICE.existedLbId]: 'lb-user0001', [SERVICE.preventLoopback]: 'true' }), 'cls-1');
    expect(plan.loadBalancer.existingId).toBe('lb-user0001');
    expect(plan.preventLoopback).toBe(true);
  });
});

const ingress = (annotations: Record<string, string>, spec: V1Ingress['spec']): V1Ingress => ({
  metadata: { name: 'shop', namespace: 'shop', annotations },
  spec,
});
const rules: V1Ingress['spec'] = {
  rules: [
    { host: 'a.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: {} }, { path: '/api', pathType: 'Prefix', backend: {} }] } },
    { host: 'b.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: {} }] } },
    { http: { paths: [{ path: '/health', pathType: 'Exact', backend: {} }] } },
  ],
};

describe('Ingress plan', () => {
  it('serves qcloud and class-less Ingresses only', () => {
    expect(isQcloudIngress(ingress({}, {}))).toBe(true);
    expect(isQcloudIngress(ingress({ [INGRESS.ingressClass]: 'qcloud' }, {}))).toBe(true);
    expect(isQcloudIngress(ingress({ [INGRESS.ingressClass]: 'nginx' }, {}))).toBe(false);
    expect(isQcloudIngress(ingress({}, { ingressClassName: 'nginx' }))).toBe(false);
  });

  it('puts every rule on HTTP:80 without TLS; a rule without host uses the VIP domain', () => {
    const plan = planIngress(ingress({ [INGRESS.subnetId]: 'subnet-2' }, rules), 'cls-1');
    expect(plan.loadBalancer).toMatchObject({ type: 'INTERNAL', subnetId: 'subnet-2' });
    expect(plan.listeners).toEqual([
      {
        protocol: 'HTTP',
        port: 80,
        rules: [
          { host: 'a.example.com', url: '/' },
          { host: 'a.example.com', url: '/api' },
          { host: 'b.example.com', url: '/' },
          { url: '/health' },
        ],
      },
    ]);
  });

  it('takes a chosen Vip from extensiveParameters, and reports a bad one', () => {
    expect(planIngress(ingress({ [INGRESS.extensiveParameters]: '{"Vip":"10.0.0.100"}' }, rules), 'cls-1')).toMatchObject({ loadBalancer: { vip: '10.0.0.100' }, problems: [] });
    const bad = planIngress(ingress({ [INGRESS.extensiveParameters]: '{oops' }, rules), 'cls-1');
    expect(bad.loadBalancer.vip).toBeUndefined();
    expect(bad.problems).toEqual([expect.stringMatching(/^kubernetes\.io\/ingress\.extensiveParameters is not valid JSON/)]);
    expect(planIngress(ingress({}, rules), 'cls-1').problems).toEqual([]);
  });

  it('moves all rules to HTTPS:443 with TLS, keeping an empty HTTP:80', () => {
    const plan = planIngress(ingress({}, { ...rules, tls: [{ hosts: ['a.example.com'], secretName: 'cert' }] }), 'cls-1');
    expect(plan.loadBalancer.type).toBe('OPEN');
    expect(plan.listeners.map((l) => [l.protocol, l.port, l.rules.length])).toEqual([
      ['HTTP', 80, 0],
      ['HTTPS', 443, 4],
    ]);
  });

  it('with rule-mix only TLS hosts go to HTTPS', () => {
    const plan = planIngress(
      ingress({ [INGRESS.ruleMix]: 'true' }, { ...rules, tls: [{ hosts: ['a.example.com'], secretName: 'cert' }] }),
      'cls-1',
    );
    expect(plan.listeners.map((l) => l.rules.map((r) => `${r.host ?? ''}${r.url}`))).toEqual([
      ['b.example.com/', '/health'],
      ['a.example.com/', 'a.example.com/api'],
    ]);
  });
});

describe('TkeServiceConfig choice', () => {
  const keys = { auto: SERVICE.tkeServiceConfigAuto, manual: SERVICE.tkeServiceConfig };
  it('auto, hand-made, none', () => {
    expect(chooseConfig('Service', 'web', 'true', undefined, keys)).toEqual({ kind: 'auto', name: 'web-auto-service-config' });
    expect(chooseConfig('Ingress', 'shop', 'true', undefined, keys)).toEqual({ kind: 'auto', name: 'shop-auto-ingress-config' });
    expect(chooseConfig('Service', 'web', undefined, 'mine', keys)).toEqual({ kind: 'manual', name: 'mine' });
    expect(chooseConfig('Service', 'web', 'false', undefined, keys)).toEqual({ kind: 'none' });
  });

  it('rejects both at once, a non-bool auto value, and a hand-made name with an auto suffix', () => {
    expect(chooseConfig('Service', 'web', 'true', 'mine', keys).kind).toBe('invalid');
    expect(chooseConfig('Service', 'web', 'yes', undefined, keys).kind).toBe('invalid');
    expect(chooseConfig('Service', 'web', undefined, 'x-auto-ingress-config', keys)).toMatchObject({
      kind: 'invalid',
      reason: expect.stringMatching(/Name Invalid/),
    });
  });
});
