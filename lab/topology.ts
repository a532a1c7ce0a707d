// The lab's small VPC, built from network namespaces and veth pairs created directly inside them (nothing is ever
// created in, or moved through, the caller's namespace):
//
//   pod1 203.0.113.130 ─ eth0 ══ pod1 ─ node1   (and pod2 203.0.113.138 on node2, pod3 .146 on node3, …)
//   node1 192.0.2.11 ─ eth0 ══ n1 ─┐
//   node2 192.0.2.12 ─ eth0 ══ n2 ─┼─ clb (VPC router + CLB: VIP 10.0.0.100, 100.127.0.1) ── hc ══ eth0 ─ checker
//   node3 192.0.2.13 ─ eth0 ══ n3 ─┘                                                          203.0.113.2 / 100.64.0.2
//
// Every node routes everything through the clb namespace (the VPC's router), so a reply from a node to a client
// goes back through the CLB, as TKE's VPC steers CLB return traffic; a node's kube-ipvs0 is a veth left down
// (the kernel has no dummy driver), on which the VIP is bound as kube-proxy IPVS does.
import { CLB_HC_LINK, CLB_SNAT_SOURCE, HC_RANGE_SOURCE, HC_VIP_SOURCE, POD_GATEWAY, VIP, VPC_GATEWAY, nodeIp, podCidr, podIp, podShadow, shadowIp } from './addresses.js';
import { LAB_PREFIX, orphaned } from './names.js';
import { ipNs, run, runSyncQuiet, sysctlNs } from './shell.js';

export interface Topology {
  prefix: string;
  clb: string;
  hc: string;
  /** The client pod, on node1 (= pods[0]). */
  pod: string;
  /** One pod per node, where `--probe` runs the probe agent (its DaemonSet's pods). */
  pods: string[];
  nodes: string[];
}

export const topologyNames = (prefix: string, nodeCount: number): Topology => {
  const pods = Array.from({ length: nodeCount }, (_, i) => `${prefix}pod${i + 1}`);
  return {
    prefix,
    clb: `${prefix}clb`,
    hc: `${prefix}hc`,
    pod: pods[0] ?? '',
    pods,
    nodes: Array.from({ length: nodeCount }, (_, i) => `${prefix}node${i + 1}`),
  };
};

export const allNamespaces = (t: Topology): string[] => [t.clb, t.hc, ...t.pods, ...t.nodes];

/** `ip -batch` inside one namespace: one exec for a list of iproute2 commands. */
const batch = (ns: string, lines: string[]): Promise<string> => run(['ip', '-n', ns, '-batch', '-'], `${lines.join('\n')}\n`);

/** Kernel defaults, set explicitly so the host's own settings (inherited by new namespaces) never leak in. */
const NODE_DEFAULTS = {
  'net.ipv4.conf.all.rp_filter': 0,
  'net.ipv4.conf.default.rp_filter': 0,
  'net.ipv4.conf.all.accept_local': 0,
  'net.ipv4.conf.default.accept_local': 0,
};

export async function buildTopology(t: Topology): Promise<void> {
  for (const ns of allNamespaces(t)) await run(['ip', 'netns', 'add', ns]);
  await Promise.all(allNamespaces(t).map((ns) => sysctlNs(ns, NODE_DEFAULTS)));
  // The links: each node's eth0 and the checker's eth0, peered with the clb namespace.
  for (const [i, ns] of t.nodes.entries()) {
    await run(['ip', 'link', 'add', 'eth0', 'netns', ns, 'type', 'veth', 'peer', 'name', `n${i + 1}`, 'netns', t.clb]);
  }
  await run(['ip', 'link', 'add', 'eth0', 'netns', t.hc, 'type', 'veth', 'peer', 'name', 'hc', 'netns', t.clb]);
  // Each node's veth to its pod is `pod1` (its first pod): the name kube-proxy's ruleset matches (lab/nft.ts).
  for (const [i, ns] of t.pods.entries()) {
    await run(['ip', 'link', 'add', 'eth0', 'netns', ns, 'type', 'veth', 'peer', 'name', 'pod1', 'netns', t.nodes[i] ?? '']);
  }

  await Promise.all(
    t.nodes.map((ns, i) =>
      batch(ns, [
        'link set lo up',
        'link set eth0 up',
        `addr add ${nodeIp(i)}/32 dev eth0`,
        `route add ${VPC_GATEWAY} dev eth0`,
        `route add default via ${VPC_GATEWAY} dev eth0 onlink`,
        // kube-ipvs0: holds bound VIPs only, never up (like kube-proxy's dummy interface).
        'link add kube-ipvs0 type veth peer name kube-ipvs0p',
      ]),
    ),
  );
  await Promise.all(
    t.pods.map((ns, i) =>
      batch(ns, [
        'link set lo up',
        'link set eth0 up',
        `addr add ${podIp(i)}/32 dev eth0`,
        `route add ${POD_GATEWAY} dev eth0`,
        `route add default via ${POD_GATEWAY} dev eth0 onlink`,
      ]),
    ),
  );
  await Promise.all(t.nodes.map((ns, i) => batch(ns, ['link set pod1 up', `addr add ${POD_GATEWAY}/32 dev pod1`, `route add ${podIp(i)}/32 dev pod1`])));
  await batch(t.hc, [
    'link set lo up',
    'link set eth0 up',
    `addr add ${HC_VIP_SOURCE}/32 dev eth0`,
    `addr add ${HC_RANGE_SOURCE}/32 dev eth0`,
    `route add ${CLB_HC_LINK} dev eth0`,
    `route add default via ${CLB_HC_LINK} dev eth0 onlink`,
  ]);
  await batch(t.clb, [
    'link set lo up',
    `addr add ${VIP}/32 dev lo`,
    `addr add ${CLB_SNAT_SOURCE}/32 dev lo`,
    ...t.nodes.map((_, i) => `addr add ${shadowIp(i)}/32 dev lo`),
    ...t.pods.map((_, i) => `addr add ${podShadow(i)}/32 dev lo`),
    ...t.nodes.flatMap((_, i) => [`link set n${i + 1} up`, `addr add ${VPC_GATEWAY}/32 dev n${i + 1}`, `route add ${nodeIp(i)}/32 dev n${i + 1}`]),
    'link set hc up',
    `addr add ${CLB_HC_LINK}/32 dev hc`,
    `route add ${HC_VIP_SOURCE}/32 dev hc`,
    `route add ${HC_RANGE_SOURCE}/32 dev hc`,
    // The VPC routes each node's pod CIDR to the node (GlobalRouter).
    ...t.nodes.map((_, i) => `route add ${podCidr(i)} via ${nodeIp(i)} dev n${i + 1}`),
  ]);
  // arp_announce=2: the clb namespace asks "who has 192.0.2.11" from its own link address. By default Linux puts the
  // packet's source in the ARP request — the VIP for a health check — and a node with the VIP bound drops that ARP
  // as a martian too, so the SYN would never even leave the CLB. A real VPC has no ARP between CLB and nodes.
  await sysctlNs(t.clb, { 'net.ipv4.ip_forward': 1, 'net.ipv4.conf.all.arp_announce': 2 });
  await Promise.all(t.nodes.map((ns) => sysctlNs(ns, { 'net.ipv4.conf.eth0.rp_filter': 0, 'net.ipv4.conf.eth0.accept_local': 0, 'net.ipv4.ip_forward': 1 })));
}

/** Binds or unbinds the VIP on a node's kube-ipvs0 (the kernel then adds/removes its `local` route). */
export async function setVipBound(ns: string, bound: boolean): Promise<void> {
  const has = (await ipNs(ns, ['-o', 'addr', 'show', 'dev', 'kube-ipvs0'])).includes(` ${VIP}/32 `);
  if (bound && !has) await ipNs(ns, ['addr', 'add', `${VIP}/32`, 'dev', 'kube-ipvs0']);
  if (!bound && has) await ipNs(ns, ['addr', 'del', `${VIP}/32`, 'dev', 'kube-ipvs0']);
}

/** Lab namespaces that exist now (optionally only those of one prefix). */
export async function labNamespaces(prefix = LAB_PREFIX): Promise<string[]> {
  const out = await run(['ip', 'netns', 'list']);
  return out
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(prefix));
}

/**
 * Removes namespaces: first the processes still inside them (only ever the lab's own agents: nobody else enters a
 * namespace this run created), then the namespace, which takes its veths and nft tables with it.
 */
export async function removeNamespaces(names: string[]): Promise<void> {
  for (const ns of names) {
    const pids = (await run(['ip', 'netns', 'pids', ns]).catch(() => '')).split('\n').filter(Boolean).map(Number);
    for (const pid of pids) killQuiet(pid);
    await run(['ip', 'netns', 'del', ns]).catch(() => undefined);
  }
}

export function removeNamespacesSync(names: string[]): void {
  for (const ns of names) {
    for (const pid of runSyncQuiet(['ip', 'netns', 'pids', ns]).split('\n').filter(Boolean).map(Number)) killQuiet(pid);
    runSyncQuiet(['ip', 'netns', 'del', ns]);
  }
}

/** Namespaces left by lab runs whose process is gone (killed with SIGKILL, a crashed CI job); removed. */
export async function reapOrphans(): Promise<string[]> {
  const orphans = (await labNamespaces()).filter(orphaned);
  await removeNamespaces(orphans);
  return orphans;
}

function killQuiet(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
