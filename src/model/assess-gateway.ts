// A Gateway of Envoy Gateway (docs/gateways.md), diagnosed as the LoadBalancer Service EG generated for it is (same
// gates, same L4 rules: docs/diagnosis.md §4 GW1–GW3), after its own opt-out. loopguard changes it through the
// EnvoyProxy in force for it (§4); without one it can change, the diagnosis carries no plan and says what would let it act.
import type { Assessment, AssessmentContext } from './assessment-result.js';
import { assessed, skipGate } from './assess-common.js';
import { decideService } from './assess-service.js';
import type { GatewayFacts } from './facts.js';

const BY_HAND = 'or switch the listeners\' health checks to 100.64.0.0/10 and set service.cloud.tencent.com/prevent-loopback: "true" in its EnvoyProxy\'s envoyService.annotations by hand (docs/gateways.md §4)';

/** Why loopguard cannot change this Gateway, or undefined when it can (an EnvoyProxy in force, its own Service). */
function unchangeable(g: GatewayFacts): string | undefined {
  if (g.service.state === 'Merged') return `loopguard changes nothing through a Service every Gateway of class ${g.className} shares (mergeGateways); ${BY_HAND}`;
  const ep = g.envoyProxy;
  if (!ep) return `neither the Gateway nor its class names an EnvoyProxy (Envoy Gateway's defaults), and loopguard creates none: give the Gateway one (spec.infrastructure.parametersRef) or its GatewayClass one (spec.parametersRef), ${BY_HAND}`;
  const whose = ep.level === 'Gateway' ? "the Gateway's own" : `its class ${g.className}'s`;
  if (ep.state === 'Missing') return `EnvoyProxy ${ep.namespace}/${ep.name} (${whose}) does not exist: create it, ${BY_HAND}`;
  if (ep.state === 'NotKubernetes') return `EnvoyProxy ${ep.namespace}/${ep.name} (${whose}) has a provider other than Kubernetes: it has no envoyService annotations for loopguard to set`;
  return undefined;
}

export function assessGateway(g: GatewayFacts, ctx: AssessmentContext): Assessment {
  const { warnings, cause: skipped } = skipGate(g, ctx);
  if (skipped) return assessed(g, { cause: skipped, warnings });
  if (g.service.state === 'None') return assessed(g, { cause: { id: 'GatewayServiceMissing', className: g.className, namespace: g.service.controllerNamespace }, warnings });
  if (g.service.state === 'Ambiguous') return assessed(g, { cause: { id: 'GatewayServiceAmbiguous', services: g.service.names }, warnings });
  // The Service as TKE sees it, not as a generated one (which a Service target would be skipped for).
  const { generatedFor: _generated, ...svc } = g.service.facts;
  const d = decideService(svc, ctx);
  const all = [...warnings, ...d.warnings];
  const why = unchangeable(g);
  const a = assessed(g, why ? { ...d, plan: undefined, warnings: all } : { ...d, warnings: all });
  const via = `Service ${svc.namespace}/${svc.name}${g.service.state === 'Merged' ? ` (shared by every Gateway of class ${g.className})` : ''}`;
  const message = `${via}: ${a.rootCause.message}${why && a.verdict === 'AtRisk' ? `. ${why}` : ''}`;
  return { ...a, rootCause: { ...a.rootCause, message } };
}
