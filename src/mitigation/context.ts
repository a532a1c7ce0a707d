// What a mitigation needs to act: clients, caches, and the shared account knowledge. One context per operator.
import type { KubeConfig, V1Ingress, V1Service, KubernetesObject } from '@kubernetes/client-node';
import type { LoopbackPolicy, ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import type { ClbClient, CloudErrorInfo } from '../cloud/index.js';
import type { ClbObserver } from '../controllers/clb-observer.js';
import type { EventRecorder } from '../kube/events.js';
import type { Assessment } from '../model/assessment.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import type { AccountCapabilities } from '../model/facts.js';
import type { TargetOutcome } from '../model/status.js';
import type { Logger } from '../runtime/logger.js';
import type { Metrics } from '../runtime/metrics.js';

export interface MitigationCaches {
  services(namespace: string): readonly V1Service[];
  ingresses(namespace: string): readonly V1Ingress[];
  tkeServiceConfigs(namespace: string): readonly KubernetesObject[];
}

export interface MitigationContext {
  kc: KubeConfig;
  clb: ClbClient;
  /** CLB facts cache: `rawListeners(id)` has full HealthCheck structs; `invalidate(id)` after a write. */
  observer: ClbObserver;
  caches: MitigationCaches;
  events: EventRecorder;
  logger: Logger;
  metrics: Metrics;
  /** Learned from CLB refusals (capability missing); read by the assessment. Mutate in place. */
  capabilities: AccountCapabilities;
  /** The cluster profile the assessment uses, so a layer can re-assess a target after acting. */
  profile?: () => ClusterProfile;
}

/**
 * One layer's Enforce effects. `apply` receives the policy's assessments of the targets it manages (already
 * filtered to this layer's kind) and returns outcomes for the targets it acted on or failed on; it must also
 * revert targets of this policy that are no longer managed (deselected, skipped). `revert` undoes everything
 * this policy changed (policy deleted with revertOnDelete).
 */
export interface ApplyScope {
  /** `targetKey`s of every target the policy manages now, of all kinds; others it changed are orphans. */
  managed: ReadonlySet<string>;
  /** Whether this call also releases orphans. The controller applies in chunks and releases orphans once. */
  releaseOrphans: boolean;
}

export interface LayerMitigator {
  /** Without `scope`, `assessments` is the whole managed set and orphans are released. */
  apply(
    policy: LoopbackPolicy,
    spec: ResolvedPolicySpec,
    assessments: readonly Assessment[],
    signal: AbortSignal,
    scope?: ApplyScope,
  ): Promise<TargetOutcome[]>;
  revert(policy: LoopbackPolicy, signal: AbortSignal): Promise<void>;
}

/** Cloud failures that retrying cannot fix: the policy goes Stalled with the error's cause and fix. */
const PERMANENT = new Set<string>([
  'PermissionDenied',
  'InvalidRequest',
  'HealthCheckSourceCapabilityMissing',
  'CredentialsRejected',
  'CredentialsUnavailable',
  'ClockSkew',
  'QuotaExceeded',
  'OperationDenied',
  'CloudError',
]);

/**
 * Whether a failed CLB step is permanent (both layers classify alike). The client already retried transient failures; what is left as
 * retryable, plus vanished CLBs/listeners (re-observed next run) and task timeouts (re-read), is transient.
 */
export function isPermanent(info: Pick<CloudErrorInfo, 'reason' | 'retryable'>): boolean {
  return !info.retryable && PERMANENT.has(info.reason);
}
