// What the policy controller, its rounds and the deletion are given (the informer caches they read, the observer,
// the writers they report through) and what a round is asked. In a file of its own so that they import it without
// importing each other.
import type { EnvoyProxyLookup, GatewayObject } from '../../model/target-facts.js';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import type { LoopbackPolicy } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import type { ClusterLoopbackPolicy } from '../../api/clusterloopbackpolicy.js';
import type { NamespaceFacts } from '../../model/namespace-coverage.js';
import type { ClbObserver } from '../../cloud/clb-observer.js';
import type { DriftScheduler } from '../drift-signal.js';
import type { EventRecorder } from '../../kube/events.js';
import type { PolicyStatusWriter } from '../../kube/status-writer.js';
import type { KubeWriter } from '../../kube/writer.js';
import type { NamespaceReports } from './namespace-reports.js';
import type { DnsRules } from './dns-rules.js';
import type { ClusterProfile } from '../../model/cluster-profile.js';
import type { TargetFacts, TargetRef } from '../../model/facts.js';
import type { RecordRegistry } from '../../model/record-registry.js';
import type { LearnedCapabilities } from '../../mitigation/capabilities.js';
import type { Executor } from '../../mitigation/executor.js';
import type { ConfigLookup, OrphanSnapshot, Snapshot } from '../../plan/snapshot.js';
import type { Logger } from '../../runtime/logger.js';
import type { Metrics } from '../../runtime/metrics.js';
import type { ProbeControl } from '../../probe/probe-control.js';

/** What the policy controller reads: informer caches, never the API server directly. */
export interface PolicyCaches extends EnvoyProxyLookup {
  /** LoopbackRecords of targets in the namespace; every record without one. */
  records(namespace?: string): readonly LoopbackRecord[];
  /** The target's LoopbackRecord (who holds it; the executor re-reads it before every write). */
  record(target: TargetRef): LoopbackRecord | undefined;
  policy(namespace: string, name: string): LoopbackPolicy | undefined;
  /** The namespace's policies; every namespace's without one. */
  policies(namespace?: string): readonly LoopbackPolicy[];
  clusterPolicy(name: string): ClusterLoopbackPolicy | undefined;
  clusterPolicies(): readonly ClusterLoopbackPolicy[];
  /** A namespace's name and labels; undefined when it does not exist (or is not cached yet). */
  namespace(name: string): NamespaceFacts | undefined;
  namespaces(): readonly NamespaceFacts[];
  /** loopguard's own namespace, which `systemNamespaces: Exclude` leaves out. */
  ownNamespace: string;
  /** The namespace's Services; every namespace's without one (for the targets sharing a CLB). */
  services(namespace?: string): readonly V1Service[];
  ingresses(namespace?: string): readonly V1Ingress[];
  /** The namespace's Gateways, every namespace's without one (none where the Gateway API is not served). */
  gateways(namespace?: string): readonly GatewayObject[];
  /** Envoy Gateway's namespace, where the Services of every namespace's Gateways are (absent: EG's default). */
  envoyGatewayNamespace?: string;
}

export interface PolicyControllerOptions extends RoundDeps {
  caches: PolicyCaches;
  statusWriter: Pick<PolicyStatusWriter, 'apply'>;
  /** The OpenReports Report per governed namespace (docs/cluster-policy.md §8); absent: none written. */
  reports?: Pick<NamespaceReports, 'names' | 'changed'>;
  /** The CoreDNS rules of `l7.inClusterDNS: Managed` (docs/dns.md); absent: cluster policies asking for it get no rules. */
  dns?: Pick<DnsRules, 'changed' | 'condition'>;
  /** Enforce's Kubernetes writer (finalizers). */
  writer: Pick<KubeWriter, 'setFinalizers'>;
  /** The ownership registry (LoopbackRecords), read from the API server by the revert. */
  records: Pick<RecordRegistry, 'list' | 'remove'>;
  events: Pick<EventRecorder, 'record' | 'recordStanding'>;
  metrics: Pick<Metrics, 'reportTargets' | 'forgetTargets'> & { targetsPlanned?: Pick<Metrics['targetsPlanned'], 'inc'> };
  profile: () => ClusterProfile;
  /** The loopback probe's plan and evidence (docs/probe.md §11); absent: nothing measured is shown. */
  probe?: Pick<ProbeControl, 'changed' | 'forget' | 'annotate'>;
}

export interface RoundDeps {
  observer: Pick<ClbObserver, 'observe' | 'reread' | 'observedAt' | 'cached' | 'invalidate' | 'seeded'>;
  capabilities: Pick<LearnedCapabilities, 'snapshot' | 'forget'>;
  /** The cached TkeServiceConfig of that name, if any (the informer's get: rounds look up one per Ingress). */
  tkeServiceConfig: ConfigLookup;
  /** Whether the TkeServiceConfig cache has synced: the snapshot's `configsKnown` (what it means there). */
  tkeServiceConfigsSynced(): boolean;
  /** The targets' records; where a Gateway's record may have written a key: the EnvoyProxies, the Gateways and the records that hold them. */
  caches: Pick<PolicyCaches, 'record' | 'records' | 'gateways' | 'envoyProxy'>;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The drift checks' schedule (drift-checks.ts): a cached read older than its full cycle is read again. */
  driftScheduler: Pick<DriftScheduler, 'fullIntervalMs' | 'intervalMs'>;
  /** How long TKE gets to apply a declared TkeServiceConfig. */
  tkeGraceMs: number;
  /** Without it, Enforce policies only diagnose. */
  executor?: Executor;
  /** Aborts when shutdown begins: no further chunk or release is started (the chunks under way finish). */
  stopping?: AbortSignal;
}

/** What a round is asked: the snapshot's policy, profile and sharing (src/plan/snapshot.ts), the targets and orphans. */
export interface RoundInput extends Pick<Snapshot, 'spec' | 'profile' | 'owner' | 'shared' | 'ignoreSkipAnnotation'> {
  targets: readonly TargetFacts[];
  /** Targets whose record belongs to this policy but that it does not manage now, with their records. */
  orphans: readonly Orphan[];
  /** Whether the round carries out the target's plan: there is an executor and its mode is Enforce (a cluster policy's namespaces may differ; a release follows its own). */
  enforcing: (target: TargetRef) => boolean;
}

/** A target the policy changed but no longer manages, and its registry entry (`stale`, `envoyProxy`: OrphanSnapshot's). */
export type Orphan = Pick<OrphanSnapshot, 'facts' | 'stale' | 'envoyProxy'> & { entry: LoopbackRecord };
