// A target's LoopbackRecord (loopguard's ownership registry). Read in this process (readObject): most reads are a wait's
// polls, and a record is a plain object whose `kubectl get` shows a user nothing these do not.
import type { Originals } from '../../src/api/originals.js';
import { RECORD_KIND, recordName, type LoopbackRecord } from '../../src/api/loopbackrecord.js';
import { API_VERSION, type TargetKind } from '../../src/api/loopbackpolicy.js';
import { readObject } from './kube.js';

/** The record of a target, or undefined when there is none; on the worker's control plane unless `kubeconfig` names another. */
export function findRecord(kind: TargetKind, namespace: string, name: string, kubeconfig?: string): Promise<LoopbackRecord | undefined> {
  return readObject<LoopbackRecord>({ apiVersion: API_VERSION, kind: RECORD_KIND, name: recordName({ kind, namespace, name }) }, kubeconfig);
}

/** The originals a target's record holds ({} when there is no record). */
export async function originalsOf(kind: TargetKind, namespace: string, name: string): Promise<Originals | Record<string, never>> {
  return (await findRecord(kind, namespace, name))?.spec.originals ?? {};
}
