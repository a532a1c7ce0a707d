// Pure: topology alternatives, what a user can change about how in-cluster callers reach a target, each with what it
// fixes, what it leaves and its source (docs/diagnosis.md §9), for status, `loopguard doctor` and `loopguard plan`.
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import type { L4Cause, L7Cause } from './cause.js';
import type { IngressFacts, ServiceFacts, TargetFacts } from './facts.js';
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
const SOURCES = {
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

const alt = (id: Alternative['id'], advice: string, limits: string, source: string): Alternative => ({ id, advice, limits, source });
/** The alternatives that apply (`false`: one that does not). */
const those = (items: readonly (Alternative | false)[]): Alternative[] => items.filter((a): a is Alternative => a !== false);
const dnsName = (name: string, namespace: string) => `${name}.${namespace}.svc.cluster.local`;
const isTrue = (annotations: Readonly<Record<string, string>> | undefined, key: string) => annotations?.[key]?.trim().toLowerCase() === 'true';

/** The alternatives for a target whose CLB was assessed; a Gateway's are those of the Service EG generated for it. */
export function alternativesOf(t: TargetFacts, cause: L4Cause | L7Cause): Alternative[] {
  if (t.kind === 'Ingress') return ingressAlternatives(t, cause.id);
  const svc = t.kind === 'Service' ? t : 'facts' in t.service ? t.service.facts : undefined;
  return svc && cause.layer === 'L4' ? serviceAlternatives(svc, cause) : [];
}

/** `cause.at.vip`: the address callers use today; a public CLB: nothing loops, nothing to advise. */
function serviceAlternatives(svc: ServiceFacts, cause: L4Cause): Alternative[] {
  const { id, at } = cause;
  if (at.public) return [];
  // These verdicts hold only while kube-proxy answers the VIP on the node, which ipMode: Proxy takes away.
  if (id === 'VipServedLocally' || id === 'LoopbackPrevented') {
    return [alt('IpModeProxy', 'keep status.loadBalancer.ingress[].ipMode unset or VIP (TKE does not set it; another load-balancer controller or a Kubernetes ≥ 1.30 upgrade path might)',
      `this Service is safe only because kube-proxy answers VIP ${at.vip} on the node; with ipMode: Proxy kube-proxy ignores the VIP, in-cluster calls go through the CLB with the pod IP and can loop back, in iptables mode too`, SOURCES.ipMode)];
  }
  if (!LOOPING.has(id)) return [];
  const dns = dnsName(svc.name, svc.namespace);
  const ipvs = at.profile.kubeProxyMode === 'ipvs' || at.profile.kubeProxyMode === 'unknown';
  const direct = isTrue(svc.annotations, ServiceAnnotation.DirectAccess);
  const antiAffinity = "keep callers off the nodes that run this Service's pods (podAntiAffinity on the callers against the backend pods' labels)";
  return those([
    alt('ServiceDnsName', `in-cluster callers use ${dns} (port ${svc.ports.map((p) => p.port).join(', ')}) instead of VIP ${at.vip}`,
      "kube-proxy answers the Service's ClusterIP on the caller's node, so the CLB is never on the path: no loopback for those callers; it does not change the CLB's own health checks", SOURCES.suggestions),
    alt('CoreDnsRewrite', `callers that must keep a domain name: add "rewrite name <domain> ${dns}" to the Corefile in ConfigMap kube-system/coredns`,
      'one domain to one Service, on the same ports (DNS does not map ports); several Services behind one domain need an in-cluster ingress controller as the rewrite target', SOURCES.suggestions),
    direct && alt('LocalWithAntiAffinity', antiAffinity,
      'direct-access sends calls to the pods themselves, so only a caller on a node running a backend pod can loop back; every caller must be covered', SOURCES.directAccess),
    !direct && svc.externalTrafficPolicy === 'Local' && alt('LocalWithAntiAffinity', `${antiAffinity}: with externalTrafficPolicy: Local the CLB only forwards to those nodes`,
      `every caller must be covered, and a caller scheduled next to a backend pod loops again${ipvs ? '; in IPVS mode Local is itself what keeps the pod IP: externalTrafficPolicy: Cluster masquerades calls to the node IP and removes the L4 loopback instead, at the cost of the client source IP' : ''}`,
      ipvs ? `${SOURCES.antiAffinity}; ${SOURCES.localInIpvs}` : SOURCES.antiAffinity),
    id === 'IpModeProxy'
      ? alt('IpModeProxy', "remove ipMode: Proxy from status.loadBalancer.ingress (turn it off in the controller that writes this Service's status)",
          `kube-proxy then answers VIP ${at.vip} on the node again: in iptables or nftables mode in-cluster calls never reach the CLB; in IPVS mode prevent-loopback (and its health-check source) can then take effect`, SOURCES.ipMode)
      : alt('IpModeProxy', 'do not expect ipMode: Proxy (Kubernetes ≥ 1.30, set in status by the load-balancer controller) to help',
          `kube-proxy would then ignore VIP ${at.vip}: health checks from the VIP are no longer dropped, but every in-cluster call goes through the CLB and can loop back, in iptables mode too`, SOURCES.ipMode),
  ]);
}

function ingressAlternatives(ing: IngressFacts, rootCause: RootCauseId): Alternative[] {
  if (!LOOPING.has(rootCause)) return [];
  // The Services an Ingress routes to, with the hosts that reach each one.
  const rules = ing.rules.map((r) => ({ host: r.host ?? '', services: [...new Set(r.services ?? [])] }));
  const services = [...new Set([...rules.flatMap((r) => r.services), ...(ing.defaultBackend ? [ing.defaultBackend] : [])])];
  const names = services.length > 0 ? services.map((s) => dnsName(s, ing.namespace)).join(', ') : `<service>.${ing.namespace}.svc.cluster.local`;
  const hosts = rules.filter((r) => r.host !== '');
  const single = hosts.filter((r) => r.services.length === 1);
  const shared = hosts.filter((r) => r.services.length !== 1);
  const direct = isTrue(ing.annotations, IngressAnnotation.DirectAccess);
  return those([
    alt('ServiceDnsName', `in-cluster callers call the backend Service directly: ${names}`,
      "the CLB is never on the path, so nothing loops; it bypasses the Ingress's host/path routing and TLS: callers pick the backend and its port themselves", SOURCES.suggestions),
    single.length > 0 && alt('CoreDnsRewrite', `for callers that use the Ingress host, add to the Corefile in ConfigMap kube-system/coredns: ${single.map((r) => `"rewrite name ${r.host} ${dnsName(r.services[0] as string, ing.namespace)}"`).join(', ')}`,
      "callers then reach the Service on the Service's port and protocol, without the Ingress's path routing and TLS", SOURCES.suggestions),
    shared.length > 0 && alt('CoreDnsRewrite', `host(s) ${shared.map((r) => r.host).join(', ')} route to several Services: deploy an in-cluster ingress controller (e.g. ingress-nginx) with the same rules and rewrite the host(s) to its Service in the CoreDNS Corefile`,
      'in-cluster callers keep host and path routing without passing the CLB; the controller is one more thing to run', SOURCES.suggestions),
    alt('LocalWithAntiAffinity', `${direct ? '' : 'externalTrafficPolicy: Local on the backend Service(s) and '}podAntiAffinity that keeps callers off the nodes running the backend pods`,
      `the CLB then forwards only to nodes with backend pods, which no caller shares; every caller must be covered${direct ? '' : '; in IPVS mode a backend that is itself a private LoadBalancer Service becomes at risk at L4 with Local'}`,
      direct ? SOURCES.directAccess : `${SOURCES.antiAffinity}; ${SOURCES.localInIpvs}`),
    !direct && alt('DirectAccess', `${IngressAnnotation.DirectAccess}: "true" (VPC-CNI): the CLB forwards to the backend pods instead of every node's NodePort`,
      'only a caller on a node that runs a backend pod can still loop back; pair it with anti-affinity', SOURCES.directAccess),
  ]);
}

/** One line for status and text output: what to do — what it fixes and leaves [source]. */
export function alternativeText(a: Alternative): string {
  return `${a.advice} — ${a.limits} [${a.source}]`;
}
