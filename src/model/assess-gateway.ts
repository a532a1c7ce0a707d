// A Gateway of Envoy Gateway (docs/gateways.md): found through the LoadBalancer Service EG generated for it, whose
// CLB and listeners are the Gateway's, and diagnosed as that Service is (assess-service.ts: same gates, same L4
// rules, the CLB's ownership checked against the Service TKE made it for). Its own opt-out comes first.
// loopguard does not change Gateways yet (its fixes go through the EnvoyProxy: docs/gateways.md §3–§5): the
// diagnosis carries no plan, and an at-risk Gateway says what to set by hand.
import type { Assessment, AssessmentContext } from './assessment-result.js';
import { assessed, skipGate } from './assess-common.js';
import { decideService } from './assess-service.js';
import type { GatewayFacts } from './facts.js';
import { serviceAlternatives } from './topology.js';

const NOT_CHANGED =
  'loopguard diagnoses Gateways but does not change them yet: switch the CLB listeners\' health checks to 100.64.0.0/10 and set service.cloud.tencent.com/prevent-loopback: "true" in the envoyService.annotations of the EnvoyProxy the Gateway uses (docs/gateways.md §3)';

export function assessGateway(g: GatewayFacts, ctx: AssessmentContext): Assessment {
  const warnings: string[] = [];
  const skipped = skipGate(g, warnings, ctx.ignoreSkipAnnotation === true);
  if (skipped) return assessed(g, { cause: skipped, warnings }, () => []);
  if (g.service.state === 'None') return assessed(g, { cause: { id: 'GatewayServiceMissing', className: g.className, namespace: g.service.controllerNamespace }, warnings }, () => []);
  if (g.service.state === 'Ambiguous') return assessed(g, { cause: { id: 'GatewayServiceAmbiguous', services: g.service.names }, warnings }, () => []);
  // The Service as TKE sees it, not as a generated one (which a Service target would be skipped for).
  const { generatedFor: _generated, ...svc } = g.service.facts;
  const d = decideService(svc, ctx);
  const at = 'at' in d.cause && d.cause.layer === 'L4' ? d.cause.at : undefined;
  const { plan: _plan, ...diagnosis } = d;
  const a = assessed(g, { ...diagnosis, warnings: [...warnings, ...d.warnings] }, (rootCause) =>
    at ? serviceAlternatives(svc, { rootCause, profile: ctx.profile, vip: at.vip, publicClb: at.public }) : [],
  );
  const via = `Service ${svc.namespace}/${svc.name}${g.service.state === 'Merged' ? ` (shared by every Gateway of class ${g.className})` : ''}`;
  const message = `${via}: ${a.rootCause.message}${a.verdict === 'AtRisk' ? `. ${NOT_CHANGED}` : ''}`;
  return { ...a, rootCause: { ...a.rootCause, message } };
}
