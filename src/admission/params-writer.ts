// Keeps the admission policy's parameters (src/admission/params.ts) in the ConfigMap the binding's paramRef names,
// in the operator's namespace. Writes only when the data differs from what the ConfigMap holds (read first, so a
// deleted or edited ConfigMap is put back on the next change, or at the latest on the periodic resync): a burst of
// events (the informers' first list, a GitOps sync of many policies) becomes one build, one read and at most one
// write, and a failed write is tried again later.
// RBAC: get/update on that one ConfigMap, create in the namespace (config/rbac/admission_params_role.yaml).
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { ADMISSION_PARAMS_NAME, sameData } from './params.js';
import { kubeErrorMessage, kubeStatus } from '../runtime/kube-errors.js';

export interface AdmissionParamsLogger {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
}

export interface AdmissionParamsOptions {
  namespace: string;
  /** Builds the data from the caches (pure: buildAdmissionParams). */
  build: () => Record<string, string>;
  logger: AdmissionParamsLogger;
  /** Only the leader writes. */
  mayWrite: () => boolean;
  /** How long events are gathered before one build (ms). */
  settleMs?: number;
  /** When a failed write is tried again (ms). */
  retryMs?: number;
  /** How often the ConfigMap is read again without a change (ms; the operator's drift-check interval). */
  resyncMs?: number;
}

export class AdmissionParamsWriter {
  private readonly core: CoreV1Api;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private stopped = false;
  private lastError = '';

  constructor(kc: KubeConfig, private readonly o: AdmissionParamsOptions) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** The caches are synced and this replica leads: from now on the parameters are kept. */
  start(): void {
    this.started = true;
    this.changed();
  }

  /** Something the parameters depend on changed (a policy, the kube-proxy profile). */
  changed(delayMs = this.o.settleMs ?? 200): void {
    if (this.stopped || !this.started) return;
    // A pending retry gives way to a sooner build; a pending build is not postponed.
    if (this.timer && this.dueAt <= Date.now() + delayMs) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
    this.timer.unref();
  }

  /** Builds and writes now if needed; resolves when the cluster holds the data (or the write failed and is retried). */
  async flush(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.sync().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.changed(0);
      }
    });
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async sync(): Promise<void> {
    if (this.stopped || !this.o.mayWrite()) return;
    const data = this.o.build();
    const { namespace } = this.o;
    try {
      const current = await this.read();
      if (current && sameData(current.data, data)) {
        this.resync();
        return;
      }
      const body: V1ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: ADMISSION_PARAMS_NAME,
          namespace,
          labels: { 'app.kubernetes.io/name': 'loopguard', 'app.kubernetes.io/component': 'admission-params' },
          ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        },
        data,
      };
      if (current) await this.core.replaceNamespacedConfigMap({ name: ADMISSION_PARAMS_NAME, namespace, body });
      else await this.core.createNamespacedConfigMap({ namespace, body });
      this.lastError = '';
      this.resync();
      this.o.logger.info('Admission parameters written', { configMap: `${namespace}/${ADMISSION_PARAMS_NAME}`, keys: Object.keys(data).length });
    } catch (err) {
      const text = kubeErrorMessage(err);
      // Once per distinct error: a missing Role would otherwise log on every retry.
      if (text !== this.lastError) {
        this.o.logger.warn('Could not write the admission parameters; the admission policy stays silent or out of date until this works', {
          configMap: `${namespace}/${ADMISSION_PARAMS_NAME}`,
          error: text,
        });
      }
      this.lastError = text;
      // A conflict (another writer in between) is tried again at once; anything else after the retry delay.
      this.changed(kubeStatus(err) === 409 ? 0 : (this.o.retryMs ?? 30_000));
    }
  }

  private resync(): void {
    if (this.o.resyncMs) this.changed(this.o.resyncMs);
  }

  private async read(): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ name: ADMISSION_PARAMS_NAME, namespace: this.o.namespace });
    } catch (err) {
      if (kubeStatus(err) === 404) return undefined;
      throw err;
    }
  }
}
