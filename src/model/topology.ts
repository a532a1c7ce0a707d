// Topology alternatives: what a user can change about how in-cluster callers reach a target, next to (or instead
// of) what loopguard changes on the CLB. Each item says what to do for this very target, what it fixes and what it
// does not, and the document it rests on, so Audit (status.targets[].alternatives), `loopguard doctor` and
// `loopguard plan` all print the same advice. Pure: built from the target's facts and the verdict's root cause.
//
// Sources (docs/diagnosis.md "Sources", docs/tencent-cloud.md §6, §7); each item names a public page a user can open:
//  - TKE "CLB Loopback" FAQ: Service DNS name, CoreDNS `rewrite`, anti-affinity with
//    externalTrafficPolicy: Local, direct-access (VPC-CNI) still loops for same-node pairs;
//  - kube-proxy's IPVS rules: it is Local that keeps the pod IP (Cluster masquerades to the node IP);
//  - KEP-1860 `ipMode: Proxy` makes kube-proxy ignore the LB address.
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import type { L4Cause } from './cause.js';
import type { IngressFacts, ServiceFacts } from './facts.js';
import type { RootCauseId } from './root-causes.js';

export interface Alternative {
  id: 'ServiceDnsName' | 'CoreDnsRewrite' | 'LocalWithAntiAffinity' | 'DirectAccess' | 'IpModeProxy';
  /** What to do, for this target. */
  advice: string;
  /** What it fixes and what it leaves. */
  limits: string;
  /** The document it rests on. */
  source: string;
}

const TKE_DOC = 'TKE "CLB Loopback" https://www.tencentcloud.com/document/product/457/42976';
export const SOURCES = {
  suggestions: `${TKE_DOC}, FAQ "Are there any suggestions?"`,
  antiAffinity: `${TKE_DOC}, FAQ "Can anti-affinity deployment of the client and server avoid loopback?"`,
  directAccess: `${TKE_DOC}, FAQ "Does the direct LB-Pod connection of VPC-CNI have the CLB loopback issue?"; annotations https://cloud.tencent.com/document/product/457/51258`,
  localInIpvs: 'kube-proxy IPVS: KUBE-LOAD-BALANCER-LOCAL returns before KUBE-MARK-MASQ (https://github.com/kubernetes/kubernetes/blob/master/pkg/proxy/ipvs/proxier.go)',
  ipMode: 'KEP-1860 status.loadBalancer.ingress[].ipMode, GA in Kubernetes 1.32: kube-proxy skips Proxy-mode addresses (https://kubernetes.io/docs/concepts/services-networking/service/#load-balancer-ip-mode)',
} as const;

/** A one-line summary of the topology workarounds, for messages that cannot carry the list. */
export const TOPOLOGY_ADVICE =
  'call the backend by its Service DNS name (<service>.<namespace>.svc.cluster.local) or a CoreDNS rewrite instead of the CLB address, or use externalTrafficPolicy: Local with client/server anti-affinity';

/** Root causes where in-cluster callers can loop back through the CLB: the topology workarounds apply. */
const LOOPING: ReadonlySet<RootCauseId> = new Set<RootCauseId>([
  'PodSourceNotMasqueraded',
  'DirectAccessSameNode',
  'KubeProxyTooOld',
  'KubeProxyVersionUnknown',
  'KubeProxyModeUnknown',
  'MitigationDisabledByPolicy',
  'HealthCheckSourceCapabilityMissing',
  'Ipv6Clb',
  'IpModeProxy',
  'L7Loopback',
  'KeepaliveCapabilityMissing',
  'TkeServiceConfigAmbiguous',
]);

/** Verdicts that hold only while kube-proxy answers the VIP on the node (what `ipMode: Proxy` takes away). */
const SHORT_CIRCUITED: ReadonlySet<RootCauseId> = new Set<RootCauseId>(['VipServedLocally', 'LoopbackPrevented']);

function dnsName(name: string, namespace: string): string {
  return `${name}.${namespace}.svc.cluster.local`;
}

function isTrue(annotations: Readonly<Record<string, string>> | undefined, key: string): boolean {
  return annotations?.[key]?.trim().toLowerCase() === 'true';
}

/** `cause.at.vip`: the address callers use today; a public CLB: nothing loops, nothing to advise. */
export function serviceAlternatives(svc: ServiceFacts, cause: L4Cause): Alternative[] {
  const { id, at } = cause;
  if (at.public) return [];
  const ports = svc.ports.map((p) => p.port).join(', ');
  const out: Alternative[] = [];
  if (SHORT_CIRCUITED.has(id)) {
    out.push({
      id: 'IpModeProxy',
      advice: 'keep status.loadBalancer.ingress[].ipMode unset or VIP (TKE does not set it; another load-balancer controller or a Kubernetes ≥ 1.30 upgrade path might)',
      limits: `this Service is safe only because kube-proxy answers VIP ${at.vip} on the node; with ipMode: Proxy kube-proxy ignores the VIP, in-cluster calls go through the CLB with the pod IP and can loop back, in iptables mode too`,
      source: SOURCES.ipMode,
    });
    return out;
  }
  if (!LOOPING.has(id)) return out;
  out.push({
    id: 'ServiceDnsName',
    advice: `in-cluster callers use ${dnsName(svc.name, svc.namespace)} (port ${ports}) instead of VIP ${at.vip}`,
    limits: "kube-proxy answers the Service's ClusterIP on the caller's node, so the CLB is never on the path: no loopback for those callers; it does not change the CLB's own health checks",
    source: SOURCES.suggestions,
  });
  out.push({
    id: 'CoreDnsRewrite',
    advice: `callers that must keep a domain name: add "rewrite name <domain> ${dnsName(svc.name, svc.namespace)}" to the Corefile in ConfigMap kube-system/coredns`,
    limits: 'one domain to one Service, on the same ports (DNS does not map ports); several Services behind one domain need an in-cluster ingress controller as the rewrite target',
    source: SOURCES.suggestions,
  });
  const directAccess = isTrue(svc.annotations, ServiceAnnotation.DirectAccess);
  if (directAccess) {
    out.push({
      id: 'LocalWithAntiAffinity',
      advice: "keep callers off the nodes that run this Service's pods (podAntiAffinity on the callers against the backend pods' labels)",
      limits: 'direct-access sends calls to the pods themselves, so only a caller on a node running a backend pod can loop back; every caller must be covered',
      source: SOURCES.directAccess,
    });
  } else if (svc.externalTrafficPolicy === 'Local') {
    const ipvs = at.profile.kubeProxyMode === 'ipvs' || at.profile.kubeProxyMode === 'unknown';
    out.push({
      id: 'LocalWithAntiAffinity',
      advice: "keep callers off the nodes that run this Service's pods (podAntiAffinity on the callers against the backend pods' labels): with externalTrafficPolicy: Local the CLB only forwards to those nodes",
      limits:
        'every caller must be covered, and a caller scheduled next to a backend pod loops again' +
        (ipvs
          ? '; in IPVS mode Local is itself what keeps the pod IP: externalTrafficPolicy: Cluster masquerades calls to the node IP and removes the L4 loopback instead, at the cost of the client source IP'
          : ''),
      source: ipvs ? `${SOURCES.antiAffinity}; ${SOURCES.localInIpvs}` : SOURCES.antiAffinity,
    });
  }
  if (id === 'IpModeProxy') {
    out.push({
      id: 'IpModeProxy',
      advice: 'remove ipMode: Proxy from status.loadBalancer.ingress (turn it off in the controller that writes this Service\'s status)',
      limits: `kube-proxy then answers VIP ${at.vip} on the node again: in iptables or nftables mode in-cluster calls never reach the CLB; in IPVS mode prevent-loopback (and its health-check source) can then take effect`,
      source: SOURCES.ipMode,
    });
  } else {
    out.push({
      id: 'IpModeProxy',
      advice: 'do not expect ipMode: Proxy (Kubernetes ≥ 1.30, set in status by the load-balancer controller) to help',
      limits: `kube-proxy would then ignore VIP ${at.vip}: health checks from the VIP are no longer dropped, but every in-cluster call goes through the CLB and can loop back, in iptables mode too`,
      source: SOURCES.ipMode,
    });
  }
  return out;
}

export function ingressAlternatives(ing: IngressFacts, rootCause: RootCauseId): Alternative[] {
  if (!LOOPING.has(rootCause)) return [];
  const out: Alternative[] = [];
  // The Services an Ingress routes to, with the hosts that reach each one.
  const rules = ing.rules.map((r) => ({ host: r.host ?? '', services: [...new Set(r.services ?? [])] }));
  const services = [...new Set([...rules.flatMap((r) => r.services), ...(ing.defaultBackend ? [ing.defaultBackend] : [])])];
  const names = services.length > 0 ? services.map((s) => dnsName(s, ing.namespace)).join(', ') : `<service>.${ing.namespace}.svc.cluster.local`;
  out.push({
    id: 'ServiceDnsName',
    advice: `in-cluster callers call the backend Service directly: ${names}`,
    limits: "the CLB is never on the path, so nothing loops; it bypasses the Ingress's host/path routing and TLS: callers pick the backend and its port themselves",
    source: SOURCES.suggestions,
  });
  const hosts = rules.filter((r) => r.host !== '');
  const single = hosts.filter((r) => r.services.length === 1);
  const shared = hosts.filter((r) => r.services.length !== 1);
  if (single.length > 0) {
    out.push({
      id: 'CoreDnsRewrite',
      advice: `for callers that use the Ingress host, add to the Corefile in ConfigMap kube-system/coredns: ${single.map((r) => `"rewrite name ${r.host} ${dnsName(r.services[0] as string, ing.namespace)}"`).join(', ')}`,
      limits: "callers then reach the Service on the Service's port and protocol, without the Ingress's path routing and TLS",
      source: SOURCES.suggestions,
    });
  }
  if (shared.length > 0) {
    out.push({
      id: 'CoreDnsRewrite',
      advice: `host(s) ${shared.map((r) => r.host).join(', ')} route to several Services: deploy an in-cluster ingress controller (e.g. ingress-nginx) with the same rules and rewrite the host(s) to its Service in the CoreDNS Corefile`,
      limits: 'in-cluster callers keep host and path routing without passing the CLB; the controller is one more thing to run',
      source: SOURCES.suggestions,
    });
  }
  const directAccess = isTrue(ing.annotations, IngressAnnotation.DirectAccess);
  out.push({
    id: 'LocalWithAntiAffinity',
    advice: `${directAccess ? '' : 'externalTrafficPolicy: Local on the backend Service(s) and '}podAntiAffinity that keeps callers off the nodes running the backend pods`,
    limits:
      'the CLB then forwards only to nodes with backend pods, which no caller shares; every caller must be covered' +
      (directAccess ? '' : '; in IPVS mode a backend that is itself a private LoadBalancer Service becomes at risk at L4 with Local'),
    source: directAccess ? SOURCES.directAccess : `${SOURCES.antiAffinity}; ${SOURCES.localInIpvs}`,
  });
  if (!directAccess) {
    out.push({
      id: 'DirectAccess',
      advice: `${IngressAnnotation.DirectAccess}: "true" (VPC-CNI): the CLB forwards to the backend pods instead of every node's NodePort`,
      limits: 'only a caller on a node that runs a backend pod can still loop back; pair it with anti-affinity',
      source: SOURCES.directAccess,
    });
  }
  return out;
}

/** One line for status and text output: what to do — what it fixes and leaves [source]. */
export function alternativeText(a: Alternative): string {
  return `${a.advice} — ${a.limits} [${a.source}]`;
}
