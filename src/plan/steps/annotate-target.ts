// AnnotateTarget: annotations on the target, with a change of its LoopbackRecord. Its effect:
// src/mitigation/steps/annotate-target.ts.
import { describeOriginals, recordedFields, type Originals } from '../../api/originals.js';
import type { EnvoyProxyRef } from '../../model/facts.js';
import type { StepKindPlan } from './kind.js';

/**
 * Annotations on the target (null removes), with a change of its LoopbackRecord applied to the record as read at
 * write time: `originals` merged in (existing entries win) before the annotations change, `forget` (field keys given
 * back by a release) after. A record left empty is deleted; `drops` says the plan expects that.
 */
export interface AnnotateTargetStep {
  kind: 'AnnotateTarget';
  set: Record<string, string | null>;
  originals?: Originals;
  forget?: string[];
  drops?: boolean;
  restore?: boolean;
  /** A release that leaves sources on 100.64.0.0/10 instead of the VIP (the VIP stays bound): what and why. */
  kept?: string;
  /**
   * A Gateway's: `set` goes to this EnvoyProxy (spec.provider.kubernetes.envoyService.annotations), which EG copies
   * onto the Gateway's Service (docs/gateways.md §3); the record is the Gateway's.
   */
  envoyProxy?: EnvoyProxyRef;
}

function annotationText(set: Record<string, string | null>): string {
  return Object.entries(set)
    .map(([k, v]) => (v === null ? `remove ${k}` : `${k}: ${JSON.stringify(v)}`))
    .join(', ');
}

export const annotateTarget: StepKindPlan<AnnotateTargetStep> = {
  describe: (step) => {
    const parts: string[] = [];
    const text = annotationText(step.set);
    if (text) parts.push(`${step.restore ? 'restore annotation(s) ' : 'annotate '}${text}${step.envoyProxy ? ` in EnvoyProxy ${step.envoyProxy.namespace}/${step.envoyProxy.name}'s envoyService.annotations` : ''}`);
    if (step.drops) parts.push('delete the LoopbackRecord');
    else if (step.forget?.length) parts.push(`forget ${step.forget.length} restored field(s) in the LoopbackRecord`);
    if (step.kept) parts.push(step.kept);
    if (step.originals?.applied?.length) parts.push(`record ${step.originals.applied.length} applied field(s) (LoopbackRecord)`);
    else if (step.originals && recordedFields(step.originals).length === 0 && step.originals.declaredAt) parts.push('record the time (LoopbackRecord)');
    else if (step.originals) parts.push(`record the originals of ${describeOriginals(step.originals)} (LoopbackRecord)`);
    return parts.join('; ');
  },
  annotations: (step) => step.set,
};
