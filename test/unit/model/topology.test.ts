// Topology alternatives in the assessment: which ones a target gets, what each says it fixes and leaves, that each
// names its source, and that the policy status carries them (so Audit prints what doctor and plan print).
import { describe, expect, it } from '@jest/globals';
import { assessTarget } from '../../../src/model/assessment.js';
import { buildPolicyStatus, MAX_ALTERNATIVES } from '../../../src/model/status.js';
import { alternativeText, type Alternative } from '../../../src/model/topology.js';
import { clb, context, ingress, l4Listener, listener, service } from './fixtures.js';

const LOCAL = { externalTrafficPolicy: 'Local' as const };
const ids = (a: readonly Alternative[]) => a.map((x) => x.id);
// Every source names a page a user can open (no in-repo or background document).
const SOURCE = /^(TKE "CLB Loopback" https:\/\/www\.tencentcloud\.com\/|kube-proxy IPVS: .*\(https:\/\/github\.com\/kubernetes\/kubernetes\/|KEP-1860 .*\(https:\/\/kubernetes\.io\/)/;

const L7 = clb({
  loadBalancerId: 'lb-ing',
  listeners: [listener('lbl-http', 'HTTP', 80, { keepaliveEnable: 0, rules: [{ locationId: 'loc-1', domain: 'shop.example.com', url: '/', healthCheck: { sourceIpType: 1 } }] })],
});

describe('topology alternatives', () => {
  it('IPVS + ETP Local at risk: DNS name, CoreDNS rewrite, anti-affinity (and that Cluster is the L4 way out), not ipMode', () => {
    const a = assessTarget(service(LOCAL), context({}));
    expect(a.rootCause.id).toBe('PodSourceNotMasqueraded');
    expect(ids(a.alternatives)).toEqual(['ServiceDnsName', 'CoreDnsRewrite', 'LocalWithAntiAffinity', 'IpModeProxy']);
    const [dns, rewrite, local, ipMode] = a.alternatives as [Alternative, Alternative, Alternative, Alternative];
    expect(dns.advice).toBe('in-cluster callers use web.shop.svc.cluster.local (port 80) instead of VIP 10.0.0.10');
    expect(rewrite.advice).toContain('rewrite name <domain> web.shop.svc.cluster.local');
    // kube-proxy's IPVS rules: in IPVS mode Local is what keeps the pod IP; the limits say so.
    expect(local.limits).toMatch(/in IPVS mode Local is itself what keeps the pod IP: externalTrafficPolicy: Cluster masquerades/);
    expect(local.source).toMatch(/457\/42976.*anti-affinity.*KUBE-LOAD-BALANCER-LOCAL/);
    expect(ipMode.advice).toMatch(/do not expect ipMode: Proxy/);
    expect(ipMode.limits).toMatch(/in iptables mode too/);
    for (const x of a.alternatives) expect(x.source).toMatch(SOURCE);
  });

  it('direct-access: loopback remains for same-node pairs, anti-affinity is the way out', () => {
    const a = assessTarget(service({}, { 'service.cloud.tencent.com/direct-access': 'true' }), context({}));
    expect(a.rootCause.id).toBe('DirectAccessSameNode');
    const local = a.alternatives.find((x) => x.id === 'LocalWithAntiAffinity');
    expect(local?.limits).toMatch(/only a caller on a node running a backend pod can loop back/);
    expect(local?.source).toMatch(/direct LB-Pod connection of VPC-CNI/);
  });

  it('iptables answers the VIP locally: only the ipMode caveat, since ipMode: Proxy would expose the Service', () => {
    const a = assessTarget(service(LOCAL), context({ profile: 'iptables' }));
    expect(a.rootCause.id).toBe('VipServedLocally');
    expect(ids(a.alternatives)).toEqual(['IpModeProxy']);
    expect(a.alternatives[0]?.limits).toMatch(/safe only because kube-proxy answers VIP 10\.0\.0\.10 on the node/);
  });

  it('ipMode: Proxy on the Service: at risk in iptables too, and the alternative is to remove it', () => {
    const a = assessTarget(service({ ipModes: ['Proxy'] }), context({ profile: 'iptables' }));
    expect(a).toMatchObject({ verdict: 'AtRisk', rootCause: { id: 'IpModeProxy' }, changes: [] });
    expect(a.alternatives.at(-1)).toMatchObject({ id: 'IpModeProxy', advice: expect.stringMatching(/^remove ipMode: Proxy/) });
  });

  it('nothing for targets that cannot loop back', () => {
    expect(assessTarget(service(), context({})).alternatives).toEqual([]); // ETP Cluster in IPVS: masqueraded
    expect(assessTarget(service(LOCAL), context({ clb: clb({ loadBalancerType: 'OPEN' }) })).alternatives).toEqual([]);
    const mitigated = assessTarget(service(LOCAL, { 'service.cloud.tencent.com/prevent-loopback': 'true' }), context({ clb: clb({ listeners: [l4Listener('lbl-tcp', 'TCP', 80, 1)] }) }));
    expect(mitigated.rootCause.id).toBe('LoopbackPrevented');
    expect(ids(mitigated.alternatives)).toEqual(['IpModeProxy']);
  });

  it('L7: the backend Services by DNS name, a CoreDNS rewrite of the host, anti-affinity, direct-access', () => {
    const ing = ingress({ rules: [{ host: 'shop.example.com', paths: ['/'], services: ['web'] }, { host: 'mixed.example.com', paths: ['/a', '/b'], services: ['a', 'b'] }] });
    const a = assessTarget(ing, context({ clb: L7 }));
    expect(a.rootCause.id).toBe('L7Loopback');
    expect(ids(a.alternatives)).toEqual(['ServiceDnsName', 'CoreDnsRewrite', 'CoreDnsRewrite', 'LocalWithAntiAffinity', 'DirectAccess']);
    expect(a.alternatives[0]?.advice).toContain('web.shop.svc.cluster.local, a.shop.svc.cluster.local, b.shop.svc.cluster.local');
    expect(a.alternatives[1]?.advice).toContain('"rewrite name shop.example.com web.shop.svc.cluster.local"');
    expect(a.alternatives[2]?.advice).toMatch(/mixed\.example\.com route to several Services: deploy an in-cluster ingress controller/);
    expect(a.alternatives[4]?.limits).toMatch(/only a caller on a node that runs a backend pod can still loop back/);
    // Keepalive on: nothing loops, nothing to suggest.
    const on = assessTarget(ing, context({ clb: { ...L7, listeners: L7.listeners.map((l) => ({ ...l, keepaliveEnable: 1 })) } }));
    expect(on.alternatives).toEqual([]);
  });

  it('Audit shows them: status.targets[].alternatives, bounded, one line each with the source', () => {
    const a = assessTarget(service(LOCAL), context({}));
    const status = buildPolicyStatus({ mode: 'Audit', outcomes: [{ assessment: a }], now: new Date(0) });
    const shown = status.targets?.[0]?.alternatives ?? [];
    expect(shown).toHaveLength(a.alternatives.length);
    expect(shown.length).toBeLessThanOrEqual(MAX_ALTERNATIVES);
    expect(shown[0]).toBe(alternativeText(a.alternatives[0] as Alternative).slice(0, 512));
    for (const line of shown) {
      expect(line.length).toBeLessThanOrEqual(512);
      expect(line).toMatch(/ — .* \[(TKE "CLB Loopback" https:\/\/|kube-proxy IPVS: |KEP-1860 )/);
    }
  });
});
