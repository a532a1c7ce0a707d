// Enforce mode: L4 (Services: CLB health-check source, prevent-loopback) and L7 (Ingresses: TkeServiceConfig
// keepalive and rule health-check source), composed behind the policy controller's Mitigator seam.
import type { LoopbackPolicy, ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import type { Mitigator } from '../controllers/policy/policy-controller.js';
import type { Assessment } from '../model/assessment.js';
import type { TargetOutcome } from '../model/status.js';
import type { ApplyScope, LayerMitigator, MitigationContext } from './context.js';

export type { ApplyScope, LayerMitigator, MitigationContext, MitigationCaches } from './context.js';

export interface MitigatorLayers {
  l4?: (ctx: MitigationContext) => LayerMitigator;
  l7?: (ctx: MitigationContext) => LayerMitigator;
}

export function createMitigator(ctx: MitigationContext, layers: MitigatorLayers): Mitigator {
  const l4 = layers.l4?.(ctx);
  const l7 = layers.l7?.(ctx);
  return {
    async apply(
      policy: LoopbackPolicy,
      spec: ResolvedPolicySpec,
      assessments: readonly Assessment[],
      signal: AbortSignal,
      scope?: ApplyScope,
    ): Promise<TargetOutcome[]> {
      const services = assessments.filter((a) => a.target.kind === 'Service');
      const ingresses = assessments.filter((a) => a.target.kind === 'Ingress');
      // L4 and L7 touch different CLBs and objects; running them side by side halves a policy's latency.
      const [a, b] = await Promise.all([
        l4 ? l4.apply(policy, spec, services, signal, scope) : Promise.resolve([]),
        l7 ? l7.apply(policy, spec, ingresses, signal, scope) : Promise.resolve([]),
      ]);
      return [...a, ...b];
    },
    async revert(policy: LoopbackPolicy, signal: AbortSignal): Promise<void> {
      await Promise.all([l4?.revert(policy, signal), l7?.revert(policy, signal)]);
    },
  };
}
