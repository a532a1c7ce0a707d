// A Gateway of Envoy Gateway (docs/gateways.md): found through the LoadBalancer Service EG generated for it, whose
// CLB and listeners are the Gateway's, and diagnosed as that Service is (assess-service.ts: same gates, same L4
// rules, the CLB's ownership checked against the Service TKE made it for). Its own opt-out comes first.
// loopguard changes a Gateway only through an EnvoyProxy that is the Gateway's alone (§4): the health-check sources
// through the CLB API as for a Service, prevent-loopback in that EnvoyProxy's envoyService.annotations, which EG
// copies onto the Service. Without one, the diagnosis carries no plan and says what would let loopguard act.
import type { Assessment, AssessmentContext } from './assessment-result.js';
import { assessed, skipGate } from './assess-common.js';
import { decideService } from './assess-service.js';
import type { GatewayFacts } from './facts.js';
import { serviceAlternatives } from './topology.js';

const OWN_ENVOY_PROXY =
  'give the Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef to an EnvoyProxy in its namespace; mergeType: StrategicMerge keeps its class\'s settings), or switch the CLB listeners\' health checks to 100.64.0.0/10 and set service.cloud.tencent.com/prevent-loopback: "true" in its EnvoyProxy by hand (docs/gateways.md §4)';

/** Why loopguard cannot change this Gateway, or undefined when it can (its own EnvoyProxy, its own Service). */
function unchangeable(g: GatewayFacts): string | undefined {
  if (g.service.state === 'Merged') return `loopguard changes nothing through a Service every Gateway of class ${g.className} shares (mergeGateways); switch the listeners' health checks to 100.64.0.0/10 and set service.cloud.tencent.com/prevent-loopback: "true" in the class's EnvoyProxy by hand (docs/gateways.md §4)`;
  const ep = g.envoyProxy;
  if (!ep) return `loopguard changes a Gateway only through an EnvoyProxy of its own, and this one has none: ${OWN_ENVOY_PROXY}`;
  if (ep.state === 'Missing') return `EnvoyProxy ${ep.name} (spec.infrastructure.parametersRef) does not exist in this namespace: create it, or ${OWN_ENVOY_PROXY}`;
  if (ep.state === 'NotKubernetes') return `EnvoyProxy ${ep.name} has a provider other than Kubernetes: it has no envoyService annotations for loopguard to set`;
  return undefined;
}

export function assessGateway(g: GatewayFacts, ctx: AssessmentContext): Assessment {
  const warnings: string[] = [];
  const skipped = skipGate(g, warnings, ctx.ignoreSkipAnnotation === true);
  if (skipped) return assessed(g, { cause: skipped, warnings }, () => []);
  if (g.service.state === 'None') return assessed(g, { cause: { id: 'GatewayServiceMissing', className: g.className, namespace: g.service.controllerNamespace }, warnings }, () => []);
  if (g.service.state === 'Ambiguous') return assessed(g, { cause: { id: 'GatewayServiceAmbiguous', services: g.service.names }, warnings }, () => []);
  // The Service as TKE sees it, not as a generated one (which a Service target would be skipped for).
  const { generatedFor: _generated, ...svc } = g.service.facts;
  const d = decideService(svc, ctx);
  const alternatives = (rootCause: Parameters<typeof serviceAlternatives>[1]['rootCause']) => {
    const at = 'at' in d.cause && d.cause.layer === 'L4' ? d.cause.at : undefined;
    return at ? serviceAlternatives(svc, { rootCause, profile: ctx.profile, vip: at.vip, publicClb: at.public }) : [];
  };
  const all = [...warnings, ...d.warnings];
  const wantsChanges = (d.plan?.changes.length ?? 0) > 0;
  if (wantsChanges && g.envoyProxy?.state === 'Shared' && g.service.state === 'Own') {
    return assessed(g, { cause: { id: 'SharedEnvoyProxy', envoyProxy: g.envoyProxy.name, with: g.envoyProxy.with }, warnings: all }, () => []);
  }
  const why = unchangeable(g) ?? (g.envoyProxy?.state === 'Shared' ? `EnvoyProxy ${g.envoyProxy.name} is shared` : undefined);
  const a = assessed(g, why ? { ...d, plan: undefined, warnings: all } : { ...d, warnings: all }, alternatives);
  const via = `Service ${svc.namespace}/${svc.name}${g.service.state === 'Merged' ? ` (shared by every Gateway of class ${g.className})` : ''}`;
  const message = `${via}: ${a.rootCause.message}${why && a.verdict === 'AtRisk' ? `. ${why}` : ''}`;
  return { ...a, rootCause: { ...a.rootCause, message } };
}
