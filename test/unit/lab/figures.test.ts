// The lab's pure parts: nft rulesets (what the kernel is told), percentiles and the report's tables.
import { describe, expect, it } from '@jest/globals';
import { clbRuleset, kubeProxyRuleset, nodeObservationRuleset, parseCounters } from '../../../lab/nft.js';
import { report } from '../../../lab/report.js';
import { PROFILES, type LabResults } from '../../../lab/scenarios.js';
import { percentile, summarize } from '../../../lab/stats.js';
import { latencySvg } from '../../../lab/chart.js';

describe('lab nft rulesets', () => {
  it('the L4 CLB DNATs to a random or a pinned node without SNAT; the checker and the L7 stand-ins are rewritten', () => {
    const random = clbRuleset(3, 'random');
    expect(random).toContain('dnat to numgen random mod 3 map { 0 : 192.0.2.11, 1 : 192.0.2.12, 2 : 192.0.2.13 } : 30081');
    expect(clbRuleset(3, 1)).toContain('dnat to 192.0.2.12:30081');
    expect(random).toContain('ip saddr 203.0.113.2 snat to 10.0.0.100');
    expect(random).toContain('snat ip to ip saddr map { 203.0.113.65 : 192.0.2.11, 203.0.113.66 : 192.0.2.12, 203.0.113.67 : 192.0.2.13, 203.0.113.80 : 203.0.113.130, 203.0.113.81 : 203.0.113.138, 203.0.113.82 : 203.0.113.146 }');
    // No masquerade of client traffic: the client IP must reach the node.
    expect(random).not.toMatch(/masquerade/);
  });

  it('kube-proxy redirects VIP traffic locally only while the VIP is bound; nodes count each stage', () => {
    expect(kubeProxyRuleset(true)).toContain('ip daddr 10.0.0.100 tcp dport 81 redirect to :30081');
    expect(kubeProxyRuleset(true)).toContain('iifname "pod1" ip daddr 10.0.0.100 tcp dport 81 redirect to :30081');
    expect(kubeProxyRuleset(false)).not.toContain('redirect');
    const obs = nodeObservationRuleset(0);
    expect(obs).toContain('iifname "eth0" ip saddr 192.0.2.11 tcp dport { 30080, 30081 } tcp flags & (syn | ack) == syn counter name seen_own');
    expect(obs).toContain('oifname != "eth0" ip daddr 10.0.0.100 tcp sport { 30080, 30081 } tcp flags & (syn | ack) == syn | ack counter name reply_inside_vip');
    expect(parseCounters({ nftables: [{ metainfo: {} }, { counter: { name: 'seen_vip', packets: 3 } }] })).toEqual({ seen_vip: 3 });
  });
});

describe('lab figures', () => {
  it('nearest-rank percentiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(xs, 50), percentile(xs, 99), percentile(xs, 100)]).toEqual([50, 99, 100]);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summaries, the report and the chart carry the measured values', () => {
    const pass = summarize([
      { ok: true, ms: 20, answer: 'node2', attempts: 1 },
      { ok: true, ms: 4020, answer: 'node3', attempts: 2 },
    ]);
    expect(pass).toMatchObject({ ok: 2, total: 2, byNode: { node2: 1, node3: 1 }, retried: 1, p99: 4020 });
    const snat = summarize([{ ok: true, ms: 3, answer: 'node1', attempts: 1 }]);
    const r: LabResults = {
      profile: PROFILES.short,
      nodes: 3,
      l7TimeoutMs: 4000,
      durationMs: 1,
      health: [{ source: 'vip', vipBound: true, probes: 3, alive: 0, seen: 3, delivered: 0, martianDrops: 3 }],
      l4: [{ label: 'CLB → node1', summary: summarize([{ ok: false, ms: 1000, error: 'timeout' }]), note: '' }],
      l7: [
        { mode: 'passthrough', summary: pass, latenciesMs: [20, 4020], note: '' },
        { mode: 'snat', summary: snat, latenciesMs: [3], note: '' },
      ],
    };
    const text = report(r).join('\n');
    expect(text).toMatch(/VIP \(SourceIpType 0\)\s+yes\s+0\/3 \(0 %\)\s+3\s+0\s+3/);
    expect(text).toMatch(/pass-through \(client IP kept\)\s+2\/2 \(100 %\)\s+20\.0 ms\s+4\.02 s\s+4\.02 s/);
    const svg = latencySvg(r.l7, 4000, 'title');
    expect(svg).toContain('4.02 s');
    expect(svg).toContain('CLB real-server timeout 4.00 s');
  });
});
