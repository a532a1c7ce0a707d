// RemoveFromTkeServiceConfig: take out of the config what loopguard added to declare its fields (release, once the
// CLB shows the originals). Its effect: src/mitigation/steps/remove-from-tke-service-config.ts.
import type { Removal } from '../config-patch.js';
import type { StepKindPlan } from './kind.js';
import { removalText } from './text.js';

export interface RemoveFromTkeServiceConfigStep {
  kind: 'RemoveFromTkeServiceConfig';
  config: string;
  loadBalancerId: string;
  vip?: string;
  removals: Removal[];
}

export const removeFromTkeServiceConfig: StepKindPlan<RemoveFromTkeServiceConfigStep> = {
  describe: (step) => `remove from TkeServiceConfig ${step.config} what loopguard added: ${step.removals.map(removalText).join('; ')}`,
};
