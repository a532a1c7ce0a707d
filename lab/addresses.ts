// The lab's addresses: documentation ranges (RFC 5737) for the VPC, the nodes and the pods, an RFC 1918 address for
// the VIP, 100.64.0.0/10 and 100.127.0.0/16 for the CLB's own sources, as on Tencent Cloud (TKE-LOOPBACK in
// tencent-cloud.md §7: "allow 100.127.0.0/16"). Nothing here is routed outside the lab's namespaces.

/**
 * The CLB's VIP (a private CLB's address in the VPC). kube-proxy IPVS binds it on nodes (kube-ipvs0). RFC 1918, as
 * a real private CLB's VIP is (its VPC's CIDR must be: docs/probe.md §2): the probe agent sends only to such
 * addresses, and the lab runs that agent unmodified (`--probe`).
 */
export const VIP = '10.0.0.100';
/** The VPC router's address as every node sees it (the CLB namespace also routes the VPC). */
export const VPC_GATEWAY = '192.0.2.1';
/** Node i (0-based): 192.0.2.11, .12, .13. */
export const nodeIp = (i: number): string => `192.0.2.${11 + i}`;
export const nodeName = (i: number): string => `node${i + 1}`;
/**
 * The client pod on node1 (the TKE loopback docs' client: "集群中的 Pod 访问 CLB"). Each node i routes its pod CIDR
 * (a /29, node1's 203.0.113.128/29) to its pod's veth; the VPC routes it to node i (TKE's GlobalRouter mode). The CLB
 * cannot tell a pod IP belongs to a node, so its own guard (skip a real server whose IP is the source, TKE-CN) does
 * not apply. The tables measure from node1's pod; `--probe` runs the probe agent in every node's pod, as its
 * DaemonSet does.
 */
export const podCidr = (i: number): string => `203.0.113.${128 + 8 * i}/29`;
export const podIp = (i: number): string => `203.0.113.${130 + 8 * i}`;
export const POD_IP = podIp(0);
/** A pod's gateway, on its node's side of the pod's veth (as Calico-style CNIs do). */
export const POD_GATEWAY = '169.254.1.1';
/** Node i's pod's stand-in in the CLB namespace for the L7 pass-through (as `shadowIp` is the node's). */
export const podShadow = (i: number): string => `203.0.113.${80 + i}`;
/** The CLB's side of the health checker's link. */
export const CLB_HC_LINK = '203.0.113.1';
/** The health checker's own address; the CLB rewrites it to the VIP (SourceIpType 0, "probe from the VIP"). */
export const HC_VIP_SOURCE = '203.0.113.2';
/** The health checker's 100.64.0.0/10 address (SourceIpType 1), left as it is. */
export const HC_RANGE_SOURCE = '100.64.0.2';
/** The L7 CLB's own source in SNAT/keepalive mode (TKE-LOOPBACK: CLB then no longer passes the client IP through). */
export const CLB_SNAT_SOURCE = '100.127.0.1';
/**
 * Node i's stand-in inside the CLB namespace: the L7 proxy binds its upstream socket here and nftables rewrites
 * it to the client's IP (node i's), so the node sees the client IP as a pass-through CLB sends it. (Binding the
 * client IP itself would need IP_TRANSPARENT, which Node.js cannot set.)
 */
export const shadowIp = (i: number): string => `203.0.113.${65 + i}`;
export const SHADOW_RANGE = '203.0.113.64/27';

/** NodePorts every node's backend answers on (the CLB's real servers). */
export const TCP_NODEPORT = 30081;
export const HTTP_NODEPORT = 30080;
/** The CLB's listeners: L4 TCP and L7 HTTP. */
export const L4_PORT = 81;
export const L7_PORT = 80;

export type ProbeSource = 'vip' | 'range';
/** Who calls the CLB: the pod on node1 (default), or node1 itself (host network: source = the node's IP). */
export type ClientKind = 'pod' | 'node';
/** The health checker's bind address for each configured source (SourceIpType 0 → VIP, 1 → 100.64). */
export const probeBindAddress = (source: ProbeSource): string => (source === 'vip' ? HC_VIP_SOURCE : HC_RANGE_SOURCE);
