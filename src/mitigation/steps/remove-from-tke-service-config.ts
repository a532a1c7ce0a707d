// RemoveFromTkeServiceConfig (src/plan/steps/remove-from-tke-service-config.ts) carried out: a JSON patch of the config.
import { EventReason } from '../../api/reasons.js';
import { buildRemovalPatch } from '../../plan/config-patch.js';
import type { RemoveFromTkeServiceConfigStep } from '../../plan/steps/remove-from-tke-service-config.js';
import { DONE, paceTkeSync, type StepEffect } from './effect.js';

export const removeFromTkeServiceConfig: StepEffect<RemoveFromTkeServiceConfigStep> = {
  async apply(deps, _owner, target, step, signal) {
    await paceTkeSync(deps, signal);
    await deps.writer.patchConfig(target.namespace, step.config, (spec) => buildRemovalPatch(spec, step.removals, step.vip));
    return DONE;
  },
  event: () => ({ type: 'Normal', reason: EventReason.OriginalsRestored }),
};
