// The decision alone (no prose): each row sets up a target and expects the typed root cause, with the facts its
// message will name. One row per root cause the assessment decides, then rows for the precedence between causes
// (docs/diagnosis.md §4–§6: gates in order, L4-0 … L4-13, the L7 rules).
import { describe, expect, it } from '@jest/globals';
import { decideIngress } from '../../../src/model/assess-ingress.js';
import { decideService } from '../../../src/model/assess-service.js';
import type { Cause } from '../../../src/model/cause.js';
import type { IngressFacts, ListenerFacts, ServiceFacts } from '../../../src/model/facts.js';
import { ROOT_CAUSES, type RootCauseId } from '../../../src/model/root-causes.js';
import { ingress, l4Listener, listener, rowContext, service, type AssessRow } from './fixtures.js';

const PL = 'service.cloud.tencent.com/prevent-loopback';
const SVC_ID = 'service.kubernetes.io/loadbalance-id';
const LOCAL = { externalTrafficPolicy: 'Local' as const };
const DEAD = { health: { alive: 0, dead: 3 } };
const ON_RANGE = { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] };
const http = (keepalive: 0 | 1): ListenerFacts =>
  listener('lbl-80', 'HTTP', 80, { keepaliveEnable: keepalive, rules: [{ locationId: 'loc-a', domain: 'shop.example.com', url: '/', healthCheck: { sourceIpType: 0 } }] });
const BOTH_CONFIGS = { 'ingress.cloud.tencent.com/tke-service-config': 'front-conf', 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' };

interface Row extends Omit<AssessRow, 'verdict' | 'rootCause'> {
  svc?: Partial<ServiceFacts>;
  ing?: Partial<IngressFacts>;
  /** What the decided cause must carry (a subset: `toMatchObject`). */
  cause: { id: RootCauseId; [fact: string]: unknown };
}

/**
 * Decided outside these functions: between policies (assessment.ts), over a shared CLB or config (src/plan), and for a
 * Gateway before its Service is decided here (assess-gateway.ts, table-tested in assess-gateway.test.ts).
 */
const DECIDED_ELSEWHERE: RootCauseId[] = ['PolicyConflict', 'PolicyPrecedence', 'PolicyHandover', 'SharedConfig', 'SharedClb', 'GatewayServiceMissing', 'GatewayServiceAmbiguous', 'SharedEnvoyProxy'];

const serviceRows: Row[] = [
  // --- one row per root cause
  { name: 'loopguard.dev/skip', annotations: { 'loopguard.dev/skip': 'true' }, cause: { id: 'SkipAnnotation' } },
  { name: 'TKE mode: skip', annotations: { 'service.cloud.tencent.com/mode': 'skip' }, cause: { id: 'TkeSyncSkipped', kind: 'Service' } },
  { name: "Envoy Gateway's Service", svc: { generatedFor: 'Gateway shop/web' }, cause: { id: 'EnvoyGatewayService', generatedFor: 'Gateway shop/web' } },
  { name: 'ClusterIP', svc: { type: 'ClusterIP' }, cause: { id: 'NotLoadBalancerService', type: 'ClusterIP' } },
  { name: 'loadBalancerClass', svc: { loadBalancerClass: 'example.com/lb' }, cause: { id: 'NotTkeLoadBalancer', loadBalancerClass: 'example.com/lb' } },
  { name: 'no CLB id', annotations: { [SVC_ID]: '' }, cause: { id: 'ClbNotAssigned', idAnnotation: SVC_ID } },
  { name: 'CLB not read', clb: { state: 'NotObserved' }, cause: { id: 'ClbNotObserved', lb: 'lb-abc' } },
  { name: 'CLB gone', clb: { state: 'NotFound', loadBalancerId: 'lb-abc' }, cause: { id: 'ClbNotFound', lb: 'lb-abc', idAnnotation: SVC_ID } },
  { name: "another object's CLB", clb: { tags: { 'tke-lb-serviceuuid': 'someone-else' } }, cause: { id: 'ForeignClb', lb: 'lb-abc' } },
  { name: 'no owner tag, no status VIP', svc: { loadBalancerIps: [] }, cause: { id: 'ClbOwnershipUnverified', lb: 'lb-abc', kind: 'Service' } },
  { name: 'CLB creating', clb: { status: 0 }, cause: { id: 'ClbCreating' } },
  { name: 'classic CLB', clb: { forward: 0 }, cause: { id: 'ClassicClb' } },
  { name: 'a port without listener', svc: { ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] }, cause: { id: 'ListenersNotReady', missing: ['53/UDP'] } },
  { name: 'ipMode Proxy', svc: { ipModes: ['Proxy'] }, profile: 'iptables', cause: { id: 'IpModeProxy', layer: 'L4' } },
  { name: 'public CLB', svc: LOCAL, clb: { loadBalancerType: 'OPEN' }, cause: { id: 'PublicClb', layer: 'L4' } },
  { name: 'iptables', svc: LOCAL, profile: 'iptables', cause: { id: 'VipServedLocally' } },
  { name: 'IPVS, ETP Cluster', cause: { id: 'MasqueradedToNodeIp' } },
  { name: 'IPv6 CLB at risk', svc: LOCAL, clb: { addressIpVersion: 'IPV6' }, cause: { id: 'Ipv6Clb', risk: { id: 'PodSourceNotMasqueraded', plan: { annotate: false } }, annotationPresent: false } },
  { name: 'VIP bound by the annotation, VIP source', annotations: { [PL]: 'true' }, cause: { id: 'VipHealthCheckDropped', boundBy: { by: 'Annotation' }, fix: 'Planned' } },
  { name: 'ETP Local, supporting kube-proxy', svc: LOCAL, cause: { id: 'PodSourceNotMasqueraded', plan: { switchBy: 'loopguard', annotate: true } } },
  { name: 'direct-access', annotations: { 'service.cloud.tencent.com/direct-access': 'true' }, cause: { id: 'DirectAccessSameNode', plan: { switchBy: 'loopguard', annotate: true } } },
  { name: 'kube-proxy too old', svc: LOCAL, profile: 'ipvsOld', cause: { id: 'KubeProxyTooOld', factor: 'PodSourceNotMasqueraded', always: false, plan: { annotate: false } } },
  { name: 'kube-proxy support unknown', svc: LOCAL, profile: 'ipvsVersionUnknown', cause: { id: 'KubeProxyVersionUnknown', factor: 'PodSourceNotMasqueraded' } },
  { name: 'kube-proxy mode unknown', svc: LOCAL, profile: 'unknown', cause: { id: 'KubeProxyModeUnknown', open: { loop: 'PodSourceNotMasqueraded', drop: false } } },
  {
    name: 'account rejects 100.64',
    svc: LOCAL,
    capabilities: { range100_64Rejected: 'InvalidParameter' },
    cause: { id: 'HealthCheckSourceCapabilityMissing', risk: { id: 'PodSourceNotMasqueraded' }, rejected: 'InvalidParameter' },
  },
  {
    name: 'policy forbids the fix',
    svc: LOCAL,
    policy: { l4: { preventLoopback: 'Never' } },
    cause: { id: 'MitigationDisabledByPolicy', factor: 'PodSourceNotMasqueraded', l4: { preventLoopback: 'Never', healthCheckSource: 'Range100_64', sourceSwitch: 'Direct' } },
  },
  { name: 'annotation + 100.64', svc: LOCAL, annotations: { [PL]: 'true' }, clb: ON_RANGE, cause: { id: 'LoopbackPrevented', boundBy: { by: 'Annotation' } } },
  // --- precedence
  { name: 'G1 before G3: skip wins over type', svc: { type: 'ClusterIP' }, annotations: { 'loopguard.dev/skip': 'true' }, cause: { id: 'SkipAnnotation' } },
  { name: 'an id that is no CLB id before the observation', annotations: { [SVC_ID]: 'lb-GZ/../x' }, clb: { state: 'NotObserved' }, cause: { id: 'ClbNotFound', notAnId: 'lb-GZ/../x' } },
  { name: 'G6′ before G7: foreign before creating', clb: { status: 0, tags: { 'tke-lb-serviceuuid': 'x' } }, cause: { id: 'ForeignClb' } },
  { name: 'G9 before L4-0: listeners before ipMode', svc: { ipModes: ['Proxy'], ports: [{ port: 53, protocol: 'UDP' }] }, cause: { id: 'ListenersNotReady' } },
  { name: 'public before ipMode Proxy', svc: { ipModes: ['Proxy'] }, clb: { loadBalancerType: 'OPEN' }, cause: { id: 'PublicClb' } },
  { name: 'L4-0 before a drop', svc: { ipModes: ['Proxy'] }, annotations: { [PL]: 'true' }, cause: { id: 'IpModeProxy' } },
  { name: 'L4-1 before L4-2: a drop on a public CLB', clb: { loadBalancerType: 'OPEN' }, profile: 'ipvsUpstream', cause: { id: 'VipHealthCheckDropped', boundBy: { by: 'Upstream' } } },
  { name: 'L4-3 before L4-4: a drop before the loop risk', svc: LOCAL, profile: 'ipvsUpstream', cause: { id: 'VipHealthCheckDropped' } },
  { name: 'all-Dead evidence binds the VIP', clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0, DEAD)] }, profile: 'ipvsOld', cause: { id: 'VipHealthCheckDropped', boundBy: { by: 'DeadBackends', listenerIds: ['lbl-tcp'] } } },
  { name: 'L4-4 before L4-6: policy before kube-proxy', svc: LOCAL, profile: 'ipvsOld', policy: { l4: { healthCheckSource: 'VIP' } }, cause: { id: 'MitigationDisabledByPolicy' } },
  { name: 'L4-8: a possible drop', annotations: { [PL]: 'true' }, profile: 'unknown', cause: { id: 'KubeProxyModeUnknown', open: { drop: true } } },
  { name: 'L4-13 does not hide a drop', annotations: { [PL]: 'true' }, capabilities: { range100_64Rejected: 'x' }, cause: { id: 'VipHealthCheckDropped', fix: 'Blocked' } },
  { name: 'L4-12 only over AtRisk', clb: { addressIpVersion: 'IPV6' }, cause: { id: 'MasqueradedToNodeIp' } },
  { name: 'L4-12 over a drop', annotations: { [PL]: 'true' }, clb: { addressIpVersion: 'IPV6' }, cause: { id: 'Ipv6Clb', risk: { id: 'VipHealthCheckDropped', fix: 'Ipv6' }, annotationPresent: true } },
  { name: 'TKEFirst: TKE switches the source', svc: LOCAL, policy: { l4: { sourceSwitch: 'TKEFirst' } }, cause: { id: 'PodSourceNotMasqueraded', plan: { switchBy: 'TKE', annotate: true } } },
];

const ingressRows: Row[] = [
  { name: 'nginx class', annotations: { 'kubernetes.io/ingress.class': 'nginx' }, cause: { id: 'NotClbIngress', ingressClass: 'nginx' } },
  { name: 'no keepalive', cause: { id: 'L7Loopback', layer: 'L7', passFirst: false, config: { name: 'front-auto-ingress-config', source: 'ToBeCreated' } } },
  { name: 'keepalive on', clb: { listeners: [http(1)] }, cause: { id: 'KeepaliveEnabled' } },
  { name: 'keepalive rejected', capabilities: { keepaliveRejected: 'Unsupported' }, cause: { id: 'KeepaliveCapabilityMissing', rejected: 'Unsupported' } },
  { name: 'both config annotations', annotations: BOTH_CONFIGS, cause: { id: 'TkeServiceConfigAmbiguous', target: { namespace: 'shop', name: 'front' } } },
  { name: 'policy keepalive false', policy: { l7: { keepalive: false } }, cause: { id: 'MitigationDisabledByPolicy', layer: 'L7' } },
  { name: 'no HTTP listener', clb: { listeners: [l4Listener('x', 'TCP', 80, 0)] }, cause: { id: 'ListenersNotReady', lb: 'lb-ing' } },
  { name: 'public', clb: { loadBalancerType: 'OPEN' }, cause: { id: 'PublicClb', layer: 'L7' } },
  { name: 'IPv6', clb: { addressIpVersion: 'IPV6' }, cause: { id: 'Ipv6Clb', layer: 'L7' } },
  // --- precedence
  { name: 'listeners before public', clb: { loadBalancerType: 'OPEN', listeners: [] }, cause: { id: 'ListenersNotReady' } },
  { name: 'public before IPv6', clb: { loadBalancerType: 'OPEN', addressIpVersion: 'IPV6' }, cause: { id: 'PublicClb' } },
  { name: 'keepalive on before the policy', clb: { listeners: [http(1)] }, policy: { l7: { keepalive: false } }, cause: { id: 'KeepaliveEnabled' } },
  { name: 'the policy before a rejection', policy: { l7: { keepalive: false } }, capabilities: { keepaliveRejected: 'x' }, cause: { id: 'MitigationDisabledByPolicy' } },
  { name: 'a rejection before the config conflict', annotations: BOTH_CONFIGS, capabilities: { keepaliveRejected: 'x' }, cause: { id: 'KeepaliveCapabilityMissing' } },
  {
    name: 'pass-to-target first when allowed',
    clb: { passToTarget: false },
    policy: { l7: { allowCLBTrafficByDefault: true } },
    cause: { id: 'L7Loopback', passFirst: true, at: { lb: 'lb-ing', noKeepalive: [http(0)], directAccess: false, advice: { xff: true } } },
  },
  { name: 'security-group advice otherwise', clb: { passToTarget: false }, cause: { id: 'L7Loopback', passFirst: false, at: { advice: { pass: 'SecurityGroup', xff: true } } } },
];

function decided(row: Row, kind: 'Service' | 'Ingress'): Cause {
  if (kind === 'Service') {
    const svc = service(row.svc, row.annotations);
    if (row.annotations?.[SVC_ID] === '') delete svc.annotations?.[SVC_ID];
    return decideService(svc, rowContext({ ...row, verdict: 'AtRisk', rootCause: row.cause.id })).cause;
  }
  const ctx = rowContext({ ...row, verdict: 'AtRisk', rootCause: row.cause.id }, { loadBalancerId: 'lb-ing', listeners: [http(0)] });
  return decideIngress(ingress(row.ing, row.annotations), ctx).cause;
}

describe('decideService', () => {
  it.each(serviceRows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    expect(decided(row, 'Service')).toMatchObject(row.cause);
  });
});

describe('decideIngress', () => {
  it.each(ingressRows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    expect(decided(row, 'Ingress')).toMatchObject(row.cause);
  });
});

it('has a row for every root cause in the catalogue that is decided here', () => {
  const covered = new Set([...serviceRows, ...ingressRows].map((r) => r.cause.id));
  expect([...covered, ...DECIDED_ELSEWHERE].sort()).toEqual(Object.keys(ROOT_CAUSES).sort());
});
