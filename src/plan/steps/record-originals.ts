// RecordOriginals: merge originals into the target's LoopbackRecord before the change they belong to, so a crash
// between the two can still restore. Its effect: src/mitigation/steps/record-originals.ts.
import { describeOriginals, type Originals } from '../../api/originals.js';
import type { StepKindPlan } from './kind.js';

export interface RecordOriginalsStep {
  kind: 'RecordOriginals';
  originals: Originals;
}

export const recordOriginals: StepKindPlan<RecordOriginalsStep> = {
  describe: (step) => `record the originals of ${describeOriginals(step.originals)} (LoopbackRecord)`,
};
