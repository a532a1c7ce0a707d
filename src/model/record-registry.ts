// Pure: the ownership registry's rules (docs/architecture.md §7 "The ownership registry"). Records are cluster-scoped
// and written only by loopguard, never kept on the target, where anyone with `edit` on it could forge one.
import { API_VERSION } from '../api/loopbackpolicy.js';
import { CLUSTER_KIND } from '../api/clusterloopbackpolicy.js';
import { RECORD_KIND, TARGET_NAMESPACE_LABEL, recordName, type LoopbackRecord, type LoopbackRecordSpec } from '../api/loopbackrecord.js';
import { validateOriginals, type Originals } from '../api/originals.js';
import type { TargetRef } from './facts.js';

/** A record's policy: `<namespace>/<name>`, or `ClusterLoopbackPolicy/<name>` (no namespace is named in capitals). */
export type OwnerKey = string;

const CLUSTER_OWNER_PREFIX = `${CLUSTER_KIND}/`;

/** The owner key of a LoopbackPolicy. */
export function ownerKey(namespace: string, name: string): OwnerKey {
  return `${namespace}/${name}`;
}

/** The owner key of a ClusterLoopbackPolicy. */
export function clusterOwnerKey(name: string): OwnerKey {
  return `${CLUSTER_OWNER_PREFIX}${name}`;
}

/** The record's `spec.policy` for an owner key. */
export function policyRefOf(owner: OwnerKey): LoopbackRecordSpec['policy'] {
  if (owner.startsWith(CLUSTER_OWNER_PREFIX)) return { kind: CLUSTER_KIND, namespace: '', name: owner.slice(CLUSTER_OWNER_PREFIX.length) };
  const [namespace = '', name = ''] = owner.split('/');
  return { namespace, name };
}

/** The owner key of a record's `spec.policy` (no `kind`: a LoopbackPolicy, as before the cluster kind) or a policy. */
export function ownerOf(p: { kind?: string; namespace: string; name: string }): OwnerKey {
  return p.kind === CLUSTER_KIND ? clusterOwnerKey(p.name) : ownerKey(p.namespace, p.name);
}

/** How a message names the owner: `ClusterLoopbackPolicy/<name>` or `LoopbackPolicy <namespace>/<name>`. */
export function describeOwner(owner: OwnerKey): string {
  return owner.startsWith(CLUSTER_OWNER_PREFIX) ? owner : `LoopbackPolicy ${owner}`;
}

/** The policy holding a target by its record (whatever object it was made for): the claims' tie-break. */
export function holderOf(record: LoopbackRecord | undefined): OwnerKey | undefined {
  return record ? ownerOf(record.spec.policy) : undefined;
}

/**
 * Whether `record` was made for this very object: not when both uids are known and differ (an earlier object of the
 * same name: its originals say nothing about the new one). Without a uid on either side, it is taken as its.
 */
export function madeFor(record: LoopbackRecord, object: { uid?: string }): boolean {
  return record.spec.target.uid === undefined || object.uid === undefined || record.spec.target.uid === object.uid;
}

/** Why a stored record's originals cannot be used (they fail validation), or undefined when they can. */
export function problemOf(record: LoopbackRecord): string | undefined {
  return validateOriginals(record.spec.originals);
}

/** A target's entry in the registry, as the planner reads it. */
export interface RecordOwnership {
  /** The originals the record holds, when they are valid. */
  originals?: Originals;
  /** The owner key of the policy the record belongs to. */
  owner?: OwnerKey;
  /** Why the record could not be read (logged; the record is left alone). */
  problem?: string;
}

/** What `record` says (with `object`: none if made for another, madeFor); invalid originals only as `problem`. */
export function readRecord(record: LoopbackRecord | undefined, object?: { uid?: string }): RecordOwnership {
  if (!record || (object && !madeFor(record, object))) return {};
  const owner = ownerOf(record.spec.policy);
  const problem = problemOf(record);
  return problem ? { owner, problem: `LoopbackRecord ${record.metadata?.name ?? ''}: ${problem}` } : { owner, originals: record.spec.originals };
}

/** A stored record that fails validation: never merged into or overwritten (it may hold the only originals). */
export class InvalidRecordError extends Error {
  constructor(recordName: string, problem: string) {
    super(`LoopbackRecord ${recordName} is invalid (${problem}); loopguard leaves it alone: fix it, or delete it to let loopguard record anew`);
    this.name = 'InvalidRecordError';
  }
}

/** What a write to a target's record starts from, given the record as the API server has it. */
export type WriteBasis =
  /** Write `change(originals)`; undefined originals: there is no record (or only one of an earlier object). */
  | { kind: 'write'; originals: Originals | undefined }
  /** Another policy's record, and the write is not a take-over: left alone. */
  | { kind: 'leave'; holder: OwnerKey }
  /** The stored record is invalid: refused (InvalidRecordError). */
  | { kind: 'refuse'; problem: string };

/** The basis of `owner`'s write to `target`'s record `current`; only a mitigation takes over (`takeOver`), never a release. */
export function writeBasis(current: LoopbackRecord | undefined, target: { uid?: string }, owner: OwnerKey, takeOver: boolean): WriteBasis {
  if (!current || !madeFor(current, target)) return { kind: 'write', originals: undefined };
  const problem = problemOf(current);
  if (problem) return { kind: 'refuse', problem };
  const holder = ownerOf(current.spec.policy);
  if (holder !== owner && !takeOver) return { kind: 'leave', holder };
  return { kind: 'write', originals: current.spec.originals };
}

/** The target's record holding `originals` for `owner` (with `resourceVersion`: a replacement of the one read). */
export function recordFor(target: TargetRef & { uid?: string }, owner: OwnerKey, originals: Originals, resourceVersion?: string): LoopbackRecord {
  return {
    apiVersion: API_VERSION,
    kind: RECORD_KIND,
    metadata: { name: recordName(target), labels: { [TARGET_NAMESPACE_LABEL]: target.namespace }, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
    spec: {
      target: { kind: target.kind, namespace: target.namespace, name: target.name, ...(target.uid ? { uid: target.uid } : {}) },
      policy: policyRefOf(owner),
      originals,
    },
  };
}

/** The registry's I/O (src/kube/record-store.ts). A write applies `change` to the record as stored, never a cached copy. */
export interface RecordRegistry {
  /** Every record of targets in `namespace`, from the API server. */
  list(namespace?: string): Promise<LoopbackRecord[]>;
  /** Deletes this record as read (guarded by its resourceVersion); gone already is fine. */
  remove(record: LoopbackRecord): Promise<void>;
  /** Sets the record to `change(originals)` for `owner` (undefined: deleted), as writeBasis says (InvalidRecordError: refuse). */
  update(target: TargetRef & { uid?: string }, owner: OwnerKey, change: (current: Originals | undefined) => Originals | undefined, options: { takeOver: boolean }): Promise<void>;
}
