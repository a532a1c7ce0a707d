// AnnotateTarget (src/plan/steps/annotate-target.ts) carried out: the target's annotations and its LoopbackRecord.
import { ServiceAnnotation } from '../../api/annotations.js';
import { EventReason } from '../../api/reasons.js';
import { mergeOriginals, withoutFields } from '../../api/originals.js';
import type { AnnotateTargetStep } from '../../plan/steps/annotate-target.js';
import { DONE, nonEmpty, paceTkeSync, type StepEffect } from './effect.js';

export const annotateTarget: StepEffect<AnnotateTargetStep> = {
  async apply(deps, owner, target, step, signal) {
    const { writer } = deps;
    const { kind, namespace, name } = target;
    const object = await writer.get(kind, namespace, name);
    const self = { ...target, uid: object?.metadata?.uid };
    // A Gateway's annotations are its EnvoyProxy's envoyService.annotations (docs/gateways.md §3): gone with it, they
    // leave nothing to write. A restore goes there even once the Gateway is gone: the EnvoyProxy outlives it.
    const via = step.envoyProxy;
    const holder = via && (object || step.restore) ? await writer.envoyServiceAnnotations(via.namespace, via.name) : undefined;
    const written = via ? holder : object;
    // The budget for TKE's sync of the change (paceTkeSync), before anything is written: a wait that shutdown ends
    // leaves the record and the object as they were. An annotation already as asked changes nothing for TKE.
    const annotations = (via ? holder : object?.metadata?.annotations) ?? {};
    if (written && Object.entries(step.set).some(([k, v]) => (annotations[k] ?? null) !== v)) await paceTkeSync(deps, signal);
    // Originals before the change they belong to; a release's forgetting after the restore it records.
    if (step.originals) {
      if (!written) return { status: 'gone' };
      await deps.records.update(self, owner, (current) => nonEmpty(mergeOriginals(withoutFields(current, step.forget ?? []), step.originals!)), { takeOver: !step.restore });
    }
    if (written && Object.keys(step.set).length > 0) {
      if (via) await writer.patchEnvoyServiceAnnotations(via.namespace, via.name, step.set);
      else await writer.patchAnnotations(kind, namespace, name, () => step.set, object);
    }
    if (step.forget && !step.originals) await deps.records.update(self, owner, (current) => nonEmpty(withoutFields(current, step.forget ?? [])), { takeOver: false });
    // A target that is gone has nothing left to annotate or restore; a release goes on to forget its record.
    return written || step.forget || step.restore ? DONE : { status: 'gone' };
  },
  event(step) {
    if (step.set[ServiceAnnotation.PreventLoopback] === 'true') return { type: 'Normal', reason: EventReason.PreventLoopbackAnnotated };
    return step.restore ? { type: 'Normal', reason: EventReason.OriginalsRestored } : undefined;
  },
};
