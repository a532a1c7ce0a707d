// Pure: which Service Envoy Gateway generated for a Gateway (docs/gateways.md §2), by the labels EG's docs select with.
// Labels are anyone's to write, so only Services where a namespace user cannot put them count: in EG's controller
// namespace and the Gateway's own (whoever writes there writes the Gateway too).
import type { GatewayFacts, GeneratedService, ServiceFacts } from './facts.js';

export const EnvoyGatewayLabel = {
  OwningGatewayName: 'gateway.envoyproxy.io/owning-gateway-name',
  OwningGatewayNamespace: 'gateway.envoyproxy.io/owning-gateway-namespace',
  OwningGatewayClass: 'gateway.envoyproxy.io/owning-gatewayclass',
  ManagedBy: 'app.kubernetes.io/managed-by',
} as const;

export const ENVOY_GATEWAY_MANAGER = 'envoy-gateway';

/** Where EG keeps the Services it generates unless told otherwise (its chart's namespace, ENVOY_GATEWAY_NAMESPACE). */
export const ENVOY_GATEWAY_NAMESPACE = 'envoy-gateway-system';

/**
 * What EG generated a Service for, from its labels ("Gateway ns/name", "GatewayClass name"); undefined for any other
 * Service. Labels are anyone's to write, but this only ever makes loopguard leave a Service alone (the Gateway is
 * the target), which its owner can ask for anyway (loopguard.dev/skip).
 */
export function generatedFor(labels: Readonly<Record<string, string>> | undefined): string | undefined {
  if (labels?.[EnvoyGatewayLabel.ManagedBy] !== ENVOY_GATEWAY_MANAGER) return undefined;
  const name = labels[EnvoyGatewayLabel.OwningGatewayName];
  const namespace = labels[EnvoyGatewayLabel.OwningGatewayNamespace];
  if (name && namespace) return `Gateway ${namespace}/${name}`;
  const cls = labels[EnvoyGatewayLabel.OwningGatewayClass];
  return cls ? `GatewayClass ${cls}` : undefined;
}

/** The Service EG generated for `gateway` among `services`, looking only in `controllerNamespace` and the Gateway's. */
export function gatewayServiceOf(gateway: Pick<GatewayFacts, 'namespace' | 'name' | 'className'>, services: readonly ServiceFacts[], controllerNamespace: string): GeneratedService {
  const trusted = services.filter((s) => (s.namespace === controllerNamespace || s.namespace === gateway.namespace) && s.labels?.[EnvoyGatewayLabel.ManagedBy] === ENVOY_GATEWAY_MANAGER);
  const own = trusted.filter((s) => s.labels?.[EnvoyGatewayLabel.OwningGatewayName] === gateway.name && s.labels?.[EnvoyGatewayLabel.OwningGatewayNamespace] === gateway.namespace);
  const merged = trusted.filter((s) => s.labels?.[EnvoyGatewayLabel.OwningGatewayClass] === gateway.className);
  const all = [...new Set([...own, ...merged])];
  if (all.length > 1) return { state: 'Ambiguous', names: all.map((s) => `${s.namespace}/${s.name}`) };
  if (own[0]) return { state: 'Own', facts: own[0] };
  if (merged[0]) return { state: 'Merged', facts: merged[0] };
  return { state: 'None', controllerNamespace };
}
