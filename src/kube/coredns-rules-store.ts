// The one ConfigMap loopguard owns in kube-system for `l7.inClusterDNS: Managed` (docs/dns.md §4), and the one it
// only reads there: the Corefile, to say why rules are not in effect (it is the user's and TKE's add-on's). The rules
// ConfigMap is created empty by the Helm chart and config/default, and loopguard may only get and update it (RBAC by
// resourceNames: config/rbac/coredns_rules_role.yaml): it never creates or deletes anything in kube-system.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../api/loopbackpolicy.js';
import { ifFound, kubeErrorMessage, kubeStatus } from '../runtime/kube-errors.js';

export const COREDNS_NAMESPACE = 'kube-system';
export const RULES_CONFIGMAP = 'loopguard-coredns-rules';
/** The key, which becomes the file name in the mount; `*.rules` is what the import line's glob reads. */
const RULES_KEY = 'loopguard.rules';

/** The ConfigMap changed between its read and the write (HTTP 409): the pass throws it for the work queue's retry. */
export class RulesWriteConflict extends Error {
  override readonly name = 'RulesWriteConflict';
}

export type CorednsRulesAccess = ReturnType<typeof corednsRulesStore>;

export function corednsRulesStore(kc: KubeConfig) {
  const core = kc.makeApiClient(CoreV1Api);
  const get = async () => {
    const cm = await ifFound(core.readNamespacedConfigMap({ name: RULES_CONFIGMAP, namespace: COREDNS_NAMESPACE })).catch((err: unknown) => {
      const why = kubeErrorMessage(err);
      throw new Error(kubeStatus(err) === 403 ? `loopguard may not read it (${why}): the Role of config/rbac/coredns_rules_role.yaml is missing` : why, { cause: err });
    });
    if (!cm) throw new Error(`it does not exist (the chart and config/default create it; or: kubectl -n ${COREDNS_NAMESPACE} create configmap ${RULES_CONFIGMAP})`);
    return cm;
  };
  return {
    /** The stored rules text ('' when the key is absent); a problem (missing, forbidden) is thrown with a clear message. */
    read: async (): Promise<string> => (await get()).data?.[RULES_KEY] ?? '',
    /** Writes `text` unless it is stored already: the text it found, and whether it wrote. A conflict throws RulesWriteConflict. */
    async write(text: string): Promise<{ stored: string; wrote: boolean }> {
      const cm = await get();
      const stored = cm.data?.[RULES_KEY] ?? '';
      // Its data is loopguard's whole: a key someone added (another `*.rules` file the import would read) goes.
      if (cm.data?.[RULES_KEY] === text && Object.keys(cm.data).length === 1 && !cm.binaryData) return { stored, wrote: false };
      await core.replaceNamespacedConfigMap({ name: RULES_CONFIGMAP, namespace: COREDNS_NAMESPACE, fieldManager: FIELD_MANAGER, body: { ...cm, data: { [RULES_KEY]: text }, binaryData: undefined } }).catch((err: unknown) => {
        if (kubeStatus(err) === 409) throw new RulesWriteConflict(`${RULES_CONFIGMAP} changed while loopguard wrote it: ${kubeErrorMessage(err)}`, { cause: err });
        throw new Error(kubeErrorMessage(err), { cause: err });
      });
      return { stored, wrote: true };
    },
    /** The Corefile text; undefined when it cannot be read (absent, forbidden). */
    corefile: async (): Promise<string | undefined> => (await core.readNamespacedConfigMap({ name: 'coredns', namespace: COREDNS_NAMESPACE }).catch(() => undefined))?.data?.['Corefile'],
    /** The kube-dns Service's ClusterIP and DNS port ("10.0.0.10:53"), what the rules are checked through by default; undefined when unreadable. */
    async kubeDns(): Promise<string | undefined> {
      const svc = await core.readNamespacedService({ name: 'kube-dns', namespace: COREDNS_NAMESPACE }).catch(() => undefined);
      const ip = svc?.spec?.clusterIP;
      const port = svc?.spec?.ports?.find((p) => p.protocol === 'UDP' || p.protocol === undefined)?.port ?? 53;
      return ip && ip !== 'None' ? `${ip.includes(':') ? `[${ip}]` : ip}:${port}` : undefined;
    },
  };
}
