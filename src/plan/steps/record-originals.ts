// RecordOriginals: merge originals into the target's LoopbackRecord before the change they belong to, so a crash
// between the two can still restore. Its effect: src/mitigation/steps/record-originals.ts.
import type { OriginalsRecord } from '../../api/annotations.js';
import type { StepKindPlan } from './kind.js';
import { recordText } from './text.js';

export interface RecordOriginalsStep {
  kind: 'RecordOriginals';
  record: OriginalsRecord;
}

export const recordOriginals: StepKindPlan<RecordOriginalsStep> = {
  describe: (step) => `record the originals of ${recordText(step.record)} (LoopbackRecord)`,
};
