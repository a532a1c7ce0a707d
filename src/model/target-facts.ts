// Converts client-node Service/Ingress objects into the plain facts the assessment reads.
// Type-only imports: nothing here touches the network.
import type { V1Ingress, V1ObjectMeta, V1Service } from '@kubernetes/client-node';
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import { FIELD_MANAGER } from '../api/loopbackpolicy.js';
import type { EnvoyProxyRef, GatewayEnvoyProxy, GatewayFacts, IngressFacts, ServiceFacts } from './facts.js';
import { ENVOY_GATEWAY_NAMESPACE, gatewayServiceOf, generatedFor } from './gateway-service.js';
import { annotationsSetBy } from './lost-record.js';

/** A gateway.networking.k8s.io/v1 Gateway as loopguard reads it (no client-node type: the CRD is optional). */
export interface GatewayObject {
  metadata?: { namespace?: string; name?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { gatewayClassName?: string; infrastructure?: { parametersRef?: { group?: string; kind?: string; name?: string } }; listeners?: { hostname?: string }[] };
}

/** A gateway.envoyproxy.io/v1alpha1 EnvoyProxy, as far as loopguard reads it. */
export interface EnvoyProxyObject {
  metadata?: { namespace?: string; name?: string };
  spec?: { provider?: { type?: string; kubernetes?: { envoyService?: { annotations?: Record<string, string> } } } };
}

/** The Gateway's own EnvoyProxy's name (spec.infrastructure.parametersRef), if it names one. */
export function ownEnvoyProxyName(gw: GatewayObject): string | undefined {
  const ref = gw.spec?.infrastructure?.parametersRef;
  return ref?.group === 'gateway.envoyproxy.io' && ref.kind === 'EnvoyProxy' && ref.name ? ref.name : undefined;
}

/** A gateway.networking.k8s.io/v1 GatewayClass, as far as loopguard reads it (its EnvoyProxy). */
export interface GatewayClassObject {
  metadata?: { name?: string };
  spec?: { parametersRef?: { group?: string; kind?: string; name?: string; namespace?: string } };
}

/** The EnvoyProxy a GatewayClass names (spec.parametersRef), if it names one. */
export function classEnvoyProxy(c: GatewayClassObject | undefined): EnvoyProxyRef | undefined {
  const ref = c?.spec?.parametersRef;
  return ref?.group === 'gateway.envoyproxy.io' && ref.kind === 'EnvoyProxy' && ref.name && ref.namespace ? { namespace: ref.namespace, name: ref.name } : undefined;
}

/** Where a Gateway's EnvoyProxies are looked up: EnvoyProxies by namespace and name, GatewayClasses by name. */
export interface EnvoyProxyLookup {
  envoyProxy(namespace: string, name: string): EnvoyProxyObject | undefined;
  gatewayClass(name: string): GatewayClassObject | undefined;
}

/** The EnvoyProxy in force for the Gateway: its own (in its namespace), else its class's (`cls`); undefined: neither names one. */
function envoyProxyOf(gw: GatewayObject, cls: EnvoyProxyRef | undefined, lookup: EnvoyProxyLookup): GatewayEnvoyProxy | undefined {
  const own = ownEnvoyProxyName(gw);
  const at = own ? { level: 'Gateway' as const, namespace: gw.metadata?.namespace ?? '', name: own } : cls && { level: 'Class' as const, ...cls };
  if (!at) return undefined;
  const ep = lookup.envoyProxy(at.namespace, at.name);
  if (!ep) return { ...at, state: 'Missing' };
  const type = ep.spec?.provider?.type;
  if (type !== undefined && type !== 'Kubernetes') return { ...at, state: 'NotKubernetes' };
  return { ...at, state: 'Found', annotations: { ...ep.spec?.provider?.kubernetes?.envoyService?.annotations } };
}

/** The CLB id TKE wrote on the target, trimmed; undefined when absent or blank. */
export function boundLoadBalancerId(annotations: Readonly<Record<string, string>> | undefined, kind: 'Service' | 'Ingress'): string | undefined {
  const id = annotations?.[kind === 'Service' ? ServiceAnnotation.LoadBalancerId : IngressAnnotation.LoadBalancerId]?.trim();
  return id ? id : undefined;
}

/**
 * What a target's facts take from its metadata; for a Service or an Ingress (`tke`) also the CLB id TKE wrote and
 * the annotations loopguard's field manager wrote.
 */
function metadataFacts(md: NonNullable<GatewayObject['metadata']> & Pick<V1ObjectMeta, 'managedFields'>, tke?: 'Service' | 'Ingress') {
  const setByLoopguard = tke && annotationsSetBy(FIELD_MANAGER, md.managedFields);
  const loadBalancerId = tke && boundLoadBalancerId(md.annotations, tke);
  return {
    namespace: md.namespace ?? '',
    name: md.name ?? '',
    ...(md.labels ? { labels: md.labels } : {}),
    ...(md.annotations ? { annotations: md.annotations } : {}),
    ...(setByLoopguard ? { setByLoopguard } : {}),
    ...(loadBalancerId ? { loadBalancerId } : {}),
    ...(md.uid ? { uid: md.uid } : {}),
  };
}

export function serviceFacts(svc: V1Service): ServiceFacts {
  const etp = svc.spec?.externalTrafficPolicy;
  const ips = statusIps(svc.status);
  const ipModes = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ipMode).filter((m): m is string => !!m);
  const generated = generatedFor(svc.metadata?.labels);
  return {
    kind: 'Service',
    ...metadataFacts(svc.metadata ?? {}, 'Service'),
    type: svc.spec?.type ?? 'ClusterIP',
    ...(svc.spec?.loadBalancerClass ? { loadBalancerClass: svc.spec.loadBalancerClass } : {}),
    ...(etp === 'Local' || etp === 'Cluster' ? { externalTrafficPolicy: etp } : {}),
    ports: (svc.spec?.ports ?? []).map(
      (p): ServiceFacts['ports'][number] => ({
        ...(p.name ? { name: p.name } : {}),
        port: p.port,
        protocol: p.protocol === 'UDP' || p.protocol === 'SCTP' ? p.protocol : 'TCP',
      }),
    ),
    ...(ips.length > 0 ? { loadBalancerIps: ips } : {}),
    ...(ipModes.length > 0 ? { ipModes } : {}),
    ...(generated ? { generatedFor: generated } : {}),
    ...(svc.spec?.clusterIP === 'None' ? { headless: true as const } : {}),
  };
}

/**
 * A Gateway with the Service EG generated for it, looked for among `services` (facts) in EG's namespace and the
 * Gateway's own (docs/gateways.md §2).
 */
export function gatewayFacts(
  gw: GatewayObject,
  services: readonly ServiceFacts[],
  controllerNamespace = ENVOY_GATEWAY_NAMESPACE,
  /** Its EnvoyProxy and its class's. */
  lookup: EnvoyProxyLookup = { envoyProxy: () => undefined, gatewayClass: () => undefined },
): GatewayFacts {
  const md = gw.metadata ?? {};
  const ref = { namespace: md.namespace ?? '', name: md.name ?? '', className: gw.spec?.gatewayClassName ?? '' };
  const service = gatewayServiceOf(ref, services, controllerNamespace);
  const svc = 'facts' in service ? service.facts : undefined;
  const cls = classEnvoyProxy(lookup.gatewayClass(ref.className));
  const envoyProxy = envoyProxyOf(gw, cls, lookup);
  const hostnames = [...new Set((gw.spec?.listeners ?? []).map((l) => l.hostname).filter((h): h is string => typeof h === 'string' && h !== ''))];
  return {
    kind: 'Gateway',
    ...metadataFacts(md),
    className: ref.className,
    service,
    ...(envoyProxy ? { envoyProxy } : {}),
    ...(cls && envoyProxy?.level === 'Gateway' ? { classEnvoyProxy: cls } : {}),
    ...(hostnames.length > 0 ? { hostnames } : {}),
    ...(svc?.loadBalancerId ? { loadBalancerId: svc.loadBalancerId } : {}),
    ...(svc?.loadBalancerIps ? { loadBalancerIps: svc.loadBalancerIps } : {}),
  };
}

/** The IPs TKE published in status.loadBalancer.ingress. */
function statusIps(status: { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined): string[] {
  return (status?.loadBalancer?.ingress ?? []).map((i) => i.ip).filter((ip): ip is string => !!ip);
}

export function ingressFacts(ing: V1Ingress): IngressFacts {
  const ips = statusIps(ing.status);
  return {
    kind: 'Ingress',
    ...metadataFacts(ing.metadata ?? {}, 'Ingress'),
    ...(ing.spec?.ingressClassName ? { ingressClassName: ing.spec.ingressClassName } : {}),
    rules: (ing.spec?.rules ?? []).map((r) => {
      const backends = (r.http?.paths ?? []).flatMap((p) => (p.backend?.service?.name ? [p.backend.service] : []));
      const services = backends.map((b) => b.name);
      return {
        ...(r.host ? { host: r.host } : {}),
        paths: (r.http?.paths ?? []).map((p) => p.path ?? '/'),
        ...(services.length > 0 ? { services, servicePorts: backends.map((b) => b.port?.number ?? b.port?.name ?? '') } : {}),
      };
    }),
    tls: (ing.spec?.tls ?? []).length > 0,
    ...(ing.spec?.defaultBackend?.service?.name ? { defaultBackend: ing.spec.defaultBackend.service.name } : {}),
    ...(ips.length > 0 ? { loadBalancerIps: ips } : {}),
  };
}
