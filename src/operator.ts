// Assembles the operator: informers on every replica (so a standby is ready to lead at once), the policy
// queue and controller only on the leader, probes and metrics everywhere.
import { setMaxListeners } from 'node:events';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
  type V1DaemonSet,
  type V1Ingress,
  type V1Namespace,
  type V1Service,
} from '@kubernetes/client-node';
import { CLUSTER_KIND, CLUSTER_PLURAL, type ClusterLoopbackPolicy } from './api/clusterloopbackpolicy.js';
import { PolicyEventRouter } from './controllers/policy/routing.js';
import { clusterOwnerKey, type OwnerKey } from './model/record-registry.js';
import { TKE_SERVICE_CONFIG } from './api/annotations.js';
import { governingConfigName } from './plan/l7.js';
import { GROUP, PLURAL, VERSION, type LoopbackPolicy } from './api/loopbackpolicy.js';
import type { ClbClient } from './cloud/index.js';
import { ClbObserver } from './cloud/clb-observer.js';
import { ObservationStore } from './kube/observation-store.js';
import { HealthSignal } from './cloud/health-signal.js';
import { DriftScheduler } from './controllers/drift-signal.js';
import { DRIFT_CHECKS_KEY, DriftChecks } from './controllers/drift-checks.js';
import { targetKey } from './model/facts.js';
import { boundLoadBalancerId, classEnvoyProxy, gatewayFacts, ownEnvoyProxyName, serviceFacts, type GatewayClassObject, type GatewayObject } from './model/target-facts.js';
import { namedClbs, ObservationUpkeep } from './controllers/observation-upkeep.js';
import { informerCaches, namespaceFacts } from './controllers/policy/caches.js';
import { PolicyController } from './controllers/policy/policy-controller.js';
import { managedDnsNames, namespaceResults, probeSelections, reportedNamespaces } from './controllers/policy/targets.js';
import { EventRecorder } from './kube/events.js';
import { AdmissionParamsWriter } from './admission/params-writer.js';
import { buildAdmissionParams } from './admission/params.js';
import { LearnedCapabilities } from './mitigation/capabilities.js';
import { Executor } from './mitigation/executor.js';
import { clusterEffects } from './mitigation/effects.js';
import { WaitClock } from './mitigation/tke-wait.js';
import { KubeWriter } from './kube/writer.js';
import { RecordStore } from './kube/record-store.js';
import { RECORD_PLURAL, type LoopbackRecord } from './api/loopbackrecord.js';
import { PolicyStatusWriter } from './kube/status-writer.js';
import { ReportWriter } from './kube/report-writer.js';
import { isReportKey, NamespaceReports, PRUNE_KEY } from './controllers/policy/namespace-reports.js';
import { DNS_RULES_KEY, DnsRules } from './controllers/policy/dns-rules.js';
import { clusterUnits, type ClusterUnits } from './runtime/cluster-units.js';
import { corednsRulesStore } from './kube/coredns-rules-store.js';
import { dnsLookup } from './runtime/dns-resolver.js';
import { parseDnsServers } from './runtime/config.js';
import { profileFrom, type ClusterProfile } from './model/cluster-profile.js';
import type { OperatorConfig } from './runtime/config.js';
import { ResilientInformer, type InformerEvent, type ListPage, type ResilientInformerOptions } from './runtime/informer.js';
import { trimEnvoyProxy, trimGateway, trimGatewayClass, trimIngress, trimService } from './runtime/target-trim.js';
import { EnvoyGatewayLabel, generatedFor } from './model/gateway-service.js';
import { LeaderElector } from './runtime/leader-election.js';
import type { Logger } from './runtime/logger.js';
import type { Metrics } from './runtime/metrics.js';
import { kubeReviewer, MetricsAuthorizer } from './runtime/metrics-auth.js';
import { MetricsServer } from './runtime/metrics-server.js';
import { ProbeServer, type HealthCheck } from './runtime/server.js';
import { ShutdownAbortError, WorkQueue, type ReconcileOutcome } from './runtime/work-queue.js';
import { PROBE_REPORT_PLURAL, type ProbeReport } from './api/probe.js';
import { EvidenceStore } from './probe/evidence-store.js';
import { ProbeMetrics } from './probe/metrics.js';
import { PlanStore } from './probe/plan-store.js';
import { PROBE_PLAN_KEY, ProbeControl } from './probe/probe-control.js';

/** How long shutdown waits for queued Events (docs/operating.md "Stopping": aborted work gets up to 2 s more for its log lines and Events). */
const EVENT_FLUSH_MS = 2_000;

/**
 * Caches that never block readiness or the start: the TkeServiceConfig CRD may be absent (no TKE ingress controller),
 * and the probe's reports only add evidence (an operator upgraded before its RBAC still runs).
 */
const OPTIONAL_INFORMERS: ReadonlySet<string> = new Set(['tkeserviceconfigs', PROBE_REPORT_PLURAL, 'gateways', 'envoyproxies', 'gatewayclasses']);

/** Gateway API's Gateways and Envoy Gateway's EnvoyProxies (optional: only where their CRDs are installed; docs/gateways.md). */
const GATEWAYS = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gateways' } as const;
const ENVOY_PROXIES = { group: 'gateway.envoyproxy.io', version: 'v1alpha1', plural: 'envoyproxies' } as const;
const GATEWAY_CLASSES = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gatewayclasses' } as const;

const KUBE_PROXY = { namespace: 'kube-system', fieldSelector: 'metadata.name=kube-proxy' };

/** loopguard's own CRDs, by informer: a missing one makes the replica unready, naming the fix (issue 22 #10). */
const OWN_CRDS: Record<string, string> = { loopbackpolicies: `${PLURAL}.${GROUP}`, loopbackrecords: `${RECORD_PLURAL}.${GROUP}`, clusterloopbackpolicies: `${CLUSTER_PLURAL}.${GROUP}` };

function notServedReason(i: ResilientInformer<KubernetesObject>): string | undefined {
  if (i.notServed === undefined) return undefined;
  const crd = OWN_CRDS[i.name];
  return crd ? `${i.notServed}: the CRD ${crd} is missing. Fix: apply crds/ (kubectl apply -k config/crd, or the chart's crds/)` : i.notServed;
}

export interface OperatorDeps {
  kc: KubeConfig;
  config: OperatorConfig;
  clb: ClbClient;
  logger: Logger;
  metrics: Metrics;
  /** Whether Enforce policies are carried out; without it they only diagnose. */
  enforce?: boolean;
  /** Called when leadership is lost: the process must exit (client-go/controller-runtime do the same). */
  onLostLeadership: () => void;
  /** More readiness checks (e.g. the CLB API is usable), next to the informers' and the elector's. */
  readiness?: HealthCheck[];
}

export class Operator {
  private readonly informers: Array<ResilientInformer<KubernetesObject>> = [];
  private readonly services: ResilientInformer<V1Service>;
  private readonly ingresses: ResilientInformer<V1Ingress>;
  // LoopbackPolicy's metadata allows string timestamps (watch events carry strings, client-node issue #655),
  // which client-node's KubernetesObject does not: the cache holds KubernetesObject, read back as policies.
  private readonly policies: ResilientInformer<KubernetesObject>;
  private readonly clusterPolicies: ResilientInformer<KubernetesObject>;
  /** Namespaces' labels: which a cluster policy covers, in which mode. */
  private readonly namespaces: ResilientInformer<V1Namespace>;
  private readonly daemonSets: ResilientInformer<V1DaemonSet>;
  private readonly configMaps: ResilientInformer<V1ConfigMap>;
  private readonly tkeServiceConfigs: ResilientInformer<KubernetesObject>;
  private readonly gateways: ResilientInformer<KubernetesObject>;
  private readonly envoyProxies: ResilientInformer<KubernetesObject>;
  private readonly gatewayClasses: ResilientInformer<KubernetesObject>;
  /** LoopbackRecords: loopguard's own bookkeeping (the registry's read side). */
  private readonly records: ResilientInformer<KubernetesObject>;
  private readonly queue: WorkQueue;
  /** The queue's whole-cluster keys (drift checks, probe plan, CoreDNS rules), each queued when leadership begins. */
  private readonly units: ClusterUnits;
  private readonly server: ProbeServer;
  /** The authenticated HTTPS /metrics (--metrics-secure); without it the probe server serves /metrics. */
  private readonly metricsServer: MetricsServer | undefined;
  private readonly elector: LeaderElector | undefined;
  /** The admission policy's parameters (config/components/admission-warnings): kept true by the leader. */
  private readonly admission: AdmissionParamsWriter;
  private readonly capabilities = new LearnedCapabilities();
  private cachedProfile: ClusterProfile | undefined;
  /** Informer events → work-queue keys (routing.ts). */
  private readonly router: PolicyEventRouter;
  /** Aborts when shutdown begins: the executor starts no new step after it (work-queue.ts drains the rest). */
  private readonly stopping = new AbortController();
  /** Written at a steady pace (events.ts); what is still queued gets a moment at shutdown. */
  private readonly events: EventRecorder;
  private readonly upkeep: ObservationUpkeep; // the observation checkpoint; forgetting deleted CLBs

  constructor(private readonly d: OperatorDeps) {
    const { kc, config, logger, metrics } = d;
    // Every write waiting for its turn listens to it (up to the executor's concurrency): not a leak.
    setMaxListeners(0, this.stopping.signal);
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const net = kc.makeApiClient(NetworkingV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const informerLogger = { info: (m: string, x?: Record<string, unknown>) => logger.info(m, x), warn: (m: string, x?: Record<string, unknown>) => logger.warn(m, x) };
    const make = <T extends KubernetesObject>(
      name: string,
      path: string,
      list: (page: ListPage) => Promise<KubernetesListObject<T>>,
      onEvent: (obj: T, type: InformerEvent) => void,
      options: Pick<ResilientInformerOptions<T>, 'fieldSelector' | 'transform' | 'keepOwnManagedFields'> = {},
    ): ResilientInformer<T> => {
      const inf = new ResilientInformer<T>(kc, { name, path, list, onEvent: (t, obj) => onEvent(obj, t), logger: informerLogger, ...options });
      this.informers.push(inf as unknown as ResilientInformer<KubernetesObject>);
      return inf;
    };
    // A cluster-wide informer on a custom resource, named after its plural (loopguard's own, TKE's, Gateway API's).
    const customInformer = (r: { group: string; version: string; plural: string }, onEvent: (obj: KubernetesObject, type: InformerEvent) => void, options: Pick<ResilientInformerOptions<KubernetesObject>, 'transform'> = {}) =>
      make<KubernetesObject>(r.plural, `/apis/${r.group}/${r.version}/${r.plural}`, async (page) => (await custom.listClusterCustomObject({ ...r, ...page })) as KubernetesListObject<KubernetesObject>, onEvent, options);
    // A Service or an Ingress: itself, with the CLB it is bound to and an Ingress's TkeServiceConfig (routing.ts).
    const byTarget = (kind: 'Service' | 'Ingress') => (obj: KubernetesObject, type: InformerEvent) => {
      const namespace = obj.metadata?.namespace ?? '';
      const name = obj.metadata?.name ?? '';
      const key = targetKey({ kind, namespace, name });
      const clb = boundLoadBalancerId(obj.metadata?.annotations, kind);
      this.router.target(namespace, key, clb, type === 'delete', kind === 'Ingress' ? governingConfigName(name, obj.metadata?.annotations) : undefined);
      // A Service Envoy Gateway generated is its Gateway's (or its class's Gateways'): they are the targets it concerns.
      if (kind === 'Service' && generatedFor(obj.metadata?.labels)) for (const g of this.gatewaysOf(obj.metadata?.labels ?? {})) this.onGateway(g, 'update');
    };
    // Every Service and Ingress of the cluster is cached: only what target-facts.ts reads is kept (target-trim.ts),
    // and of managedFields loopguard's own entry (lost-record evidence).
    this.services = make<V1Service>('services', '/api/v1/services', (page) => core.listServiceForAllNamespaces(page), byTarget('Service'), { transform: trimService, keepOwnManagedFields: true });
    this.gateways = customInformer(
      GATEWAYS,
      (g, type) => {
        this.onGateway(g, type);
        // Its class's EnvoyProxy reaches the Gateways of the class too: whether loopguard may change it depends on
        // every one of them (plan/shared-config.ts).
        const cls = (g as GatewayObject).spec?.gatewayClassName;
        for (const o of this.gateways.list()) if (o !== g && (o as GatewayObject).spec?.gatewayClassName === cls) this.onGateway(o, 'update');
      },
      { transform: trimGateway },
    );
    // An EnvoyProxy's change concerns the Gateways that name it as their own and those of the classes that name it.
    this.envoyProxies = customInformer(
      ENVOY_PROXIES,
      (ep) => {
        const ns = ep.metadata?.namespace;
        const name = ep.metadata?.name;
        const names = (c: KubernetesObject) => {
          const r = classEnvoyProxy(c as GatewayClassObject);
          return r !== undefined && r.namespace === ns && r.name === name;
        };
        const classes = new Set(this.gatewayClasses.list().filter(names).map((c) => c.metadata?.name));
        for (const g of this.gateways.list()) {
          const gw = g as GatewayObject;
          if ((gw.metadata?.namespace === ns && ownEnvoyProxyName(gw) === name) || classes.has(gw.spec?.gatewayClassName)) this.onGateway(g, 'update');
        }
      },
      { transform: trimEnvoyProxy },
    );
    // A GatewayClass's EnvoyProxy is in force for every Gateway of the class that has none of its own.
    this.gatewayClasses = customInformer(
      GATEWAY_CLASSES,
      (c) => {
        for (const g of this.gateways.list()) if ((g as GatewayObject).spec?.gatewayClassName === c.metadata?.name) this.onGateway(g, 'update');
      },
      { transform: trimGatewayClass },
    );
    this.ingresses = make<V1Ingress>('ingresses', '/apis/networking.k8s.io/v1/ingresses', (page) => net.listIngressForAllNamespaces(page), byTarget('Ingress'), { transform: trimIngress, keepOwnManagedFields: true });
    this.policies = customInformer({ group: GROUP, version: VERSION, plural: PLURAL }, (p) => this.router.policy(p));
    this.clusterPolicies = customInformer({ group: GROUP, version: VERSION, plural: CLUSTER_PLURAL }, (p) => this.router.clusterPolicy(p));
    // A label change moves a namespace into, out of, or between the modes of a cluster policy (docs/cluster-policy.md §4).
    this.namespaces = make<V1Namespace>('namespaces', '/api/v1/namespaces', (page) => core.listNamespace(page), (ns, type) => this.router.namespace(ns, type === 'delete'));
    // kube-proxy's DaemonSet and ConfigMap: what the cluster profile is read from (src/model/cluster-profile.ts).
    const { namespace: kpNamespace, fieldSelector } = KUBE_PROXY;
    const onKubeProxy = () => this.onKubeProxyEvent();
    this.daemonSets = make<V1DaemonSet>('kube-proxy-daemonset', `/apis/apps/v1/namespaces/${kpNamespace}/daemonsets`, () => apps.listNamespacedDaemonSet({ namespace: kpNamespace, fieldSelector }), onKubeProxy, { fieldSelector });
    this.configMaps = make<V1ConfigMap>('kube-proxy-configmap', `/api/v1/namespaces/${kpNamespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace: kpNamespace, fieldSelector }), onKubeProxy, { fieldSelector });
    this.tkeServiceConfigs = customInformer(TKE_SERVICE_CONFIG, (c) => this.router.config(c.metadata?.namespace ?? '', c.metadata?.name ?? ''));

    // Written by loopguard itself, but read by every decision on its target's CLB (who holds it, whose prevent-loopback
    // loopguard set: shared-clb.ts), so each change concerns that target and its CLB. One way out of a blocked deletion
    // is an administrator deleting a corrupt record: a deleted record of a deleting policy wakes it at once instead of
    // at its next backoff retry (loopguard's own deletes during the revert do too: each is progress).
    this.records = customInformer(
      { group: GROUP, version: VERSION, plural: RECORD_PLURAL },
      (r, type) => {
        const owner = (r as unknown as LoopbackRecord).spec?.policy;
        if (type === 'delete' && owner) {
          const cluster = owner.kind === CLUSTER_KIND;
          const policy = cluster ? this.clusterPolicies.get(owner.name) : this.policies.get(owner.name, owner.namespace);
          if (policy?.metadata?.deletionTimestamp) this.queue.add(cluster ? clusterOwnerKey(owner.name) : `${owner.namespace}/${owner.name}`);
        }
        // A released record may be what a policy that won the target by precedence waits for (PolicyHandover).
        const target = (r as unknown as LoopbackRecord).spec?.target;
        if (target) {
          if (target.kind === 'Gateway') {
            const g = this.gateways.get(target.name, target.namespace);
            this.router.record(target, g ? this.gatewayFactsOf(g).loadBalancerId : undefined);
          } else {
            const live = (target.kind === 'Service' ? this.services : this.ingresses).get(target.name, target.namespace);
            this.router.record(target, boundLoadBalancerId(live?.metadata?.annotations, target.kind));
          }
        }
      },
    );

    this.admission = new AdmissionParamsWriter(kc, {
      namespace: config.namespace,
      build: () =>
        buildAdmissionParams({
          profile: this.profile(),
          policies: this.policies.list() as readonly LoopbackPolicy[],
          clusterPolicies: this.clusterPolicies.list() as unknown as readonly ClusterLoopbackPolicy[],
          namespaces: this.namespaces.list().map(namespaceFacts),
          ownNamespace: config.namespace,
          enforcing: d.enforce === true,
        }),
      logger,
      mayWrite: () => this.elector?.mayWrite() ?? true,
      resyncMs: config.driftCheckIntervalMs,
    });
    // Drift checks in two tiers (src/controllers/drift-signal.ts): the signal's baselines include the full reads' health.
    const healthSignal = new HealthSignal(d.clb);
    const fullReadsPerSecond = (config.cloudRateLimit * config.driftFullReadShare) / 100;
    const observer = new ClbObserver(healthSignal.recording(d.clb));
    const driftScheduler = new DriftScheduler(config.driftCheckIntervalMs, fullReadsPerSecond);
    // The checkpoint's store also holds the key that seals the namespaces' reports (src/kube/report-seal.ts).
    const observationStore = config.observationCheckpoint ? new ObservationStore(kc, config.namespace) : undefined;
    const checkpoint = observationStore ? { store: observationStore, region: config.region, mayWrite: () => this.elector?.mayWrite() ?? true } : undefined;
    this.upkeep = new ObservationUpkeep({ observer, signal: healthSignal, scheduler: driftScheduler, named: () => namedClbs(this.services.list(), this.ingresses.list()), logger, ...(checkpoint ? { checkpoint } : {}) });
    const events = (this.events = new EventRecorder(kc, 'loopguard', 10 * 60_000, (err, event) =>
      logger.warn('Could not write an Event', { ...event, error: err instanceof Error ? err.message : String(err) }),
    ));
    const writer = new KubeWriter(kc);
    const records = new RecordStore(kc);
    // One clock of TKE waits for the effects (when a wait began) and the executor (when it ended).
    const waits = new WaitClock();
    const executor = d.enforce
      ? new Executor({
          effects: clusterEffects({ writer, records, clb: d.clb, observer, capabilities: this.capabilities, stopping: this.stopping.signal, mayWrite: () => this.elector?.mayWrite() ?? true, tkeGraceMs: config.tkeGraceMs, waits }),
          waits,
          capabilities: this.capabilities,
          events,
          logger,
          metrics,
          stopping: this.stopping.signal,
          mayWrite: () => this.elector?.mayWrite() ?? true,
        })
      : undefined;
    // loopguard's own namespace (config.ts: the pod's, or --namespace), which a cluster policy leaves out by default.
    const ownNamespace = config.namespace;
    const caches = informerCaches(
      { policies: this.policies, clusterPolicies: this.clusterPolicies, services: this.services, ingresses: this.ingresses, records: this.records, namespaces: this.namespaces, gateways: this.gateways, envoyProxies: this.envoyProxies, gatewayClasses: this.gatewayClasses },
      ownNamespace,
      config.envoyGatewayNamespace,
    );
    // The loopback probe (docs/probe.md §11): the agents' reports, the plan written from the policies' selections.
    const evidence = new EvidenceStore({ onChange: (clbs) => clbs.forEach((id) => this.router.clb(id)), sink: new ProbeMetrics(metrics.registry) });
    make<KubernetesObject>(
      PROBE_REPORT_PLURAL,
      `/apis/${GROUP}/${VERSION}/namespaces/${ownNamespace}/${PROBE_REPORT_PLURAL}`,
      async (page) => (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ownNamespace, plural: PROBE_REPORT_PLURAL, ...page })) as KubernetesListObject<KubernetesObject>,
      (r, type) => evidence.report(r as unknown as ProbeReport, type === 'delete'),
    );
    const selections = () => probeSelections(caches);
    const probe = new ProbeControl({ store: new PlanStore(kc, ownNamespace), evidence, queue: { add: (key) => this.queue.add(key) }, selections, events, logger, windowSeconds: Math.round(config.probeWindowMs / 1000) });
    const outcomes = (owner: OwnerKey): ReturnType<PolicyController['outcomes']> => controller.outcomes(owner);
    const reports = new NamespaceReports(
      new ReportWriter(kc, { resyncMs: config.driftCheckIntervalMs, logger, ...(observationStore ? { key: () => observationStore.key() } : {}) }),
      (ns) => namespaceResults(caches, outcomes, ns),
      () => reportedNamespaces(caches, outcomes),
      { add: (key) => this.queue.add(key) },
      config.driftCheckIntervalMs,
      () => this.router.reportNames(),
    );
    // l7.inClusterDNS: Managed (docs/dns.md §4): one ConfigMap in kube-system, its own key on the queue.
    const servers = (text: string) => {
      const parsed = parseDnsServers(text);
      return 'servers' in parsed ? parsed.servers : [];
    };
    const dns: DnsRules = new DnsRules({
      store: corednsRulesStore(kc),
      lookup: dnsLookup,
      upstream: servers(config.dnsUpstream),
      coredns: servers(config.corednsServers),
      clusterDomain: config.clusterDomain,
      waitMs: config.dnsCheckWaitMs,
      recheckMs: config.driftCheckIntervalMs,
      queue: { add: (key) => this.queue.add(key) },
      names: () => managedDnsNames(caches, outcomes, executor !== undefined),
      events,
      logger,
    });
    const controller = new PolicyController({
      caches,
      records,
      tkeServiceConfig: (ns, name) => this.tkeServiceConfigs.get(name, ns) as (KubernetesObject & { spec?: unknown }) | undefined,
      tkeServiceConfigsSynced: () => this.tkeServiceConfigs.hasSynced,
      observer,
      capabilities: this.capabilities,
      statusWriter: new PolicyStatusWriter(kc),
      reports,
      dns,
      writer,
      events,
      metrics,
      logger,
      profile: () => this.profile(),
      driftScheduler,
      tkeGraceMs: config.tkeGraceMs,
      stopping: this.stopping.signal,
      probe,
      ...(executor ? { executor } : {}),
    });
    const drift = new DriftChecks({
      observer,
      scheduler: driftScheduler,
      health: healthSignal,
      checked: (tier, clbs) => metrics.driftChecks.inc({ tier }, clbs),
      clbs: () => controller.clbsInUse(),
      overdue: (ids) => ids.forEach((id) => this.router.clb(id)),
      logger,
      stopping: this.stopping.signal,
    });
    observer.onChange = (id) => this.router.clb(id);
    this.capabilities.onChange = () => this.router.all();
    this.units = clusterUnits(
      // The prune too: reports a previous leader left where no policy covers now (the last policy deleted meanwhile).
      { [DRIFT_CHECKS_KEY]: (_key, signal) => this.driftPass(drift, signal), [PROBE_PLAN_KEY]: () => probe.reconcile(), [DNS_RULES_KEY]: () => dns.reconcile(), [PRUNE_KEY]: (key) => reports.reconcile(key) },
      (key, signal) => (isReportKey(key) ? reports.reconcile(key) : controller.reconcile(key, signal)),
    );
    this.queue = new WorkQueue('loopbackpolicy', this.units.handle, {
      concurrency: config.concurrency,
      observer: {
        ...metrics.workQueueObserver(),
        failed: (_n, key, err, retryIn) =>
          logger.warn('Reconcile failed', { policy: key, error: err instanceof Error ? err.message : String(err), retryInMs: retryIn }),
      },
    });
    this.router = new PolicyEventRouter(this.queue, caches, controller, () => this.admission.changed());
    if (config.metricsSecure) {
      this.metricsServer = new MetricsServer({
        host: config.probeHost,
        port: config.metricsPort,
        metrics,
        authorizer: new MetricsAuthorizer(kubeReviewer(kc)),
        certDir: config.metricsCertDir,
        onDenied: (status, message) => logger.debug('Refused a /metrics request', { status, message }),
      });
    }
    this.server = new ProbeServer({
      host: config.probeHost,
      port: config.probePort,
      ...(config.metricsSecure ? {} : { metrics }),
      liveness: [{ name: 'ping', check: () => true }],
      // The TkeServiceConfig CRD may be absent (no TKE ingress controller): it never blocks readiness.
      readiness: [
        ...this.informers
          .filter((i) => !OPTIONAL_INFORMERS.has(i.name))
          .map((i) => ({ name: `informer-${i.name}`, check: () => i.hasSynced && i.notServed === undefined, reason: () => notServedReason(i) })),
        // A replica that cannot take part in the election (loopguard's namespace missing, no RBAC) cannot act; a
        // standby that simply sees another leader is ready.
        { name: 'leader-election', check: () => this.elector?.problem === undefined, reason: () => this.elector?.problem },
        ...(d.readiness ?? []),
      ],
    });
    if (config.leaderElect) {
      this.elector = new LeaderElector(kc, {
        namespace: config.namespace,
        name: config.leaseName,
        identity: config.identity,
        onStartedLeading: () => this.startLeading(),
        onStoppedLeading: () => {
          metrics.leader.set({ name: config.leaseName }, 0);
          d.onLostLeadership();
        },
        logger: { ...informerLogger, error: (m: string, x?: Record<string, unknown>) => logger.error(m, x) },
      });
    }
  }

  /** The port the probe server listens on (useful with port 0). */
  async start(): Promise<number> {
    const address = await this.server.start();
    this.d.logger.info('Probe server listening', { host: address.address, port: address.port });
    if (this.metricsServer) {
      const m = await this.metricsServer.start();
      this.d.logger.info('Metrics server listening (HTTPS, TokenReview + SubjectAccessReview)', { host: m.address, port: m.port, certificate: this.d.config.metricsCertDir || 'self-signed' });
    }
    await Promise.all(this.informers.filter((i) => !OPTIONAL_INFORMERS.has(i.name)).map((i) => i.start()));
    for (const i of this.informers) if (OPTIONAL_INFORMERS.has(i.name)) void i.start();
    this.d.logger.info('Caches synced');
    if (this.elector) this.elector.start();
    else this.startLeading();
    return address.port;
  }

  /**
   * Graceful: stop taking work (no new key, no new step), let in-flight reconciles and the CLB tasks they await
   * finish within --shutdown-grace, abort what is left and let it say where it stopped; only then release the
   * lease (a successor must not start on a CLB this replica may still be writing), and stop the watches.
   */
  async stop(): Promise<void> {
    const graceMs = this.d.config.shutdownGraceMs;
    this.d.logger.info('Draining', { policies: this.queue.inProgressKeys, graceMs });
    this.stopping.abort(new ShutdownAbortError('shutdown began: no new work is started'));
    this.admission.stop();
    const drained = await this.queue.shutdown(graceMs, {
      onGraceOver: (policies) => this.d.logger.warn('Shutdown grace period ended; aborting', { policies, graceMs }),
    });
    if (drained) this.d.logger.info('Drained');
    // The Events of the last rounds (their writes are paced) and the observation checkpoint; the Lease waits for them, briefly.
    const [flushed] = await Promise.all([this.events.flush(EVENT_FLUSH_MS), this.upkeep.stop(EVENT_FLUSH_MS)]);
    if (!flushed) this.d.logger.warn('Shutdown left Events unwritten', { pending: this.events.pending });
    await this.elector?.stop();
    await Promise.all(this.informers.map((i) => i.stop()));
    await this.server.stop();
    await this.metricsServer?.stop();
    await this.d.clb.close();
  }

  private startLeading(): void {
    this.d.metrics.leader.set({ name: this.d.config.leaseName }, 1);
    // The checkpoint first (restore never throws): the first rounds judge from it instead of reading every CLB.
    void this.upkeep.restore().then(() => {
      if (this.stopping.signal.aborted) return;
      this.upkeep.start();
      // Every policy queued with every target before the queue runs: queued after, the first round (already started
      // by an informer's add) took the change of its own policy, and `all` made a second full round right after it,
      // with every CLB cached, in one synchronous block: at 3,000 CLBs the process's memory peak
      // (docs/benchmarks.md, "One first round").
      this.router.all();
      this.queue.start();
      this.units.start(this.queue);
      this.admission.start();
    });
  }

  /** A pass of the drift checks; beside it, a learned refusal that expired is forgotten (every target is planned again: the retry). */
  private driftPass(drift: DriftChecks, signal: AbortSignal): Promise<ReconcileOutcome> {
    this.capabilities.snapshot();
    return drift.run(signal);
  }

  /** The cluster profile; detected again only after a kube-proxy DaemonSet/ConfigMap event (it parses YAML). */
  /** A Gateway's change concerns it and the CLB of the Service EG generated for it. */
  private onGateway(g: KubernetesObject, type: InformerEvent): void {
    const facts = this.gatewayFactsOf(g);
    const key = targetKey(facts);
    this.router.target(facts.namespace, key, facts.loadBalancerId, type === 'delete');
  }

  /** A cached Gateway with the Service EG generated for it (for routing: its CLB). */
  private gatewayFactsOf(g: KubernetesObject): ReturnType<typeof gatewayFacts> {
    const ns = g.metadata?.namespace ?? '';
    const eg = this.d.config.envoyGatewayNamespace;
    return gatewayFacts(g as GatewayObject, [...new Set([eg, ns])].flatMap((n) => this.services.list(n).map(serviceFacts)), eg);
  }

  /** The Gateways an EG-generated Service's labels name: its own Gateway, or every Gateway of its class. */
  private gatewaysOf(labels: Readonly<Record<string, string>>): KubernetesObject[] {
    const name = labels[EnvoyGatewayLabel.OwningGatewayName];
    const namespace = labels[EnvoyGatewayLabel.OwningGatewayNamespace];
    if (name && namespace) {
      const g = this.gateways.get(name, namespace);
      return g ? [g] : [];
    }
    const cls = labels[EnvoyGatewayLabel.OwningGatewayClass];
    return this.gateways.list().filter((g) => (g as GatewayObject).spec?.gatewayClassName === cls);
  }

  private profile(): ClusterProfile {
    if (this.cachedProfile) return this.cachedProfile;
    this.cachedProfile = profileFrom({ daemonSet: this.daemonSets.get('kube-proxy', KUBE_PROXY.namespace), configMap: this.configMaps.get('kube-proxy', KUBE_PROXY.namespace) }, this.d.config);
    return this.cachedProfile;
  }

  private onKubeProxyEvent(): void {
    this.cachedProfile = undefined;
    this.router.all();
    this.admission.changed();
  }
}
