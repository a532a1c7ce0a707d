// Pure: the read side of the one originals registry. Today the record lives on the target itself
// (`loopguard.dev/originals`, owner in `loopguard.dev/policy`, both written only with loopguard's field manager);
// every reader goes through here, so moving it to a store namespace users cannot write changes this file and the
// registry writer only.
import { LoopguardAnnotation, readOriginals, type Annotations, type OriginalsRecord } from '../api/annotations.js';

export interface Ownership {
  /** The record, when the annotation holds a valid one. */
  record?: OriginalsRecord;
  /** `<namespace>/<name>` of the policy the record belongs to. */
  owner?: string;
  /** Why the record could not be read (a Warning for the target's owner). */
  problem?: string;
}

/** `<namespace>/<name>` of a policy, as the registry writes it. */
export function ownerOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function ownershipOf(annotations: Annotations): Ownership {
  const owner = annotations?.[LoopguardAnnotation.Policy];
  const parsed = readOriginals(annotations);
  return {
    ...(owner ? { owner } : {}),
    ...(parsed.kind === 'value' ? { record: parsed.value } : {}),
    ...(parsed.kind === 'invalid' ? { problem: parsed.error } : {}),
  };
}

/** Whether the registry holds bookkeeping of `owner` on a target with these annotations. */
export function ownedBy(annotations: Annotations, owner: string): boolean {
  return annotations?.[LoopguardAnnotation.Policy] === owner && annotations[LoopguardAnnotation.Originals] !== undefined;
}
