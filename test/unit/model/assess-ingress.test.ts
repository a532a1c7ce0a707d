import { describe, expect, it } from '@jest/globals';
import { assessTarget } from '../../../src/model/assessment.js';
import type { L7DesiredState } from '../../../src/model/desired-state.js';
import type { IngressFacts, ListenerFacts, RuleFacts } from '../../../src/model/facts.js';
import { expectRow, ingress, l4Listener, listener, rowContext, type AssessRow } from './fixtures.js';

function rule(id: string, sourceIpType: 0 | 1, url = '/'): RuleFacts {
  return { locationId: id, domain: 'shop.example.com', url, healthCheck: { sourceIpType } };
}

function http(keepalive: 0 | 1, rules: RuleFacts[] = [rule('loc-a', 0)]): ListenerFacts {
  return listener('lbl-80', 'HTTP', 80, { keepaliveEnable: keepalive, rules });
}
function https(keepalive: 0 | 1, rules: RuleFacts[] = [rule('loc-b', 0), rule('loc-c', 0, '/api')]): ListenerFacts {
  return listener('lbl-443', 'HTTPS', 443, { keepaliveEnable: keepalive, rules });
}

const L7 = { loadBalancerId: 'lb-ing', listeners: [http(0), https(0)] };
const ALL_CHANGES = ['auto:front-auto-ingress-config', 'keepalive:lbl-80', 'keepalive:lbl-443', 'rule:loc-a:0->1', 'rule:loc-b:0->1', 'rule:loc-c:0->1'];

interface Row extends AssessRow {
  ing?: Partial<IngressFacts>;
  advice?: RegExp;
  noAdvice?: RegExp;
  config?: L7DesiredState['tkeServiceConfig'];
}

const rows: Row[] = [
  { name: 'loopguard.dev/skip', annotations: { 'loopguard.dev/skip': 'true' }, verdict: 'Skipped', rootCause: 'SkipAnnotation', changes: [] },
  { name: 'TKE ingress mode: skip', annotations: { 'ingress.cloud.tencent.com/mode': 'skip' }, verdict: 'Skipped', rootCause: 'TkeSyncSkipped' },
  { name: 'service mode: skip does not apply to an Ingress', annotations: { 'service.cloud.tencent.com/mode': 'skip' }, verdict: 'AtRisk', rootCause: 'L7Loopback' },
  { name: 'nginx class annotation', annotations: { 'kubernetes.io/ingress.class': 'nginx' }, verdict: 'NotApplicable', rootCause: 'NotClbIngress', message: /nginx/ },
  { name: 'nginx ingressClassName', ing: { ingressClassName: 'nginx' }, verdict: 'NotApplicable', rootCause: 'NotClbIngress' },
  { name: 'qcloud class annotation', annotations: { 'kubernetes.io/ingress.class': 'qcloud' }, verdict: 'AtRisk', rootCause: 'L7Loopback' },
  {
    name: 'annotation wins over ingressClassName (TKE reads the annotation)',
    annotations: { 'kubernetes.io/ingress.class': 'qcloud' },
    ing: { ingressClassName: 'nginx' },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
  },
  {
    name: 'no CLB id yet',
    annotations: { 'kubernetes.io/ingress.qcloud-loadbalance-id': '' },
    verdict: 'Pending',
    rootCause: 'ClbNotAssigned',
    message: /kubernetes\.io\/ingress\.qcloud-loadbalance-id/,
  },
  { name: 'CLB not read yet', clb: { state: 'NotObserved' }, verdict: 'Pending', rootCause: 'ClbNotObserved' },
  { name: 'no HTTP/HTTPS listener yet', clb: { loadBalancerId: 'lb-ing', listeners: [l4Listener('x', 'TCP', 80, 0)] }, verdict: 'Pending', rootCause: 'ListenersNotReady' },
  { name: 'public CLB', clb: { ...L7, loadBalancerType: 'OPEN' }, verdict: 'NotApplicable', rootCause: 'PublicClb', changes: [] },
  { name: 'private IPv6 CLB', clb: { ...L7, addressIpVersion: 'IPV6' }, verdict: 'Unsupported', rootCause: 'Ipv6Clb', changes: [] },
  {
    name: 'private, no keepalive, no TkeServiceConfig: full plan',
    clb: L7,
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES,
    message: /~4 s/,
    config: { name: 'front-auto-ingress-config', source: 'ToBeCreated' },
  },
  { name: 'same plan in iptables mode', clb: L7, profile: 'iptables', verdict: 'AtRisk', rootCause: 'L7Loopback', changes: ALL_CHANGES },
  { name: 'same plan when the profile is unknown', clb: L7, profile: 'unknown', verdict: 'AtRisk', rootCause: 'L7Loopback', changes: ALL_CHANGES },
  {
    name: 'named TkeServiceConfig: no auto annotation',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config': 'front-conf' },
    clb: L7,
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES.slice(1),
    config: { name: 'front-conf', source: 'Annotation' },
  },
  {
    name: 'auto TkeServiceConfig already on',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' },
    clb: L7,
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES.slice(1),
    config: { name: 'front-auto-ingress-config', source: 'Auto' },
  },
  {
    name: 'both TkeServiceConfig annotations: blocked',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config': 'front-conf', 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' },
    clb: L7,
    verdict: 'AtRisk',
    rootCause: 'TkeServiceConfigAmbiguous',
    changes: [],
    blocker: 'TargetMisconfigured',
  },
  {
    name: 'keepalive on everywhere, rules still on the VIP: mitigated, rule plan remains',
    clb: { loadBalancerId: 'lb-ing', listeners: [http(1), https(1)] },
    verdict: 'Mitigated',
    rootCause: 'KeepaliveEnabled',
    changes: ['auto:front-auto-ingress-config', 'rule:loc-a:0->1', 'rule:loc-b:0->1', 'rule:loc-c:0->1'],
  },
  {
    name: 'keepalive on and rules on 100.64: converged',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' },
    clb: { loadBalancerId: 'lb-ing', listeners: [http(1, [rule('loc-a', 1)]), https(1, [rule('loc-b', 1)])] },
    verdict: 'Mitigated',
    rootCause: 'KeepaliveEnabled',
    changes: [],
  },
  {
    name: 'keepalive on one listener only',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' },
    clb: { loadBalancerId: 'lb-ing', listeners: [http(1, [rule('loc-a', 1)]), https(0, [rule('loc-b', 1)])] },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ['keepalive:lbl-443'],
    message: /lbl-443/,
  },
  {
    name: 'listener without rules still gets keepalive',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' },
    clb: { loadBalancerId: 'lb-ing', listeners: [http(0, [])] },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ['keepalive:lbl-80'],
  },
  {
    name: 'policy keepalive false: at risk by policy, rules still follow the policy',
    clb: L7,
    policy: { l7: { keepalive: false } },
    verdict: 'AtRisk',
    rootCause: 'MitigationDisabledByPolicy',
    changes: ['auto:front-auto-ingress-config', 'rule:loc-a:0->1', 'rule:loc-b:0->1', 'rule:loc-c:0->1'],
    noAdvice: /100\.127/,
  },
  {
    name: 'policy keepalive false and rules Unmanaged: nothing to do',
    clb: L7,
    policy: { l7: { keepalive: false, healthCheckSource: 'Unmanaged' } },
    verdict: 'AtRisk',
    rootCause: 'MitigationDisabledByPolicy',
    changes: [],
  },
  {
    name: 'policy rule source VIP moves 100.64 rules back',
    annotations: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' },
    clb: { loadBalancerId: 'lb-ing', listeners: [http(1, [rule('loc-a', 1), rule('loc-d', 0, '/d')])] },
    policy: { l7: { healthCheckSource: 'VIP' } },
    verdict: 'Mitigated',
    rootCause: 'KeepaliveEnabled',
    changes: ['rule:loc-a:1->0'],
  },
  {
    name: 'account lacks keepalive: stalled, rule plan kept',
    clb: L7,
    capabilities: { keepaliveRejected: 'UnsupportedOperation: keepalive not enabled' },
    verdict: 'AtRisk',
    rootCause: 'KeepaliveCapabilityMissing',
    changes: ['auto:front-auto-ingress-config', 'rule:loc-a:0->1', 'rule:loc-b:0->1', 'rule:loc-c:0->1'],
    blocker: 'KeepaliveCapabilityMissing',
    message: /ticket/,
  },
  {
    name: 'account lacks the 100.64 source: rule changes held back, keepalive goes on',
    clb: L7,
    capabilities: { range100_64Rejected: 'InvalidParameter' },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ['auto:front-auto-ingress-config', 'keepalive:lbl-80', 'keepalive:lbl-443'],
    blocker: 'HealthCheckSourceCapabilityMissing',
  },
  {
    name: 'pass-to-target off, not opted in: security-group advice',
    clb: { ...L7, passToTarget: false },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES,
    advice: /100\.127\.0\.0\/16/,
  },
  {
    name: 'pass-to-target off, opted in: allowed before keepalive',
    clb: { ...L7, passToTarget: false },
    policy: { l7: { allowCLBTrafficByDefault: true } },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ['auto:front-auto-ingress-config', 'passToTarget', ...ALL_CHANGES.slice(1)],
    noAdvice: /100\.127/,
  },
  {
    name: 'pass-to-target declared off by the Ingress annotation, opted in: TKE owns it, no direct write, advice names the annotation',
    annotations: { 'ingress.cloud.tencent.com/pass-to-target': 'false' },
    clb: { ...L7, passToTarget: false },
    policy: { l7: { allowCLBTrafficByDefault: true } },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES,
    advice: /ingress\.cloud\.tencent\.com\/pass-to-target: "false" declares/,
  },
  {
    name: 'pass-to-target already on: no advice',
    clb: { ...L7, passToTarget: true },
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES,
    noAdvice: /100\.127/,
  },
  {
    name: 'direct-access Ingress: same plan, noted',
    annotations: { 'ingress.cloud.tencent.com/direct-access': 'true' },
    clb: L7,
    verdict: 'AtRisk',
    rootCause: 'L7Loopback',
    changes: ALL_CHANGES,
    message: /direct-access/,
  },
];

function run(row: Row) {
  const ing = ingress(row.ing, row.annotations);
  if (row.annotations?.['kubernetes.io/ingress.qcloud-loadbalance-id'] === '') delete ing.annotations?.['kubernetes.io/ingress.qcloud-loadbalance-id'];
  return assessTarget(ing, rowContext(row, { loadBalancerId: 'lb-ing', listeners: [http(0), https(0)] }));
}

describe('assessTarget: an Ingress', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const a = run(row);
    expectRow(a, row);
    if (row.advice) expect(a.advice.join('\n')).toMatch(row.advice);
    if (row.noAdvice) expect(a.advice.join('\n')).not.toMatch(row.noAdvice);
    if (row.config) expect((a.desired as L7DesiredState).tkeServiceConfig).toEqual(row.config);
  });

  it('describes the desired state per listener and rule', () => {
    const a = run({ name: 'd', clb: L7, verdict: 'AtRisk', rootCause: 'L7Loopback' });
    const d = a.desired as L7DesiredState;
    expect(d.layer).toBe('L7');
    expect(d.listeners.map((l) => [l.listenerId, l.currentKeepalive, l.desiredKeepalive])).toEqual([
      ['lbl-80', 0, 1],
      ['lbl-443', 0, 1],
    ]);
    expect(d.listeners[1]?.rules.map((r) => [r.locationId, r.url, r.currentSourceIpType, r.desiredSourceIpType])).toEqual([
      ['loc-b', '/', 0, 1],
      ['loc-c', '/api', 0, 1],
    ]);
  });

  it('lists observed mitigations', () => {
    const a = run({
      name: 'm',
      clb: { loadBalancerId: 'lb-ing', passToTarget: true, listeners: [http(1, [rule('loc-a', 1)])] },
      verdict: 'Mitigated',
      rootCause: 'KeepaliveEnabled',
    });
    expect(a.mitigations).toEqual(['Keepalive', 'RuleHealthCheckSourceRange100_64', 'ClbTrafficAllowedByDefault']);
  });
});
