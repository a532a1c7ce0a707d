// RecordOriginals (src/plan/steps/record-originals.ts) carried out: bookkeeping, no Event.
import type { RecordOriginalsStep } from '../../plan/steps/record-originals.js';
import { mergeOriginals } from '../../api/originals.js';
import { DONE, nonEmpty, type StepEffect } from './effect.js';

export const recordOriginals: StepEffect<RecordOriginalsStep> = {
  async apply(deps, owner, target, step) {
    // Only for the object that is there now (its uid ties the record to it); merged into the record as stored,
    // so an original recorded by an earlier write always survives.
    const object = await deps.writer.get(target.kind, target.namespace, target.name);
    if (!object) return { status: 'gone' };
    await deps.records.update({ ...target, uid: object.metadata?.uid }, owner, (current) => nonEmpty(mergeOriginals(current, step.originals)), { takeOver: true });
    return DONE;
  },
  event: () => undefined,
};
