// The write side of the originals registry: LoopbackRecords, written only by loopguard. Every change is applied
// to the record as the API server has it (a create, or an update guarded by its resourceVersion, again after a
// conflict), so an original recorded by an earlier write is never lost to a stale cache. A record left empty is
// deleted.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { validateOriginals, type Originals } from '../api/originals.js';
import { API_VERSION, FIELD_MANAGER, GROUP, VERSION } from '../api/loopbackpolicy.js';
import { RECORD_KIND, RECORD_PLURAL, TARGET_NAMESPACE_LABEL, recordName, type LoopbackRecord } from '../api/loopbackrecord.js';
import type { TargetRef } from '../model/facts.js';
import { kubeStatus as code } from '../runtime/kube-errors.js';

const MAX_ATTEMPTS = 5;

/** A stored record that fails validation: never merged into or overwritten (it may hold the only originals). */
export class InvalidRecordError extends Error {
  constructor(readonly recordName: string, problem: string) {
    super(`LoopbackRecord ${recordName} is invalid (${problem}); loopguard leaves it alone: fix it, or delete it to let loopguard record anew`);
    this.name = 'InvalidRecordError';
  }
}
const API = { group: GROUP, version: VERSION, plural: RECORD_PLURAL };

export class RecordStore {
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async get(target: TargetRef): Promise<LoopbackRecord | undefined> {
    try {
      return (await this.custom.getClusterCustomObject({ ...API, name: recordName(target) })) as LoopbackRecord;
    } catch (err) {
      if (code(err) === 404) return undefined;
      throw err;
    }
  }

  /** Every record of targets in `namespace`, from the API server (the revert must not miss a record just written). */
  async list(namespace: string): Promise<LoopbackRecord[]> {
    const list = (await this.custom.listClusterCustomObject({ ...API, labelSelector: `${TARGET_NAMESPACE_LABEL}=${namespace}` })) as { items?: LoopbackRecord[] };
    return list.items ?? [];
  }

  /** Deletes this record as read (resourceVersion precondition); gone already is fine. */
  async remove(record: LoopbackRecord): Promise<void> {
    await this.deleteAsRead(record.metadata?.name ?? '', record);
  }

  private async deleteAsRead(name: string, record: LoopbackRecord): Promise<void> {
    try {
      await this.custom.deleteClusterCustomObject({ ...API, name, body: { preconditions: { resourceVersion: record.metadata?.resourceVersion } } });
    } catch (err) {
      if (code(err) !== 404) throw err;
    }
  }

  /**
   * Sets the target's record to `change(current)` for `owner` (`<namespace>/<name>`): created, updated, or deleted
   * when the result is undefined (the caller judges when a record holds nothing). A record of an earlier object of the same name (another uid) counts as none.
   * Without `takeOver`, a record another policy holds is left alone: only a mitigation takes a target
   * over, a release never writes another policy's record.
   */
  async update(
    target: TargetRef & { uid?: string },
    owner: string,
    change: (current: Originals | undefined) => Originals | undefined,
    options: { takeOver: boolean },
  ): Promise<void> {
    const [policyNamespace = '', policyName = ''] = owner.split('/');
    const name = recordName(target);
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(target);
      const stale = current?.spec.target.uid !== undefined && target.uid !== undefined && current.spec.target.uid !== target.uid;
      const problem = current && !stale ? validateOriginals(current.spec.originals) : undefined;
      if (problem) throw new InvalidRecordError(name, problem);
      const heldBy = current ? `${current.spec.policy.namespace}/${current.spec.policy.name}` : undefined;
      if (current && !stale && heldBy !== owner && !options.takeOver) return;
      const next = change(stale ? undefined : current?.spec.originals);
      try {
        if (next === undefined) {
          if (current) await this.deleteAsRead(name, current);
          return;
        }
        const body: LoopbackRecord = {
          apiVersion: API_VERSION,
          kind: RECORD_KIND,
          metadata: { name, labels: { [TARGET_NAMESPACE_LABEL]: target.namespace }, ...(current ? { resourceVersion: current.metadata?.resourceVersion } : {}) },
          spec: {
            target: { kind: target.kind, namespace: target.namespace, name: target.name, ...(target.uid ? { uid: target.uid } : {}) },
            policy: { namespace: policyNamespace, name: policyName },
            originals: next,
          },
        };
        if (current) await this.custom.replaceClusterCustomObject({ ...API, name, body, fieldManager: FIELD_MANAGER });
        else await this.custom.createClusterCustomObject({ ...API, body, fieldManager: FIELD_MANAGER });
        return;
      } catch (err) {
        // 409: someone wrote in between (or created it first); 404: deleted in between (replaced: read again).
        if ((code(err) !== 409 && code(err) !== 404) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }
}
