// DeclareInTkeServiceConfig: single-field JSON patches in the TkeServiceConfig, guarded by `test` ops and the
// resourceVersion. Its effect: src/mitigation/steps/declare-in-tke-service-config.ts.
import type { FieldEdit } from '../config-patch.js';
import type { StepKindPlan } from './kind.js';
import { editText } from './text.js';

export interface DeclareInTkeServiceConfigStep {
  kind: 'DeclareInTkeServiceConfig';
  config: string;
  loadBalancerId: string;
  vip?: string;
  edits: FieldEdit[];
  restore?: boolean;
  drift?: boolean;
}

export const declareInTkeServiceConfig: StepKindPlan<DeclareInTkeServiceConfigStep> = {
  describe: (step) =>
    `${step.restore ? 'restore in' : 'declare in'} TkeServiceConfig ${step.config}: ${step.edits.map(editText).join('; ')}${step.drift ? ' (drift: the config no longer declared them)' : ''}`,
};
