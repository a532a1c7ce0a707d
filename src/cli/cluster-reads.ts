// What `loopguard doctor` reads from the Kubernetes API: only list calls (the read-only role also grants get and watch), never a watch that outlives the scan and
// never a write (config/doctor/cluster_role.yaml grants them). The targets (Services, Ingresses) must
// be readable or there is nothing to scan (exit 2); the rest refines the report and, when forbidden or absent, becomes
// a note saying what the report then lacks: the kube-proxy DaemonSet and ConfigMap (the cluster profile, as the
// operator detects it), TkeServiceConfigs (L7 plans), LoopbackRecords (what loopguard changed), LoopbackPolicies and
// ClusterLoopbackPolicies (which policy covers a target and which spec it is assessed with) and, when there are
// cluster policies, the Namespaces' labels (which namespaces they cover).
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  type KubeConfig,
  type V1ConfigMap,
  type V1DaemonSet,
  type V1Ingress,
  type V1Namespace,
  type V1Service,
} from '@kubernetes/client-node';
import { TKE_SERVICE_CONFIG } from '../api/annotations.js';
import { CLUSTER_PLURAL, type ClusterLoopbackPolicy } from '../api/clusterloopbackpolicy.js';
import { GROUP, PLURAL, VERSION, type LoopbackPolicy } from '../api/loopbackpolicy.js';
import { RECORD_PLURAL, type LoopbackRecord } from '../api/loopbackrecord.js';
import { ENVOY_GATEWAY_NAMESPACE } from '../model/gateway-service.js';
import type { NamespaceFacts } from '../model/namespace-coverage.js';
import type { EnvoyProxyObject, GatewayClassObject, GatewayObject } from '../model/target-facts.js';
import { kubeErrorMessage, kubeStatus } from '../runtime/kube-errors.js';
import { CliError } from './errors.js';

export interface ScanScope {
  /** undefined: every namespace (-A). */
  namespace?: string;
  /** A label selector (-l), as kubectl takes it. */
  selector?: string;
  /** Envoy Gateway's namespace, where the Services of Gateways are (docs/gateways.md §2). */
  envoyGatewayNamespace?: string;
}

export interface TkeServiceConfigObject {
  metadata?: { name?: string; namespace?: string };
  spec?: unknown;
}

export interface ClusterSnapshot {
  services: V1Service[];
  ingresses: V1Ingress[];
  /** Gateways (none without the Gateway API), with what mapping them to their Services needs (docs/gateways.md). */
  gateways?: GatewaySnapshot;
  daemonSet?: V1DaemonSet;
  configMap?: V1ConfigMap;
  /** undefined: they could not be read (L7 plans are then left out, as the operator does before its cache syncs). */
  tkeServiceConfigs?: TkeServiceConfigObject[];
  records: LoopbackRecord[];
  policies: LoopbackPolicy[];
  /** None when the CRD is not installed (404) or they could not be read (a note says so). */
  clusterPolicies: ClusterLoopbackPolicy[];
  /**
   * The scanned namespaces with their labels, read only when there are cluster policies; undefined: they could not be
   * read, so which cluster policy covers a target is unresolved (a note says so).
   */
  namespaces?: NamespaceFacts[];
  notes: string[];
}

export interface GatewaySnapshot {
  items: GatewayObject[];
  /** The EnvoyProxies readable (every namespace's if allowed, else the scanned one's) and the GatewayClasses. */
  envoyProxies: EnvoyProxyObject[];
  classes: GatewayClassObject[];
  /** Envoy Gateway's namespace and its Services: where each Gateway's generated Service is. */
  controllerNamespace: string;
  generated: V1Service[];
}

const KUBE_PROXY = { namespace: 'kube-system', name: 'kube-proxy' };
const GATEWAYS = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gateways' } as const;
const ENVOY_PROXIES = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', plural: 'envoyproxies' } as const;
const GATEWAY_CLASSES = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gatewayclasses' } as const;

/** Gateways in scope, and, when there are any, the EnvoyProxies of their namespaces and the Services EG generated. */
async function readGateways(kc: KubeConfig, scope: ScanScope, notes: string[]): Promise<GatewaySnapshot | undefined> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const ns = scope.namespace;
  const selector = scope.selector ? { labelSelector: scope.selector } : {};
  const list = async <T>(what: { group: string; version: string; plural: string }, labels = {}): Promise<T[]> =>
    ((ns ? await custom.listNamespacedCustomObject({ ...what, namespace: ns, ...labels }) : await custom.listClusterCustomObject({ ...what, ...labels })) as { items?: T[] }).items ?? [];
  // No Gateway API (404): no Gateway exists, which is a known answer.
  const items = await optional<GatewayObject[]>('Gateways', 'Gateways are left out', () => list<GatewayObject>(GATEWAYS, selector), notes, []);
  if (!items || items.length === 0) return undefined;
  const controllerNamespace = scope.envoyGatewayNamespace ?? ENVOY_GATEWAY_NAMESPACE;
  // A class's EnvoyProxy is usually in Envoy Gateway's namespace: every namespace's are read where that is allowed.
  const everywhere = async () => ((await custom.listClusterCustomObject(ENVOY_PROXIES)) as { items?: EnvoyProxyObject[] }).items ?? [];
  const envoyProxies =
    (await optional<EnvoyProxyObject[]>('EnvoyProxies', 'Gateways whose EnvoyProxy could not be read get no plan', () => everywhere().catch((err) => (ns ? list<EnvoyProxyObject>(ENVOY_PROXIES) : Promise.reject(err))), notes, [])) ?? [];
  const classes = (await optional<GatewayClassObject[]>('GatewayClasses', "Gateways are shown without their class's EnvoyProxy", async () => ((await custom.listClusterCustomObject(GATEWAY_CLASSES)) as { items?: GatewayClassObject[] }).items ?? [], notes, [])) ?? [];
  const generated =
    (await optional(
      `Services in ${controllerNamespace}`,
      `Gateways whose Service Envoy Gateway keeps there are shown as without one (pass --envoy-gateway-namespace if Envoy Gateway runs elsewhere)`,
      async () => (await core.listNamespacedService({ namespace: controllerNamespace })).items,
      notes,
      [],
    )) ?? [];
  return { items, envoyProxies, classes, controllerNamespace, generated };
}

/** Why the API server could not be used at all, as one line with the fix. */
function unreachable(what: string, server: string, err: unknown): CliError {
  const status = kubeStatus(err);
  const said = kubeErrorMessage(err);
  if (status === 401) {
    return new CliError(`cannot ${what}: the Kubernetes API server at ${server} does not accept the kubeconfig's credentials (${said}). Fix: renew the token or pick another --context`);
  }
  if (status === 403) {
    return new CliError(`cannot ${what}: ${said}. Fix: grant get and list on Services and Ingresses (config/doctor/cluster_role.yaml) or scan a namespace you can read with -n`);
  }
  if (status !== undefined) return new CliError(`cannot ${what}: ${said}`);
  const tls = tlsFailure(err);
  if (tls) {
    return new CliError(
      `cannot ${what}: the TLS certificate of ${server} is not trusted: ${tls}. Fix: check the kubeconfig's certificate-authority (or certificate-authority-data) for this cluster, and that the server address is one the certificate names`,
    );
  }
  return new CliError(`cannot ${what}: the Kubernetes API server at ${server} does not answer (${said}). Fix: check the kubeconfig's current context (kubectl config current-context)`);
}

/**
 * The certificate problem behind a failed request, if that is what it is: fetch (undici) says only "fetch failed"
 * and keeps the TLS error as its `cause` (Node's codes: DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED,
 * ERR_TLS_CERT_ALTNAME_INVALID, UNABLE_TO_VERIFY_LEAF_SIGNATURE, …). Issue 22 #10: doctor said "does not answer".
 */
export function tlsFailure(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message : '';
    if ((typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS_/.test(code)) || /x509|certificate/i.test(text)) {
      return `${text.split('\n')[0] ?? ''}${typeof code === 'string' && !text.includes(code) ? ` (${code})` : ''}`;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

const ATTEMPTS = 3;

/** An apiserver that is starting up or shedding load (429, 5xx) answers a moment later: a scan retries a little. */
async function retried<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      const status = kubeStatus(err);
      const transient = status === 429 || (status !== undefined && status >= 500);
      if (!transient || attempt >= ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 300 * 2 ** attempt));
    }
  }
}

/** Reads that may be refused or absent: the note says what the report then lacks. */
export async function optional<T>(what: string, lacks: string, read: () => Promise<T>, notes: string[], absent?: T): Promise<T | undefined> {
  try {
    return await retried(read);
  } catch (err) {
    const status = kubeStatus(err);
    if (status === 404 && absent !== undefined) return absent;
    notes.push(`could not read ${what} (${kubeErrorMessage(err)}): ${lacks}`);
    return undefined;
  }
}

export async function readCluster(kc: KubeConfig, server: string, scope: ScanScope): Promise<ClusterSnapshot> {
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ns = scope.namespace;
  const where = ns ? `namespace ${ns}` : 'all namespaces';
  const selector = scope.selector ? { labelSelector: scope.selector } : {};
  const notes: string[] = [];

  let services: V1Service[];
  let ingresses: V1Ingress[];
  try {
    services = (await retried(() => (ns ? core.listNamespacedService({ namespace: ns, ...selector }) : core.listServiceForAllNamespaces(selector)))).items;
  } catch (err) {
    throw unreachable(`list Services in ${where}`, server, err);
  }
  try {
    ingresses = (await retried(() => (ns ? net.listNamespacedIngress({ namespace: ns, ...selector }) : net.listIngressForAllNamespaces(selector)))).items;
  } catch (err) {
    throw unreachable(`list Ingresses in ${where}`, server, err);
  }

  const profileLacks = 'the kube-proxy mode and version are unknown; pass --kube-proxy-mode and --kube-proxy-version';
  const daemonSet = await optional(
    `DaemonSet ${KUBE_PROXY.namespace}/${KUBE_PROXY.name}`,
    profileLacks,
    async () => (await apps.listNamespacedDaemonSet({ namespace: KUBE_PROXY.namespace, fieldSelector: `metadata.name=${KUBE_PROXY.name}` })).items[0],
    notes,
  );
  const configMap = await optional(
    `ConfigMap ${KUBE_PROXY.namespace}/${KUBE_PROXY.name}`,
    profileLacks,
    async () => (await core.listNamespacedConfigMap({ namespace: KUBE_PROXY.namespace, fieldSelector: `metadata.name=${KUBE_PROXY.name}` })).items[0],
    notes,
  );
  // No TkeServiceConfig CRD (404): no config exists, which is a known answer.
  const tkeServiceConfigs = await optional<TkeServiceConfigObject[]>(
    'TkeServiceConfigs',
    "Ingress plans are left out (they depend on the Ingress's TkeServiceConfig)",
    async () => {
      const list = ns
        ? await custom.listNamespacedCustomObject({ ...TKE_SERVICE_CONFIG, namespace: ns })
        : await custom.listClusterCustomObject(TKE_SERVICE_CONFIG);
      return ((list as { items?: TkeServiceConfigObject[] }).items ?? []);
    },
    notes,
    [],
  );
  const records =
    (await optional(
      'LoopbackRecords',
      'plans assume loopguard changed nothing so far',
      async () => ((await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: RECORD_PLURAL })) as { items?: LoopbackRecord[] }).items ?? [],
      notes,
      [],
    )) ?? [];
  const policies =
    (await optional(
      'LoopbackPolicies',
      "targets are assessed with the default policy settings, not their policy's",
      async () => {
        const list = ns
          ? await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace: ns })
          : await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL });
        return (list as { items?: LoopbackPolicy[] }).items ?? [];
      },
      notes,
      [],
    )) ?? [];
  // No ClusterLoopbackPolicy CRD (404): no cluster policy exists, which is a known answer.
  const clusterPolicies =
    (await optional(
      'ClusterLoopbackPolicies',
      'targets a cluster policy covers are shown with their LoopbackPolicy or as covered by none',
      async () => ((await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: CLUSTER_PLURAL })) as { items?: ClusterLoopbackPolicy[] }).items ?? [],
      notes,
      [],
    )) ?? [];
  const namespaces =
    clusterPolicies.length === 0
      ? []
      : await optional(
          ns ? `Namespace ${ns}` : 'Namespaces',
          'which ClusterLoopbackPolicy covers a target is unresolved: targets show their LoopbackPolicy only, and none is reported uncovered',
          async () => (ns ? [namespaceFacts(await core.readNamespace({ name: ns }))] : (await core.listNamespace()).items.map(namespaceFacts)),
          notes,
          // -n on a namespace that does not exist: it has no targets either.
          [],
        );
  const gateways = await readGateways(kc, scope, notes);
  return {
    services,
    ingresses,
    ...(gateways ? { gateways } : {}),
    ...(daemonSet ? { daemonSet } : {}),
    ...(configMap ? { configMap } : {}),
    ...(tkeServiceConfigs ? { tkeServiceConfigs } : {}),
    records,
    policies,
    clusterPolicies,
    ...(namespaces ? { namespaces } : {}),
    notes,
  };
}

/** A Namespace as cluster-policy coverage sees it (the operator's cache makes the same). */
function namespaceFacts(n: V1Namespace): NamespaceFacts {
  return { name: n.metadata?.name ?? '', ...(n.metadata?.labels ? { labels: n.metadata.labels } : {}), ...(n.status?.phase === 'Terminating' ? { terminating: true } : {}) };
}
