// Pure: the read side of the one originals registry. Records live in LoopbackRecords (cluster-scoped, written only
// by loopguard; src/kube/record-store.ts), never on the target, where anyone with `edit` on it could forge one.
// A record's originals are validated here like any stored input: an invalid one is reported, never acted on.
import { validateOriginals, type Originals } from '../api/originals.js';
import type { LoopbackRecord } from '../api/loopbackrecord.js';

export interface RecordOwnership {
  /** The record, when it holds a valid one. */
  record?: Originals;
  /** `<namespace>/<name>` of the policy the record belongs to. */
  owner?: string;
  /** Why the record could not be read (logged; the record is left alone). */
  problem?: string;
}

/** `<namespace>/<name>` of a policy, as the registry writes it. */
export function ownerOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function ownershipOf(entry: LoopbackRecord | undefined): RecordOwnership {
  if (!entry) return {};
  const owner = ownerOf(entry.spec.policy.namespace, entry.spec.policy.name);
  const problem = validateOriginals(entry.spec.originals);
  return problem ? { owner, problem: `LoopbackRecord ${entry.metadata?.name ?? ''}: ${problem}` } : { owner, record: entry.spec.originals };
}

/** Whether a record was made for this very object (an earlier object of the same name had another uid). */
export function sameObject(entry: LoopbackRecord, t: { uid?: string }): boolean {
  return entry.spec.target.uid === undefined || t.uid === undefined || entry.spec.target.uid === t.uid;
}

/** Whether the registry holds bookkeeping of `owner` in this entry. */
export function ownedBy(entry: LoopbackRecord | undefined, owner: string): boolean {
  return entry !== undefined && ownerOf(entry.spec.policy.namespace, entry.spec.policy.name) === owner;
}
