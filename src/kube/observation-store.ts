// Where the observation checkpoint (src/cloud/observation-checkpoint.ts) lives: the binaryData of up to MAX_PARTS
// ConfigMaps loopguard-observations-0…, in loopguard's own namespace (the Lease's, where its Roles are). Part 0 is
// written last and names the write (`checkpoint`) and its part count: a reader joins only parts of the same write,
// so a process stopped halfway leaves the previous checkpoint's part 0 naming parts that no longer match, and the
// whole checkpoint is ignored. RBAC: get/update on these names, create in the namespace (create cannot be limited by
// name: config/rbac/admission_params_role.yaml).
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { MAX_PARTS } from '../cloud/observation-checkpoint.js';
import { kubeStatus } from '../runtime/kube-errors.js';

export const CHECKPOINT_CONFIGMAP = 'loopguard-observations';
const KEY = 'observations.json.gz';

/** The ConfigMap names RBAC must allow, in order. */
export const checkpointNames = (): string[] => Array.from({ length: MAX_PARTS }, (_, i) => `${CHECKPOINT_CONFIGMAP}-${i}`);

export type LoadedParts = { parts: Buffer[] } | { absent: true } | { problem: string };

export class ObservationStore {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig, private readonly namespace: string) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** The stored parts, in order; absent when part 0 does not exist. */
  async load(): Promise<LoadedParts> {
    const names = checkpointNames();
    const first = await this.read(names[0] as string);
    if (!first) return { absent: true };
    const id = first.data?.['checkpoint'];
    const count = Number(first.data?.['parts']);
    if (!id || !Number.isInteger(count) || count < 1 || count > MAX_PARTS) return { problem: `${names[0]} names no valid checkpoint` };
    const maps = [first];
    for (const name of names.slice(1, count)) {
      const cm = await this.read(name);
      if (cm?.data?.['checkpoint'] !== id) return { problem: `${name} is missing or of another write than ${names[0]}` };
      maps.push(cm);
    }
    const parts = maps.map((cm) => Buffer.from(cm.binaryData?.[KEY] ?? '', 'base64'));
    return { parts };
  }

  /** Writes the parts (at most MAX_PARTS), part 0 last. */
  async save(parts: readonly Buffer[], id: string): Promise<void> {
    if (parts.length > MAX_PARTS) throw new Error(`the checkpoint needs ${parts.length} ConfigMaps, more than ${MAX_PARTS}`);
    const names = checkpointNames();
    for (let i = parts.length - 1; i >= 0; i--) {
      const name = names[i] as string;
      const body: V1ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: this.namespace, labels: { 'app.kubernetes.io/name': 'loopguard', 'app.kubernetes.io/component': 'observation-checkpoint' } },
        data: { checkpoint: id, parts: String(parts.length) },
        binaryData: { [KEY]: (parts[i] as Buffer).toString('base64') },
      };
      try {
        // Unconditional: only the leader writes here, and the newest checkpoint wins.
        await this.core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body });
      } catch (err) {
        if (kubeStatus(err) !== 404) throw err;
        await this.core.createNamespacedConfigMap({ namespace: this.namespace, body });
      }
    }
  }

  private async read(name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ name, namespace: this.namespace });
    } catch (err) {
      if (kubeStatus(err) === 404) return undefined;
      throw err;
    }
  }
}
