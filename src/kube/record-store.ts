// The ownership registry on the API server (RecordRegistry, src/model/record-registry.ts, holds its rules):
// LoopbackRecords, written only by loopguard. Every change is applied to the record as the API server has it (a
// create, or a replacement guarded by its resourceVersion, again after a conflict), so an original recorded by an
// earlier write is never lost to a stale cache. A record left empty is deleted.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER, GROUP, VERSION } from '../api/loopbackpolicy.js';
import { RECORD_PLURAL, TARGET_NAMESPACE_LABEL, recordName, type LoopbackRecord } from '../api/loopbackrecord.js';
import type { Originals } from '../api/originals.js';
import type { TargetRef } from '../model/facts.js';
import { InvalidRecordError, recordFor, writeBasis, type OwnerKey, type RecordRegistry } from '../model/record-registry.js';
import { ifFound, kubeStatus as code } from '../runtime/kube-errors.js';

const MAX_ATTEMPTS = 5;
const API = { group: GROUP, version: VERSION, plural: RECORD_PLURAL };

export class RecordStore implements RecordRegistry {
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async get(target: TargetRef): Promise<LoopbackRecord | undefined> {
    return (await ifFound(this.custom.getClusterCustomObject({ ...API, name: recordName(target) }))) as LoopbackRecord | undefined;
  }

  /**
   * The records of targets in `namespace`; every record without one (a cluster policy's revert). From the API server,
   * not the informer cache: the revert must not miss a record just written.
   */
  async list(namespace?: string): Promise<LoopbackRecord[]> {
    const list = (await this.custom.listClusterCustomObject({ ...API, ...(namespace !== undefined ? { labelSelector: `${TARGET_NAMESPACE_LABEL}=${namespace}` } : {}) })) as { items?: LoopbackRecord[] };
    return list.items ?? [];
  }

  async remove(record: LoopbackRecord): Promise<void> {
    await ifFound(this.custom.deleteClusterCustomObject({ ...API, name: record.metadata?.name ?? '', body: { preconditions: { resourceVersion: record.metadata?.resourceVersion } } }));
  }

  async update(target: TargetRef & { uid?: string }, owner: OwnerKey, change: (current: Originals | undefined) => Originals | undefined, options: { takeOver: boolean }): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(target);
      const basis = writeBasis(current, target, owner, options.takeOver);
      if (basis.kind === 'refuse') throw new InvalidRecordError(recordName(target), basis.problem);
      if (basis.kind === 'leave') return;
      const next = change(basis.originals);
      try {
        if (next === undefined) {
          if (current) await this.remove(current);
          return;
        }
        const body = recordFor(target, owner, next, current?.metadata?.resourceVersion);
        if (current) await this.custom.replaceClusterCustomObject({ ...API, name: recordName(target), body, fieldManager: FIELD_MANAGER });
        else await this.custom.createClusterCustomObject({ ...API, body, fieldManager: FIELD_MANAGER });
        return;
      } catch (err) {
        // 409: someone wrote in between (or created it first); 404: deleted in between (replaced: read again).
        if ((code(err) !== 409 && code(err) !== 404) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }
}
