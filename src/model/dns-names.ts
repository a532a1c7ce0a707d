// Pure: which host names a ClusterLoopbackPolicy with `l7.inClusterDNS: Managed` asks CoreDNS to rewrite, and to which
// Service (docs/dns.md §4 "Which names" says why each condition holds). Host syntax is dns-rewrite.ts's to refuse.
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import type { GatewayFacts, IngressFacts, ServiceFacts, TargetFacts, TargetRef } from './facts.js';
import type { DnsRewriteRequest } from './dns-rewrite.js';
import type { RootCauseId } from './root-causes.js';

/** A target's outcome as far as the choice reads it. */
export interface DnsTargetOutcome {
  facts: TargetFacts;
  verdict: string;
  rootCause: RootCauseId;
  /** The steps of its plan still to carry out (status.ts TargetOutcome.plan). */
  plan: readonly string[];
  /** Managed in Enforce by the policy, with an executor to carry it out. */
  enforcing: boolean;
}

/** A name to rewrite (a request to dnsRewriteRules), before its upstream answer is checked. */
export interface DnsCandidate extends DnsRewriteRequest {
  ref: TargetRef;
  /** The target's CLB VIPs: the only upstream answers that show the name is the target's. */
  vips: string[];
}

/** A host (or, without one, the whole target) that would qualify but cannot be rewritten, with the reason. */
export type DnsLeftOut = Pick<DnsCandidate, 'target' | 'ref'> & { host?: string; reason: string };
export type DnsName = DnsCandidate | DnsLeftOut;

/** The root causes no annotation fixes (docs/dns.md §1), and whether a pending plan step still might. */
const NO_ANNOTATION_FIX: Readonly<Partial<Record<RootCauseId, { kinds: readonly TargetFacts['kind'][]; planMayFix: boolean }>>> = {
  // The ticket is missing: the plan's keepalive step cannot run, so it does not count.
  KeepaliveCapabilityMissing: { kinds: ['Ingress'], planMayFix: false },
  DirectAccessSameNode: { kinds: ['Ingress', 'Gateway'], planMayFix: true },
  IpModeProxy: { kinds: ['Ingress', 'Gateway'], planMayFix: true },
};

/** The port HTTP callers of a CLB Ingress use, which the Service must serve for the rewrite to be exact. */
const INGRESS_HTTP_PORT = 80;

/** Whether the target's loopback is one the rewrite is for (see the header). */
export function needsDnsRewrite(o: DnsTargetOutcome): boolean {
  const rule = NO_ANNOTATION_FIX[o.rootCause];
  if (!o.enforcing || o.verdict !== 'AtRisk' || !rule || !rule.kinds.includes(o.facts.kind)) return false;
  return !rule.planMayFix || o.plan.length === 0;
}

/** The names the policy's targets ask for, target by target; `service(namespace, name)`: that Service, if any. */
export function chooseDnsNames(outcomes: readonly DnsTargetOutcome[], service: (namespace: string, name: string) => ServiceFacts | undefined): DnsName[] {
  return outcomes.filter(needsDnsRewrite).flatMap(({ facts: f }) => {
    const id = { target: `${f.kind} ${f.namespace}/${f.name}`, ref: { kind: f.kind, namespace: f.namespace, name: f.name } };
    const vips = f.loadBalancerIps ?? [];
    if (vips.length === 0) return [{ ...id, reason: 'it has no CLB VIP in its status yet, so whether a host name is its own cannot be checked' }];
    const names = f.kind === 'Ingress' ? ingressNames(f, service) : f.kind === 'Gateway' ? gatewayNames(f) : [];
    return names.map((n) => ('reason' in n ? { ...id, ...n } : { ...id, ...n, vips }));
  });
}

/** A host and the Service that serves it in-cluster, or why it (without a host: the whole target) is left out. */
type HostName = Pick<DnsCandidate, 'host' | 'namespace' | 'service'> | Omit<DnsLeftOut, 'target' | 'ref'>;

/**
 * Why a target on a CLB the user brought is left out: such a CLB may serve other teams' Services and Ingresses on the
 * same VIP, so the VIP check would not tell whose a name is (a user could take over another team's host on it).
 */
const sharedClbReason = (annotation: string, where: string) => `${where} has ${annotation}: a CLB brought by its user may serve other teams' Services too, so its VIP does not show whose a host name is`;

/** Each listener hostname of the Gateway, served by the Service Envoy Gateway generated for it. */
function gatewayNames(gw: GatewayFacts): HostName[] {
  const svc = gw.service.state === 'Own' || gw.service.state === 'Merged' ? gw.service.facts : undefined;
  if (!svc) return [{ reason: 'Envoy Gateway has not generated one Service for it' }];
  const key = ServiceAnnotation.ExistingLoadBalancerId;
  const ep = gw.envoyProxy;
  const brought = svc.annotations?.[key] !== undefined ? `its Service ${svc.namespace}/${svc.name}` : ep?.state === 'Found' && ep.annotations[key] !== undefined ? `its EnvoyProxy ${ep.namespace}/${ep.name}` : undefined;
  if (brought) return [{ reason: sharedClbReason(key, brought) }];
  if (!gw.hostnames?.length) return [{ reason: 'no listener names a hostname' }];
  return gw.hostnames.map((host) => ({ host, namespace: svc.namespace, service: svc.name }));
}

/** Per host of the Ingress: the one Service every path goes to, or why there is none. */
function ingressNames(ing: IngressFacts, service: (namespace: string, name: string) => ServiceFacts | undefined): HostName[] {
  const existing = IngressAnnotation.ExistingLoadBalancerId;
  if (ing.annotations?.[existing] !== undefined) return [{ reason: sharedClbReason(existing, 'the Ingress') }];
  return [...new Set(ing.rules.flatMap((r) => (r.host ? [r.host] : [])))].map((host): HostName => {
    const rules = ing.rules.filter((r) => r.host === host);
    const e = { paths: rules.flatMap((r) => r.paths).length, services: rules.flatMap((r) => r.services ?? []), ports: rules.flatMap((r) => r.servicePorts ?? []) };
    const distinct = [...new Set(e.services)];
    if (ing.tls) return { host, reason: 'the Ingress has TLS, which ends on the CLB: its Service does not serve HTTPS with the host\'s certificate' };
    if (e.paths === 0) return { host, reason: 'the host has no paths (its default backend is not rewritten)' };
    if (e.services.length !== e.paths || distinct.length !== 1) {
      return { host, reason: `its paths go to ${distinct.length > 1 ? `several Services (${distinct.sort().join(', ')})` : 'a backend that is not a Service'}: the CLB picks the backend by path, a rewrite to one Service cannot` };
    }
    const name = distinct[0]!;
    const svc = service(ing.namespace, name);
    if (!svc) return { host, reason: `its Service ${ing.namespace}/${name} does not exist` };
    // The rewrite sends callers of host:80 to the Service's port 80: exact only when the CLB sends them there too.
    const off = e.ports.filter((p) => !(p === INGRESS_HTTP_PORT || (typeof p === 'string' && p !== '' && svc.ports.some((sp) => sp.name === p && sp.port === INGRESS_HTTP_PORT))));
    if (off.length > 0 || e.ports.length !== e.services.length) {
      return { host, reason: `its paths go to port ${[...new Set(off)].map(String).join(', ') || '(none)'} of its Service ${ing.namespace}/${name}, not port ${INGRESS_HTTP_PORT}: a caller of http://${host} would reach another port` };
    }
    if (!svc.ports.some((p) => p.port === INGRESS_HTTP_PORT && p.protocol === 'TCP')) {
      return { host, reason: `its Service ${ing.namespace}/${name} does not serve TCP port ${INGRESS_HTTP_PORT}, the port HTTP callers of the CLB use` };
    }
    if (svc.type === 'ExternalName') return { host, reason: `its Service ${ing.namespace}/${name} is of type ExternalName: its name is an alias, not an address in the cluster` };
    if (svc.headless) return { host, reason: `its Service ${ing.namespace}/${name} is headless (clusterIP: None): its name answers only Pods that are ready, and nothing when none is` };
    return { host, namespace: ing.namespace, service: name };
  });
}

/**
 * Whether the name's upstream answer shows it is the target's: at least one address, every one of them a VIP of the
 * target's CLB. An empty answer (NXDOMAIN, a name only the cluster knows) or any other address: not its name.
 */
export function dnsNameOwned(upstreamAnswer: readonly string[], vips: readonly string[]): boolean {
  return upstreamAnswer.length > 0 && upstreamAnswer.every((ip) => vips.includes(ip));
}
