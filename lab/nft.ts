// nftables rulesets of the lab, as pure functions of its state (each loaded as one atomic transaction).
import { HC_VIP_SOURCE, HTTP_NODEPORT, L4_PORT, L7_PORT, POD_IP, SHADOW_RANGE, TCP_NODEPORT, VIP, nodeIp, podIp, podShadow, shadowIp } from './addresses.js';
import { NFT_TABLE } from './names.js';

/** Which real server the L4 CLB sends new connections to: one node (to measure each path) or random. */
export type L4Backend = 'random' | number;

/** Replaces a table atomically: create it if missing, delete it, define it again, in one `nft -f`. */
function replaceTable(name: string, body: string[]): string {
  return [`table ip ${name} {}`, `delete table ip ${name}`, `table ip ${name} {`, ...body.map((l) => `  ${l}`), '}', ''].join('\n');
}

/**
 * The CLB namespace. L4: DNAT of VIP:81 to a node's NodePort with no SNAT, so the node sees the client's own IP
 * (a private CLB "does not SNAT; it passes the real source IP through", TKE-CN/TKE-2021 in tencent-cloud.md §7). Health checks: the checker's
 * VIP-source probes leave with the VIP as source (SourceIpType 0). L7 pass-through: the proxy's per-client stand-in
 * addresses leave as the client's IP.
 */
export function clbRuleset(nodeCount: number, backend: L4Backend): string {
  const nodes = Array.from({ length: nodeCount }, (_, i) => i);
  const target =
    backend === 'random'
      ? `numgen random mod ${nodeCount} map { ${nodes.map((i) => `${i} : ${nodeIp(i)}`).join(', ')} } : ${TCP_NODEPORT}`
      : `${nodeIp(backend)}:${TCP_NODEPORT}`;
  const shadows = [...nodes.map((i) => `${shadowIp(i)} : ${nodeIp(i)}`), ...nodes.map((i) => `${podShadow(i)} : ${podIp(i)}`)].join(', ');
  return replaceTable(NFT_TABLE, [
    'chain prerouting {',
    '  type nat hook prerouting priority dstnat; policy accept;',
    `  ip daddr ${VIP} tcp dport ${L4_PORT} dnat to ${target}`,
    '}',
    'chain postrouting {',
    '  type nat hook postrouting priority srcnat; policy accept;',
    `  ip saddr ${HC_VIP_SOURCE} snat to ${VIP}`,
    `  ip saddr ${SHADOW_RANGE} snat ip to ip saddr map { ${shadows} }`,
    '}',
  ]);
}

/** Packet classes a node counts, by source: the VIP (CLB probes), its own IP (host-network hairpin), 100.64/10 (probes), the client pod (node1's). */
export const SOURCE_CLASSES = ['vip', 'own', 'range', 'pod'] as const;
export type SourceClass = (typeof SOURCE_CLASSES)[number];
/**
 * Where a node sees a class: SYN arrived on eth0 (before routing), SYN delivered locally (INPUT), SYN-ACK sent back
 * out of eth0 (towards the CLB) or kept inside the node (to a local address or straight to a local pod: never
 * through the CLB, which alone could undo its NAT).
 */
export const STAGES = ['seen', 'delivered', 'reply_out', 'reply_inside'] as const;
export type Stage = (typeof STAGES)[number];
export const counterName = (stage: Stage, cls: SourceClass): string => `${stage}_${cls}`;

const SYN = 'tcp flags & (syn | ack) == syn';
const SYNACK = 'tcp flags & (syn | ack) == syn | ack';
const PORTS = `{ ${HTTP_NODEPORT}, ${TCP_NODEPORT} }`;

/**
 * A node's observation table (never replaced, so its counters span a run): where each class of packet got to.
 * `seen` > 0 with `delivered` = 0 means the routing decision between PREROUTING and INPUT dropped it (the
 * martian-source check of fib_validate_source); `reply_inside` means the SYN-ACK never went back to the CLB.
 */
export function nodeObservationRuleset(i: number): string {
  const saddr: Record<SourceClass, string> = { vip: VIP, own: nodeIp(i), range: '100.64.0.0/10', pod: POD_IP };
  const rules = (stage: Stage, match: string) => SOURCE_CLASSES.map((c) => `  ${match.replace('@', saddr[c])} counter name ${counterName(stage, c)}`);
  return replaceTable(`${NFT_TABLE}_obs`, [
    ...SOURCE_CLASSES.flatMap((c) => STAGES.map((s) => `counter ${counterName(s, c)} { }`)),
    'chain prerouting {',
    '  type filter hook prerouting priority raw; policy accept;',
    ...rules('seen', `iifname "eth0" ip saddr @ tcp dport ${PORTS} ${SYN}`),
    '}',
    'chain input {',
    '  type filter hook input priority filter; policy accept;',
    ...rules('delivered', `iifname "eth0" ip saddr @ tcp dport ${PORTS} ${SYN}`),
    '}',
    'chain output {',
    '  type filter hook output priority filter; policy accept;',
    ...rules('reply_out', `oifname "eth0" ip daddr @ tcp sport ${PORTS} ${SYNACK}`),
    ...rules('reply_inside', `oifname != "eth0" ip daddr @ tcp sport ${PORTS} ${SYNACK}`),
    '}',
  ]);
}

/**
 * kube-proxy in IPVS mode with the VIP bound (prevent-loopback): connections to the VIP from the node or its pods
 * never leave the node but go to a local endpoint (IPVS in INPUT; here a redirect to the local NodePort backend).
 */
export function kubeProxyRuleset(vipBound: boolean): string {
  const redirects = vipBound ? [`  ip daddr ${VIP} tcp dport ${L4_PORT} redirect to :${TCP_NODEPORT}`, `  ip daddr ${VIP} tcp dport ${L7_PORT} redirect to :${HTTP_NODEPORT}`] : [];
  return replaceTable(`${NFT_TABLE}_kp`, [
    'chain output {',
    '  type nat hook output priority -100; policy accept;',
    ...redirects,
    '}',
    'chain prerouting {',
    '  type nat hook prerouting priority dstnat; policy accept;',
    ...redirects.map((r) => r.replace('ip daddr', 'iifname "pod1" ip daddr')),
    '}',
  ]);
}

/** Counter values from `nft -j list counters table …`. */
export function parseCounters(json: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  const items = (json as { nftables?: Array<{ counter?: { name: string; packets: number } }> }).nftables ?? [];
  for (const item of items) if (item.counter) out[item.counter.name] = item.counter.packets;
  return out;
}
