// Where the observation checkpoint (src/cloud/observation-checkpoint.ts) lives: the binaryData of up to MAX_PARTS
// ConfigMaps loopguard-observations-0…, in loopguard's own namespace (--namespace, src/runtime/config.ts; its Roles are there). Part 0 is
// written last and names the write (`checkpoint`) and its part count: a reader joins only parts of the same write,
// so a process stopped halfway leaves the previous checkpoint's part 0 naming parts that no longer match, and the
// whole checkpoint is ignored. The key that seals it (observation-checkpoint.ts) is the Secret
// loopguard-observations-key there, made by the first leader that needs it. RBAC
// (config/rbac/observation_checkpoint_role.yaml): get/update on these ConfigMaps, get on that Secret, create of
// both in the namespace (create cannot be limited by name: config/rbac/admission_params_role.yaml).
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { CHECKPOINT_KEY_BYTES, MAX_PARTS } from '../cloud/observation-checkpoint.js';
import { ifFound, kubeStatus } from '../runtime/kube-errors.js';
import { sharedUntilFailed } from '../runtime/settle.js';

export const CHECKPOINT_CONFIGMAP = 'loopguard-observations';
/** The Secret with the checkpoint's key. */
export const CHECKPOINT_KEY_SECRET = 'loopguard-observations-key';
const SECRET_KEY = 'key';
const LABELS = { 'app.kubernetes.io/name': 'loopguard', 'app.kubernetes.io/component': 'observation-checkpoint' };
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
    return { parts: maps.map((cm) => Buffer.from(cm.binaryData?.[KEY] ?? '', 'base64')) };
  }

  /** Writes the parts (at most MAX_PARTS), part 0 last. */
  async save(parts: readonly Buffer[], id: string): Promise<void> {
    if (parts.length > MAX_PARTS) throw new Error(`the checkpoint needs ${parts.length} ConfigMaps, more than ${MAX_PARTS}`);
    const names = checkpointNames();
    for (let i = parts.length - 1; i >= 0; i--) {
      const name = names[i] as string;
      const metadata = { name, namespace: this.namespace, labels: LABELS };
      const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { checkpoint: id, parts: String(parts.length) }, binaryData: { [KEY]: (parts[i] as Buffer).toString('base64') } };
      // Unconditional: only the leader writes here, and the newest checkpoint wins.
      const replaced = await ifFound(this.core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body }));
      if (!replaced) await this.core.createNamespacedConfigMap({ namespace: this.namespace, body });
    }
  }

  /**
   * The checkpoint's key: the Secret's, created with fresh randomness when there is none (then no stored checkpoint
   * opens: a cold start). Kept for the process once read; a failed read is tried again next time.
   */
  readonly key = sharedUntilFailed(() => this.readOrCreateKey());

  private async readOrCreateKey(): Promise<Buffer> {
    const read = async () => {
      const secret = await ifFound(this.core.readNamespacedSecret({ name: CHECKPOINT_KEY_SECRET, namespace: this.namespace }));
      if (!secret) return undefined;
      const key = Buffer.from(secret.data?.[SECRET_KEY] ?? '', 'base64');
      if (key.length < CHECKPOINT_KEY_BYTES) throw new Error(`Secret ${this.namespace}/${CHECKPOINT_KEY_SECRET} holds no key of ${CHECKPOINT_KEY_BYTES} bytes: delete it and loopguard makes a new one`);
      return key;
    };
    const existing = await read();
    if (existing) return existing;
    try {
      const metadata = { name: CHECKPOINT_KEY_SECRET, namespace: this.namespace, labels: LABELS };
      await this.core.createNamespacedSecret({ namespace: this.namespace, body: { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata, data: { [SECRET_KEY]: randomBytes(CHECKPOINT_KEY_BYTES).toString('base64') } } });
    } catch (err) {
      // Another replica made it first: theirs is the key.
      if (kubeStatus(err) !== 409) throw err;
    }
    const made = await read();
    if (!made) throw new Error(`Secret ${this.namespace}/${CHECKPOINT_KEY_SECRET} was created but cannot be read`);
    return made;
  }

  private read(name: string): Promise<V1ConfigMap | undefined> {
    return ifFound(this.core.readNamespacedConfigMap({ name, namespace: this.namespace }));
  }
}
