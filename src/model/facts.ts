// Plain-data inputs of the assessment: a target (informer cache), its CLB (CLB API), the account. No client types, so
// tests build facts as object literals; target-facts.ts converts client-node objects.
import type { TargetKind } from '../api/loopbackpolicy.js';

export interface TargetRef {
  kind: TargetKind;
  namespace: string;
  name: string;
}

/** What every target's facts take from its metadata and status. */
interface ObjectFacts extends TargetRef {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** metadata.uid: tells this object from an earlier one of the same name (a record belongs to one of them). */
  uid?: string;
  /** The CLB TKE bound the target to (`service.kubernetes.io/loadbalance-id` / `kubernetes.io/ingress.qcloud-loadbalance-id`), parsed once. */
  loadBalancerId?: string;
  /** IPs in status.loadBalancer.ingress (the CLB VIP once TKE has assigned it; only TKE writes status). */
  loadBalancerIps?: string[];
}

/** A Service or an Ingress: loopguard writes its annotations itself. */
interface AnnotatedFacts extends ObjectFacts {
  /** Annotations loopguard's field manager wrote (key → when; from managedFields): evidence for a lost record. */
  setByLoopguard?: Record<string, string>;
}

export interface ServiceFacts extends AnnotatedFacts {
  kind: 'Service';
  /** `ClusterIP` | `NodePort` | `LoadBalancer` | `ExternalName`. */
  type: string;
  /** Set → another LB implementation owns the Service, not TKE's service-controller. */
  loadBalancerClass?: string;
  externalTrafficPolicy?: 'Cluster' | 'Local';
  ports: { name?: string; port: number; protocol: 'TCP' | 'UDP' | 'SCTP' }[];
  /** `status.loadBalancer.ingress[].ipMode` (KEP-1860): `Proxy` makes kube-proxy ignore the address (calls leave the node). */
  ipModes?: string[];
  /** EG generated it for a Gateway or class ("Gateway ns/name", "GatewayClass name"): the Gateway is the target. */
  generatedFor?: string;
  /** spec.clusterIP is `None`: its name answers the Pods' addresses, when it has ready ones (docs/dns.md §4). */
  headless?: true;
}

export interface IngressFacts extends AnnotatedFacts {
  kind: 'Ingress';
  ingressClassName?: string;
  rules: {
    host?: string;
    paths: string[];
    /** The backend Services of the rule's paths (for the topology advice: call them by their DNS names). */
    services?: string[];
    /** Each of `services`' backend port, by number or by the Service port's name (l7.inClusterDNS: docs/dns.md §4). */
    servicePorts?: (number | string)[];
  }[];
  tls: boolean;
  /** spec.defaultBackend's Service. */
  defaultBackend?: string;
}

/**
 * A Gateway of Envoy Gateway (docs/gateways.md): selected and named by its own metadata, diagnosed through the
 * LoadBalancer Service EG generated for it (§2), whose CLB it shares. `loadBalancerId` and `loadBalancerIps` are
 * that Service's; `uid`, labels and annotations the Gateway's (its records and opt-out are its own).
 */
export interface GatewayFacts extends ObjectFacts {
  kind: 'Gateway';
  /** spec.gatewayClassName */
  className: string;
  service: GeneratedService;
  /** The EnvoyProxy loopguard would change (docs/gateways.md §4): the Gateway's own, else its class's; absent: neither. */
  envoyProxy?: GatewayEnvoyProxy;
  /** Its class's EnvoyProxy when it has one of its own too: EG may merge the two (mergeType), so both reach its Service. */
  classEnvoyProxy?: EnvoyProxyRef;
  /** Its listeners' hostnames (spec.listeners[].hostname), untrusted: the names `l7.inClusterDNS` may rewrite (docs/dns.md). */
  hostnames?: string[];
}

/** The EnvoyProxy in force for a Gateway, as loopguard finds it. Whoever else it is in force for: plan/shared-config.ts. */
export type GatewayEnvoyProxy = EnvoyProxyRef & {
  /** The Gateway's own (spec.infrastructure.parametersRef, in its namespace), or its class's (GatewayClass spec.parametersRef). */
  level: 'Gateway' | 'Class';
} & (
  /** `annotations`: its spec.provider.kubernetes.envoyService.annotations, what EG copies onto the Gateway's Service. */
  | { state: 'Found'; annotations: Record<string, string> }
  | { state: 'Missing' }
  /** Its provider is not Kubernetes: it has no envoyService to annotate. */
  | { state: 'NotKubernetes' }
);

/** The Service EG generated for a Gateway (model/gateway-service.ts), as facts. */
export type GeneratedService =
  /** Its own (`Own`), or its class's one Service under mergeGateways (`Merged`). */
  | { state: 'Own' | 'Merged'; facts: ServiceFacts }
  /** `controllerNamespace`: EG's, looked in besides the Gateway's own. */
  | { state: 'None'; controllerNamespace: string }
  | { state: 'Ambiguous'; names: string[] };

export type TargetFacts = ServiceFacts | IngressFacts | GatewayFacts;

/** Health of a listener's or rule's backends (DescribeTargetHealth), when the caller fetched it. */
export interface BackendHealth {
  alive: number;
  dead: number;
}

export interface HealthCheckFacts {
  /** 0 = the CLB VIP is the health-check source (CLB default), 1 = 100.64.0.0/10. */
  sourceIpType?: number;
  /** HealthCheck.HealthSwitch: 1 = the check is on, 0 = off; absent when the CLB did not say. */
  healthSwitch?: number;
}

export interface RuleFacts {
  locationId: string;
  domain: string;
  url: string;
  healthCheck?: HealthCheckFacts;
  health?: BackendHealth;
}

export interface ListenerFacts {
  listenerId: string;
  protocol: string; // L4_PROTOCOLS, L7_PROTOCOLS
  port: number;
  /** L4 listeners only: L7 health checks are per rule. */
  healthCheck?: HealthCheckFacts;
  /** L7 listeners only: 1 = keepalive (and with it SNAT) between CLB and backends. */
  keepaliveEnable?: number;
  rules?: RuleFacts[];
  health?: BackendHealth;
}

export interface ClbFacts {
  loadBalancerId: string;
  /** `OPEN` (public) or `INTERNAL` (private). */
  loadBalancerType: 'OPEN' | 'INTERNAL' | string;
  /** `IPV4`, `IPV6` (NAT64) or `IPv6FullChain`. */
  addressIpVersion?: string;
  vips?: string[];
  /** An IPv6 CLB's address (its `vips` are empty). */
  ipv6Address?: string;
  /** The CLB's tags: set by the cloud account (TKE's owner tags), never by a namespace user. */
  tags?: Record<string, string>;
  /** 0 = creating, 1 = running. */
  status?: number;
  /** 1 = CLB, 0 = classic CLB. */
  forward?: number;
  /** `LoadBalancerPassToTarget`: only the CLB's security group is checked ("allow by default"). */
  passToTarget?: boolean;
  listeners: ListenerFacts[];
}

/** The CLB of a target as observed: facts, confirmed absent, or not looked up yet. */
export type ClbObservation = { state: 'Found'; clb: ClbFacts } | { state: 'NotFound'; loadBalancerId: string } | { state: 'NotObserved' };

/** All backends of a listener Dead: what a dropped health check looks like from the CLB (behind a VIP source). */
export function allDead(l: Pick<ListenerFacts, 'health'>): boolean {
  return !!l.health && l.health.dead > 0 && l.health.alive === 0;
}

/**
 * What of an observation a plan depends on, for telling whether a read changed anything that needs planning: of a
 * listener's backend health only whether all are Dead where the check comes from the VIP (how a bound VIP shows:
 * assess-service.ts); elsewhere, on L7 rules, and in the counts, health comes and goes with the backends.
 */
export function plannedView(o: ClbObservation): unknown {
  if (o.state !== 'Found') return o;
  const listeners = o.clb.listeners.map(({ health, rules, ...l }) => ({
    ...l,
    ...(rules ? { rules: rules.map(({ health: _unused, ...r }) => r) } : {}),
    allDead: l.healthCheck?.sourceIpType !== 1 && allDead({ health }),
  }));
  return { ...o.clb, listeners };
}

/** What earlier CLB answers showed the account lacks (kept by the controller): each, the error that proved it. */
export interface AccountCapabilities {
  /** ModifyListener KeepaliveEnable (or TKE applying keepaliveEnable) was rejected: no L7 SNAT/keepalive capability. */
  keepaliveRejected?: string;
  /** SourceIpType=1 was rejected: no non-VIP health-check source capability. */
  range100_64Rejected?: string;
}

/** Where loopguard's TKE annotations for the target are, now: its own, or a Gateway's EnvoyProxy's (docs/gateways.md §3). */
export function writtenAnnotations(t: TargetFacts): Readonly<Record<string, string>> | undefined {
  if (t.kind !== 'Gateway') return t.annotations;
  return t.envoyProxy?.state === 'Found' ? t.envoyProxy.annotations : undefined;
}

/** An EnvoyProxy, by namespace and name. */
export type EnvoyProxyRef = Pick<TargetRef, 'namespace' | 'name'>;

/** The key of an EnvoyProxy among shared objects (plan/snapshot.ts SharedView.configs; a TkeServiceConfig's is `ns/name`). */
export function envoyProxyKey(ref: EnvoyProxyRef): string {
  return ['EnvoyProxy', ref.namespace, ref.name].join('/');
}

/** Every EnvoyProxy whose annotations reach a Gateway's Service: the one in force, and its class's beside its own. */
export function envoyProxiesOf(t: GatewayFacts): EnvoyProxyRef[] {
  return [...(t.envoyProxy ? [t.envoyProxy] : []), ...(t.classEnvoyProxy ? [t.classEnvoyProxy] : [])];
}

/**
 * The EnvoyProxy a Gateway's annotations would be written to: the one in force, found, Kubernetes, for a Service of
 * the Gateway's own (none under mergeGateways). Whether its other Gateways allow it: plan/shared-config.ts.
 */
export function writableEnvoyProxy(t: TargetFacts): EnvoyProxyRef | undefined {
  return t.kind === 'Gateway' && t.envoyProxy?.state === 'Found' && t.service.state === 'Own' ? { namespace: t.envoyProxy.namespace, name: t.envoyProxy.name } : undefined;
}

/** The annotations loopguard's field manager wrote on the target; a Gateway it never annotates. */
export function setByLoopguardOf(t: TargetFacts): Readonly<Record<string, string>> | undefined {
  return t.kind === 'Gateway' ? undefined : t.setByLoopguard;
}

export const L4_PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP', 'TCP_SSL', 'QUIC']);
export const L7_PROTOCOLS: ReadonlySet<string> = new Set(['HTTP', 'HTTPS']);

/**
 * `<kind>/<namespace>/<name>`, by join: V8 keeps a template's result as a rope of 32-byte pieces, twice the size; at
 * 12,000 targets such keys were 14–17 MiB of a 91–103 MiB heap (bench/scale's heap snapshots, 2026-11-26).
 */
export function targetKey(ref: TargetRef): string {
  return [ref.kind, ref.namespace, ref.name].join('/');
}
