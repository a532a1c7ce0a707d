// Keeps the admission policy's parameters (src/admission/params.ts) in the AdmissionParams object the binding's paramRef
// names, in the operator's namespace (a kind of loopguard's own, not a ConfigMap: kubernetes/kubernetes#130887, see
// crds/loopguard.dev_admissionparams.yaml). Writes only when the data differs from what the object holds (read first,
// so a deleted or edited object is put back on the next change, or at the latest on the periodic resync): a burst of
// events (the informers' first list, a GitOps sync of many policies) becomes one build, one read and at most one
// write, and a failed write is tried again later.
// RBAC: get/update on that one object, create in the namespace (config/rbac/admission_params_role.yaml).
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { ADMISSION_PARAMS_API_VERSION, ADMISSION_PARAMS_KIND, ADMISSION_PARAMS_PLURAL, type AdmissionParams } from '../api/admissionparams.js';
import { GROUP, VERSION } from '../api/loopbackpolicy.js';
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
  private readonly api: CustomObjectsApi;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private stopped = false;
  private lastError = '';

  constructor(kc: KubeConfig, private readonly o: AdmissionParamsOptions) {
    this.api = kc.makeApiClient(CustomObjectsApi);
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
      const body: AdmissionParams = {
        apiVersion: ADMISSION_PARAMS_API_VERSION,
        kind: ADMISSION_PARAMS_KIND,
        metadata: {
          name: ADMISSION_PARAMS_NAME,
          namespace,
          labels: { 'app.kubernetes.io/name': 'loopguard', 'app.kubernetes.io/component': 'admission-params' },
          ...(current?.metadata.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        },
        data,
      };
      const where = { group: GROUP, version: VERSION, namespace, plural: ADMISSION_PARAMS_PLURAL };
      if (current) await this.api.replaceNamespacedCustomObject({ ...where, name: ADMISSION_PARAMS_NAME, body });
      else await this.api.createNamespacedCustomObject({ ...where, body });
      this.lastError = '';
      this.resync();
      this.o.logger.info('Admission parameters written', { admissionParams: `${namespace}/${ADMISSION_PARAMS_NAME}`, keys: Object.keys(data).length });
    } catch (err) {
      const text = kubeErrorMessage(err);
      // Once per distinct error: a missing Role would otherwise log on every retry.
      if (text !== this.lastError) {
        this.o.logger.warn('Could not write the admission parameters; the admission policy stays silent or out of date until this works', {
          admissionParams: `${namespace}/${ADMISSION_PARAMS_NAME}`,
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

  private async read(): Promise<AdmissionParams | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.o.namespace, plural: ADMISSION_PARAMS_PLURAL, name: ADMISSION_PARAMS_NAME })) as AdmissionParams;
    } catch (err) {
      if (kubeStatus(err) === 404) return undefined;
      throw err;
    }
  }
}
