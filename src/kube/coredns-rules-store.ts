// The one ConfigMap loopguard owns in kube-system for `l7.inClusterDNS: Managed` (docs/dns.md §4), and the one it
// only reads there: the Corefile. The rules ConfigMap is created empty by the Helm chart and config/default, and
// loopguard may only get and update it (RBAC by resourceNames: config/rbac/coredns_rules_role.yaml): it never creates
// or deletes anything in kube-system. Written whole, with the stored resourceVersion (a conflict is the queue's
// retry), and only when the text differs. The Corefile (ConfigMap `coredns`, key `Corefile`) is read to say why rules
// are not in effect, never written: it is the user's and TKE's add-on's.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/loopbackpolicy.js';
import { ifFound, kubeErrorMessage, kubeStatus } from '../runtime/kube-errors.js';

export const COREDNS_NAMESPACE = 'kube-system';
export const RULES_CONFIGMAP = 'loopguard-coredns-rules';
/** The key, which becomes the file name in the mount; `*.rules` is what the import line's glob reads. */
export const RULES_KEY = 'loopguard.rules';
export const COREFILE_CONFIGMAP = 'coredns';
export const COREFILE_KEY = 'Corefile';
/** The Service in front of CoreDNS (TKE: "CoreDNS Notes", docs/dns.md §2): what the rules are checked through by default. */
export const KUBE_DNS_SERVICE = 'kube-dns';

/**
 * The ConfigMap changed between its read and the write (HTTP 409): someone else wrote it, or another replica. Not a
 * problem to report: the unit's pass throws it, so the work queue tries again soon with its backoff.
 */
export class RulesWriteConflict extends Error {
  override readonly name = 'RulesWriteConflict';
}

export interface CorednsRulesAccess {
  /** The stored rules text ('' when the key is absent); a problem (missing, forbidden) is thrown with a clear message. */
  read(): Promise<string>;
  /** Writes `text` if it differs from what is stored; true when it wrote. A conflict throws RulesWriteConflict. */
  write(text: string): Promise<boolean>;
  /** The Corefile text; undefined when it cannot be read (absent, forbidden). */
  corefile(): Promise<string | undefined>;
  /** kube-system/kube-dns's ClusterIP and DNS port ("10.0.0.10:53"); undefined when it cannot be read. */
  kubeDns(): Promise<string | undefined>;
}

export class CorednsRulesStore implements CorednsRulesAccess {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig, private readonly namespace = COREDNS_NAMESPACE) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  private async get() {
    let cm;
    try {
      cm = await ifFound(this.core.readNamespacedConfigMap({ name: RULES_CONFIGMAP, namespace: this.namespace }));
    } catch (err) {
      const why = kubeErrorMessage(err);
      throw new Error(kubeStatus(err) === 403 ? `loopguard may not read it (${why}): the Role of config/rbac/coredns_rules_role.yaml is missing` : why, { cause: err });
    }
    if (!cm) throw new Error(`it does not exist (the chart and config/default create it; or: kubectl -n ${this.namespace} create configmap ${RULES_CONFIGMAP})`);
    return cm;
  }

  async read(): Promise<string> {
    return (await this.get()).data?.[RULES_KEY] ?? '';
  }

  async write(text: string): Promise<boolean> {
    const cm = await this.get();
    // Its data is loopguard's whole: a key someone added (another `*.rules` file the import would read) goes.
    if (cm.data?.[RULES_KEY] === text && Object.keys(cm.data).length === 1 && !cm.binaryData) return false;
    try {
      await this.core.replaceNamespacedConfigMap({
        name: RULES_CONFIGMAP,
        namespace: this.namespace,
        fieldManager: FIELD_MANAGER,
        body: { ...cm, data: { [RULES_KEY]: text }, binaryData: undefined },
      });
    } catch (err) {
      if (kubeStatus(err) === 409) throw new RulesWriteConflict(`${RULES_CONFIGMAP} changed while loopguard wrote it: ${kubeErrorMessage(err)}`, { cause: err });
      throw new Error(kubeErrorMessage(err), { cause: err });
    }
    return true;
  }

  async corefile(): Promise<string | undefined> {
    const cm = await this.core.readNamespacedConfigMap({ name: COREFILE_CONFIGMAP, namespace: this.namespace }).catch(() => undefined);
    return cm?.data?.[COREFILE_KEY];
  }

  async kubeDns(): Promise<string | undefined> {
    const svc = await this.core.readNamespacedService({ name: KUBE_DNS_SERVICE, namespace: this.namespace }).catch(() => undefined);
    const ip = svc?.spec?.clusterIP;
    const port = svc?.spec?.ports?.find((p) => p.protocol === 'UDP' || p.protocol === undefined)?.port ?? 53;
    return ip && ip !== 'None' ? `${ip.includes(':') ? `[${ip}]` : ip}:${port}` : undefined;
  }
}
