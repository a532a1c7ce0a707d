// A target's LoopbackRecord (loopguard's ownership registry), read as an admin would: `kubectl get lbrec`.
import type { Originals } from '../../src/api/originals.js';
import { recordName, type LoopbackRecord } from '../../src/api/loopbackrecord.js';
import type { TargetKind } from '../../src/api/loopbackpolicy.js';
import { kubectl } from './kube.js';

/** The record of a target, or undefined when there is none. */
export async function findRecord(kind: TargetKind, namespace: string, name: string): Promise<LoopbackRecord | undefined> {
  const res = await kubectl(['get', `loopbackrecord/${recordName({ kind, namespace, name })}`, '-o', 'json']);
  if (res.code !== 0 && /\(NotFound\)/.test(res.stderr)) return undefined;
  if (res.code !== 0) throw new Error(`kubectl get loopbackrecord: ${res.stderr}`);
  return JSON.parse(res.stdout) as LoopbackRecord;
}

/** The originals a target's record holds ({} when there is no record). */
export async function originalsOf(kind: TargetKind, namespace: string, name: string): Promise<Originals | Record<string, never>> {
  return (await findRecord(kind, namespace, name))?.spec.originals ?? {};
}
