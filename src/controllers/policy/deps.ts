// What the policy controller and the deletion it runs are given: the informer caches they read and the writers
// they report through. In a file of its own so that both import it without importing each other.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import type { LoopbackPolicy } from '../../api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../api/loopbackrecord.js';
import type { EventRecorder } from '../../kube/events.js';
import type { RecordStore } from '../../kube/record-store.js';
import type { PolicyStatusWriter } from '../../kube/status-writer.js';
import type { KubeWriter } from '../../kube/writer.js';
import type { ClusterProfile } from '../../model/cluster-profile.js';
import type { Executor } from '../../mitigation/executor.js';
import type { Metrics } from '../../runtime/metrics.js';
import type { RoundDeps } from './round.js';

/** What the policy controller reads: informer caches, never the API server directly. */
export interface PolicyCaches {
  /** LoopbackRecords of targets in the namespace. */
  records(namespace: string): readonly LoopbackRecord[];
  policy(namespace: string, name: string): LoopbackPolicy | undefined;
  policies(namespace: string): readonly LoopbackPolicy[];
  services(namespace: string): readonly V1Service[];
  ingresses(namespace: string): readonly V1Ingress[];
}

export interface PolicyControllerOptions extends RoundDeps {
  caches: PolicyCaches;
  statusWriter: PolicyStatusWriter;
  /** Enforce's Kubernetes writer (finalizers; the revert reads targets through it). */
  writer: KubeWriter;
  /** The originals registry, read from the API server by the revert. */
  records: RecordStore;
  events: EventRecorder;
  metrics: Metrics;
  profile: () => ClusterProfile;
  /** Without it, Enforce policies only diagnose. */
  executor?: Executor;
}
