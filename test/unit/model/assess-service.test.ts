import { describe, expect, it } from '@jest/globals';
import { assessTarget } from '../../../src/model/assessment.js';
import type { ServiceFacts } from '../../../src/model/facts.js';
import type { L4DesiredState } from '../../../src/model/desired-state.js';
import { expectRow, l4Listener, listener, rowContext, service, type AssessRow } from './fixtures.js';

const PL = 'service.cloud.tencent.com/prevent-loopback';
const LOCAL = { externalTrafficPolicy: 'Local' as const };
const TWO_PORTS = { ports: [{ port: 80, protocol: 'TCP' as const }, { port: 53, protocol: 'UDP' as const }] };
const TWO_LISTENERS = [l4Listener('lbl-tcp', 'TCP', 80, 0), l4Listener('lbl-udp', 'UDP', 53, 0)];
const ALL_DEAD = { health: { alive: 0, dead: 3 } };

interface Row extends AssessRow {
  svc?: Partial<ServiceFacts>;
  annotationDesired?: boolean;
  warning?: RegExp;
}

const rows: Row[] = [
  // --- gates
  { name: 'loopguard.dev/skip', annotations: { 'loopguard.dev/skip': 'true' }, svc: LOCAL, verdict: 'Skipped', rootCause: 'SkipAnnotation' },
  {
    name: 'unparsable loopguard.dev/skip is honoured and reported',
    annotations: { 'loopguard.dev/skip': 'yes' },
    verdict: 'Skipped',
    rootCause: 'SkipAnnotation',
    warning: /loopguard\.dev\/skip.*expected "true" or "false"/,
  },
  { name: 'loopguard.dev/skip false is not a skip', annotations: { 'loopguard.dev/skip': 'false' }, verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp' },
  { name: 'TKE mode: skip', annotations: { 'service.cloud.tencent.com/mode': 'skip' }, svc: LOCAL, verdict: 'Skipped', rootCause: 'TkeSyncSkipped' },
  { name: 'ClusterIP Service', svc: { type: 'ClusterIP' }, verdict: 'NotApplicable', rootCause: 'NotLoadBalancerService' },
  { name: 'NodePort Service', svc: { type: 'NodePort' }, verdict: 'NotApplicable', rootCause: 'NotLoadBalancerService' },
  { name: 'loadBalancerClass set', svc: { loadBalancerClass: 'example.com/lb' }, verdict: 'NotApplicable', rootCause: 'NotTkeLoadBalancer' },
  {
    name: 'no CLB id yet',
    annotations: { 'service.kubernetes.io/loadbalance-id': '' },
    verdict: 'Pending',
    rootCause: 'ClbNotAssigned',
    message: /service\.kubernetes\.io\/loadbalance-id/,
  },
  { name: 'CLB not read yet', clb: { state: 'NotObserved' }, verdict: 'Pending', rootCause: 'ClbNotObserved' },
  { name: 'CLB id does not exist', clb: { state: 'NotFound', loadBalancerId: 'lb-abc' }, verdict: 'Pending', rootCause: 'ClbNotFound' },
  {
    name: 'a CLB id that is not one names no CLB, whatever was observed, and is reported',
    annotations: { 'service.kubernetes.io/loadbalance-id': 'lb-GZ_1234/../x' },
    verdict: 'Pending',
    rootCause: 'ClbNotFound',
    message: /is "lb-GZ_1234\/..\/x", which is not a CLB id/,
    warning: /loadbalance-id="lb-GZ_1234\/..\/x": expected a CLB id/,
  },
  {
    name: 'a bad value is reported before the CLB exists',
    annotations: { 'service.kubernetes.io/loadbalance-id': '', 'service.cloud.tencent.com/direct-access': 'ｔｒｕｅ' },
    verdict: 'Pending',
    rootCause: 'ClbNotAssigned',
    warning: /direct-access="ｔｒｕｅ": expected "true" or "false"/,
  },
  {
    name: 'an opted-out target reports only its opt-out value',
    annotations: { 'loopguard.dev/skip': 'yes', 'service.cloud.tencent.com/mode': 'later' },
    verdict: 'Skipped',
    rootCause: 'SkipAnnotation',
    warning: /^annotation loopguard\.dev\/skip="yes"[^\n]*$/,
  },
  {
    name: 'an unknown TKE mode is reported and does not skip',
    annotations: { 'service.cloud.tencent.com/mode': 'skpi' },
    verdict: 'NotApplicable',
    rootCause: 'MasqueradedToNodeIp',
    warning: /mode="skpi": expected "skip"/,
  },
  { name: 'CLB still creating', clb: { status: 0 }, verdict: 'Pending', rootCause: 'ClbCreating' },
  { name: 'classic CLB', clb: { forward: 0 }, verdict: 'Unsupported', rootCause: 'ClassicClb' },
  {
    name: 'listener for a port missing',
    svc: { ...TWO_PORTS, ...LOCAL },
    verdict: 'Pending',
    rootCause: 'ListenersNotReady',
    message: /53\/UDP/,
  },
  // --- public CLBs
  { name: 'public, IPVS new, ETP Local', svc: LOCAL, clb: { loadBalancerType: 'OPEN' }, verdict: 'NotApplicable', rootCause: 'PublicClb', changes: [] },
  { name: 'public, iptables', clb: { loadBalancerType: 'OPEN' }, profile: 'iptables', verdict: 'NotApplicable', rootCause: 'PublicClb' },
  {
    name: 'public with prevent-loopback and VIP source: health checks dropped',
    annotations: { [PL]: 'true' },
    clb: { loadBalancerType: 'OPEN' },
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: ['src:lbl-tcp:0->1'],
  },
  {
    name: 'public behind upstream IPVS kube-proxy: VIP always bound',
    clb: { loadBalancerType: 'OPEN' },
    profile: 'ipvsUpstream',
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: ['src:lbl-tcp:0->1'],
    message: /upstream build/,
  },
  { name: 'public IPv6', clb: { loadBalancerType: 'OPEN', addressIpVersion: 'IPV6' }, svc: LOCAL, verdict: 'NotApplicable', rootCause: 'PublicClb' },
  // --- private IPv4, IPVS with a kube-proxy that supports prevent-loopback
  {
    name: 'IPVS new, ETP Cluster: masqueraded',
    verdict: 'NotApplicable',
    rootCause: 'MasqueradedToNodeIp',
    changes: [],
    annotationDesired: false,
  },
  {
    name: 'IPVS new, ETP Local, multi-port: switch sources then annotate',
    svc: { ...TWO_PORTS, ...LOCAL },
    clb: { listeners: TWO_LISTENERS },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-tcp:0->1', 'src:lbl-udp:0->1', 'annotate'],
    annotationDesired: true,
    message: /pod IP/,
  },
  {
    name: 'IPVS new, ETP Local, one listener already on 100.64',
    svc: { ...TWO_PORTS, ...LOCAL },
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1), l4Listener('lbl-udp', 'UDP', 53, 0)] },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-udp:0->1', 'annotate'],
  },
  {
    name: 'IPVS new, ETP Local, sources switched, annotation missing',
    svc: LOCAL,
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['annotate'],
  },
  {
    name: 'IPVS new, ETP Local, annotation + 100.64: mitigated',
    svc: LOCAL,
    annotations: { [PL]: 'true' },
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] },
    verdict: 'Mitigated',
    rootCause: 'LoopbackPrevented',
    changes: [],
    annotationDesired: true,
  },
  {
    // Issue 22 #10: a shared CLB's other listeners (another target's, on the VIP) are not this Service's to speak of.
    name: 'IPVS new, ETP Local, annotation + 100.64 on its own listener, another target\'s on the VIP: mitigated, speaks of its own',
    svc: LOCAL,
    annotations: { [PL]: 'true' },
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1), l4Listener('lbl-other', 'TCP', 9999, 0)] },
    verdict: 'Mitigated',
    rootCause: 'LoopbackPrevented',
    changes: [],
    annotationDesired: true,
    message: /^(?!.*every listener)(?!.*9999).*this Service's listener \(TCP:80\) health-checks from 100\.64\.0\.0\/10$/,
  },
  {
    name: 'IPVS new, annotation + VIP source: every health check dropped',
    annotations: { [PL]: 'true' },
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: ['src:lbl-tcp:0->1'],
    message: /dropped/,
  },
  {
    name: 'IPVS new, ETP Cluster with a user-set annotation and 100.64: mitigated',
    annotations: { [PL]: 'true' },
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] },
    verdict: 'Mitigated',
    rootCause: 'LoopbackPrevented',
    changes: [],
    annotationDesired: false,
  },
  {
    name: 'direct-access: same-node pods can still loop',
    annotations: { 'service.cloud.tencent.com/direct-access': 'true' },
    verdict: 'AtRisk',
    rootCause: 'DirectAccessSameNode',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
    message: /direct-access/,
  },
  {
    name: 'policy preventLoopback Never',
    svc: LOCAL,
    policy: { l4: { preventLoopback: 'Never' } },
    verdict: 'AtRisk',
    rootCause: 'MitigationDisabledByPolicy',
    changes: [],
    annotationDesired: false,
  },
  {
    name: 'policy Unmanaged source + annotation present: reported, not fixed',
    annotations: { [PL]: 'true' },
    policy: { l4: { healthCheckSource: 'Unmanaged', preventLoopback: 'Never' } },
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: [],
    message: /l4\.healthCheckSource: Range100_64/,
  },
  {
    name: 'policy VIP source, ETP Local: nothing loopguard may do',
    svc: LOCAL,
    policy: { l4: { healthCheckSource: 'VIP', preventLoopback: 'Never' } },
    verdict: 'AtRisk',
    rootCause: 'MitigationDisabledByPolicy',
    changes: [],
  },
  {
    name: 'no 100.64 capability: blocked before any write',
    svc: LOCAL,
    capabilities: { range100_64Rejected: 'InvalidParameter: SourceIpType not supported' },
    verdict: 'AtRisk',
    rootCause: 'HealthCheckSourceCapabilityMissing',
    changes: [],
    blocker: 'HealthCheckSourceCapabilityMissing',
    // Blocked: nothing is planned, so the message promises no prevent-loopback (it once said "Plan: prevent-loopback").
    message: /^(?![\s\S]*Plan: prevent-loopback)[\s\S]*ticket/,
  },
  {
    name: 'no 100.64 capability with the VIP bound: drop reported, blocked',
    annotations: { [PL]: 'true' },
    capabilities: { range100_64Rejected: 'rejected' },
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: [],
    blocker: 'HealthCheckSourceCapabilityMissing',
  },
  {
    name: 'TCP_SSL listener serves a TCP port',
    svc: LOCAL,
    clb: { listeners: [l4Listener('lbl-ssl', 'TCP_SSL', 80, 0)] },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-ssl:0->1', 'annotate'],
  },
  {
    name: 'QUIC listener serves a UDP port',
    svc: { ports: [{ port: 443, protocol: 'UDP' }], ...LOCAL },
    clb: { listeners: [l4Listener('lbl-quic', 'QUIC', 443, 0)] },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-quic:0->1', 'annotate'],
  },
  {
    name: 'listeners of other ports on a shared CLB are left alone',
    svc: LOCAL,
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0), l4Listener('lbl-other', 'TCP', 8080, 0)] },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
  },
  {
    name: 'a port served by an L7 listener is noted, not managed',
    svc: { ...TWO_PORTS, ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }], ...LOCAL },
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0), listener('lbl-https', 'HTTPS', 443)] },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
    message: /served by L7 listeners/,
  },
  {
    name: 'invalid prevent-loopback value is treated as absent and reported',
    svc: LOCAL,
    annotations: { [PL]: 'yes' },
    verdict: 'AtRisk',
    rootCause: 'PodSourceNotMasqueraded',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
    warning: /prevent-loopback/,
  },
  // --- IPVS with a kube-proxy too old for prevent-loopback
  {
    name: 'IPVS old, ETP Local: upgrade kube-proxy',
    svc: LOCAL,
    profile: 'ipvsOld',
    verdict: 'AtRisk',
    rootCause: 'KubeProxyTooOld',
    changes: [],
    annotationDesired: false,
    message: /upgrade .*v1\.18\.4-tke\.20 or later/,
  },
  {
    name: 'IPVS old, ETP Local, preventLoopback Always: prepared for the upgrade',
    svc: LOCAL,
    profile: 'ipvsOld',
    policy: { l4: { preventLoopback: 'Always' } },
    verdict: 'AtRisk',
    rootCause: 'KubeProxyTooOld',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
    annotationDesired: true,
  },
  { name: 'IPVS old, ETP Cluster', profile: 'ipvsOld', verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp', changes: [] },
  {
    name: 'IPVS old with the annotation: VIP not bound, health checks fine',
    svc: LOCAL,
    annotations: { [PL]: 'true' },
    profile: 'ipvsOld',
    verdict: 'AtRisk',
    rootCause: 'KubeProxyTooOld',
    changes: [],
  },
  {
    name: 'IPVS old, every backend Dead on a VIP-sourced listener: drop observed',
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0, ALL_DEAD)] },
    profile: 'ipvsOld',
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: ['src:lbl-tcp:0->1'],
    message: /Dead/,
  },
  {
    name: 'IPVS, some backends alive: no drop inferred',
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0, { health: { alive: 1, dead: 2 } })] },
    profile: 'ipvsOld',
    verdict: 'NotApplicable',
    rootCause: 'MasqueradedToNodeIp',
  },
  // --- IPVS, version unknown / upstream
  {
    name: 'IPVS, version unknown, ETP Local',
    svc: LOCAL,
    profile: 'ipvsVersionUnknown',
    verdict: 'AtRisk',
    rootCause: 'KubeProxyVersionUnknown',
    changes: [],
    message: /--kube-proxy-version/,
  },
  {
    name: 'IPVS, version unknown, ETP Local, Always',
    svc: LOCAL,
    profile: 'ipvsVersionUnknown',
    policy: { l4: { preventLoopback: 'Always' } },
    verdict: 'AtRisk',
    rootCause: 'KubeProxyVersionUnknown',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
  },
  {
    name: 'IPVS, version unknown, annotation + VIP source: possible drop, switch (always safe)',
    annotations: { [PL]: 'true' },
    profile: 'ipvsVersionUnknown',
    verdict: 'AtRisk',
    rootCause: 'KubeProxyVersionUnknown',
    changes: ['src:lbl-tcp:0->1'],
  },
  { name: 'IPVS, version unknown, ETP Cluster', profile: 'ipvsVersionUnknown', verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp' },
  {
    name: 'upstream IPVS, VIP source: drop',
    svc: LOCAL,
    profile: 'ipvsUpstream',
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: ['src:lbl-tcp:0->1'],
    annotationDesired: false,
  },
  {
    name: 'upstream IPVS, 100.64 source: VIP answered locally',
    svc: LOCAL,
    profile: 'ipvsUpstream',
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] },
    verdict: 'Mitigated',
    rootCause: 'LoopbackPrevented',
    changes: [],
  },
  // --- iptables / nftables / none: kube-proxy (or its replacement) answers the VIP on the node
  { name: 'iptables, ETP Local', svc: LOCAL, profile: 'iptables', verdict: 'NotApplicable', rootCause: 'VipServedLocally', changes: [] },
  {
    name: 'iptables, ETP Local with annotation: still local',
    svc: LOCAL,
    annotations: { [PL]: 'true' },
    profile: 'iptables',
    verdict: 'NotApplicable',
    rootCause: 'VipServedLocally',
    changes: [],
  },
  {
    name: 'iptables, all Dead is not read as a VIP drop',
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0, ALL_DEAD)] },
    profile: 'iptables',
    verdict: 'NotApplicable',
    rootCause: 'VipServedLocally',
  },
  { name: 'nftables, ETP Local', svc: LOCAL, profile: 'nftables', verdict: 'NotApplicable', rootCause: 'VipServedLocally' },
  { name: 'no kube-proxy (Cilium), ETP Local', svc: LOCAL, profile: 'none', verdict: 'NotApplicable', rootCause: 'VipServedLocally' },
  // --- kube-proxy mode unknown
  { name: 'mode unknown, ETP Local', svc: LOCAL, profile: 'unknown', verdict: 'AtRisk', rootCause: 'KubeProxyModeUnknown', changes: [] },
  {
    name: 'mode unknown, ETP Local, Always',
    svc: LOCAL,
    profile: 'unknown',
    policy: { l4: { preventLoopback: 'Always' } },
    verdict: 'AtRisk',
    rootCause: 'KubeProxyModeUnknown',
    changes: ['src:lbl-tcp:0->1', 'annotate'],
  },
  { name: 'mode unknown, ETP Cluster: safe in every mode', profile: 'unknown', verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp' },
  {
    name: 'mode unknown, annotation + VIP source: possible drop',
    annotations: { [PL]: 'true' },
    profile: 'unknown',
    verdict: 'AtRisk',
    rootCause: 'KubeProxyModeUnknown',
    changes: ['src:lbl-tcp:0->1'],
  },
  {
    name: 'mode unknown, every backend Dead on a VIP listener: drop observed',
    clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 0, ALL_DEAD)] },
    profile: 'unknown',
    verdict: 'AtRisk',
    rootCause: 'VipHealthCheckDropped',
    changes: ['src:lbl-tcp:0->1'],
  },
  // --- IPv6 CLBs: 100.64 is IPv4-only
  {
    name: 'private IPv6, IPVS new, ETP Local',
    svc: LOCAL,
    clb: { addressIpVersion: 'IPV6' },
    verdict: 'Unsupported',
    rootCause: 'Ipv6Clb',
    changes: [],
    message: /IPv4 only/,
  },
  { name: 'private IPv6FullChain, ETP Local', svc: LOCAL, clb: { addressIpVersion: 'IPv6FullChain' }, verdict: 'Unsupported', rootCause: 'Ipv6Clb' },
  {
    name: 'private IPv6 with the annotation: tell the user to remove it',
    annotations: { [PL]: 'true' },
    clb: { addressIpVersion: 'IPV6' },
    verdict: 'Unsupported',
    rootCause: 'Ipv6Clb',
    changes: [],
    message: /Remove service\.cloud\.tencent\.com\/prevent-loopback/,
  },
  { name: 'private IPv6, ETP Cluster: not at risk', clb: { addressIpVersion: 'IPV6' }, verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp' },
  { name: 'private IPv6, iptables', svc: LOCAL, clb: { addressIpVersion: 'IPV6' }, profile: 'iptables', verdict: 'NotApplicable', rootCause: 'VipServedLocally' },
  // --- status.loadBalancer.ingress[].ipMode (KEP-1860): Proxy makes kube-proxy ignore the VIP in every mode
  {
    name: 'ipMode Proxy, iptables: calls leave the node and reach the CLB',
    svc: { ipModes: ['Proxy'] },
    profile: 'iptables',
    verdict: 'AtRisk',
    rootCause: 'IpModeProxy',
    changes: [],
    message: /ipMode is Proxy/,
  },
  {
    name: 'ipMode Proxy, IPVS new, ETP Local with prevent-loopback: nothing loopguard writes helps',
    svc: { ...LOCAL, ipModes: ['Proxy'] },
    annotations: { [PL]: 'true' },
    verdict: 'AtRisk',
    rootCause: 'IpModeProxy',
    changes: [],
  },
  { name: 'ipMode Proxy on a public CLB: no loopback', svc: { ipModes: ['Proxy'] }, clb: { loadBalancerType: 'OPEN' }, verdict: 'NotApplicable', rootCause: 'PublicClb' },
  { name: 'ipMode VIP is what kube-proxy short-circuits', svc: { ipModes: ['VIP'] }, profile: 'iptables', verdict: 'NotApplicable', rootCause: 'VipServedLocally' },
];

function run(row: Row) {
  const svc = service(row.svc, row.annotations);
  if (row.annotations?.['service.kubernetes.io/loadbalance-id'] === '') delete svc.annotations?.['service.kubernetes.io/loadbalance-id'];
  return assessTarget(svc, rowContext(row));
}

describe('assessTarget: a Service', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const a = run(row);
    expectRow(a, row);
    if (row.annotationDesired !== undefined) {
      expect(a.desired?.layer).toBe('L4');
      expect((a.desired as L4DesiredState).preventLoopback.desired).toBe(row.annotationDesired);
    }
    if (row.warning) expect(a.warnings.join('\n')).toMatch(row.warning);
    expect(a.rootCause.message.length).toBeGreaterThan(10);
  });

  it('covers every L4 verdict', () => {
    const verdicts = new Set(rows.map((r) => r.verdict));
    expect([...verdicts].sort()).toEqual(['AtRisk', 'Mitigated', 'NotApplicable', 'Pending', 'Skipped', 'Unsupported'].sort());
  });

  it('never plans the annotation before a VIP-sourced listener is switched', () => {
    for (const row of rows) {
      const changes = run(row).changes;
      const annotateAt = changes.findIndex((c) => c.action === 'AddPreventLoopbackAnnotation');
      if (annotateAt < 0) continue;
      expect(changes.slice(annotateAt + 1).some((c) => c.action === 'SetListenerHealthCheckSource')).toBe(false);
    }
  });

  it('records the desired state per listener, and the message says why the annotation is not wanted', () => {
    const a = run({ name: 'old', svc: LOCAL, profile: 'ipvsOld', verdict: 'AtRisk', rootCause: 'KubeProxyTooOld' });
    const d = a.desired as L4DesiredState;
    expect(d.loadBalancerId).toBe('lb-abc');
    expect(d.listeners).toEqual([{ listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, currentSourceIpType: 0 }]);
    expect(d.preventLoopback).toEqual({ present: false, desired: false });
    expect(a.rootCause.message).toContain('upgrade the kube-system/kube-proxy DaemonSet image to v1.18.4-tke.20');
    const b = run({ name: 'new', svc: LOCAL, verdict: 'AtRisk', rootCause: 'PodSourceNotMasqueraded' });
    expect((b.desired as L4DesiredState).listeners[0]?.desiredSourceIpType).toBe(1);
    expect(b.loadBalancerId).toBe('lb-abc');
    expect(b.alternatives.map((x) => x.advice).join(' ')).toMatch(/svc\.cluster\.local/);
  });

  it('reports observed mitigations', () => {
    const a = run({
      name: 'm',
      svc: LOCAL,
      annotations: { [PL]: 'true' },
      clb: { listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] },
      verdict: 'Mitigated',
      rootCause: 'LoopbackPrevented',
    });
    expect(a.mitigations).toEqual(['HealthCheckSourceRange100_64', 'PreventLoopbackAnnotation']);
  });

  it('ignores SCTP ports with a warning', () => {
    const a = run({ name: 's', svc: { ports: [{ port: 80, protocol: 'TCP' }, { port: 9, protocol: 'SCTP' }] }, verdict: 'NotApplicable', rootCause: 'MasqueradedToNodeIp' });
    expect(a.warnings.join()).toMatch(/9\/SCTP/);
    expect(a.verdict).toBe('NotApplicable');
  });
});
