// DeclareInTkeServiceConfig (src/plan/steps/declare-in-tke-service-config.ts) carried out: a JSON patch of the config.
import { EventReason } from '../../api/reasons.js';
import { buildConfigPatch } from '../../plan/config-patch.js';
import type { DeclareInTkeServiceConfigStep } from '../../plan/steps/declare-in-tke-service-config.js';
import { DONE, paceTkeSync, type StepEffect } from './effect.js';

export const declareInTkeServiceConfig: StepEffect<DeclareInTkeServiceConfigStep> = {
  async apply(deps, _owner, target, step, signal) {
    await paceTkeSync(deps, signal);
    const result = await deps.writer.patchConfig(target.namespace, step.config, (spec) => buildConfigPatch(spec, step.edits, step.vip));
    // Gone between the plan and now: the next round plans on the config as it is (or its absence).
    return result === 'gone' ? { status: 'waiting', note: `TkeServiceConfig ${step.config} disappeared; planning again` } : DONE;
  },
  event(step) {
    if (step.restore) return { type: 'Normal', reason: EventReason.OriginalsRestored };
    if (step.drift) return { type: 'Warning', reason: EventReason.DriftCorrected };
    return step.edits.some((e) => e.kind === 'keepalive' && e.value === 1) ? { type: 'Normal', reason: EventReason.KeepaliveEnabled } : undefined;
  },
  // The Ingress's declared fields were taken out of its config.
  driftCorrection: (step) => (step.drift ? 'Ingress' : undefined),
};
