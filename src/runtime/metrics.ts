// Prometheus metrics. Controller and workqueue metrics keep controller-runtime's names
// (pkg/internal/controller/metrics, client-go workqueue metrics) so existing Grafana dashboards work; loopguard's own metrics are prefixed `loopguard_`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { WorkQueueObserver } from './work-queue.js';

/** One target's row in the per-target gauges. */
export interface TargetSeries {
  /** The target's namespace when it is not the policy's (a cluster policy's targets). */
  namespace?: string;
  kind: string;
  name: string;
  verdict: string;
  /** Reason of the error its last reconcile ended with, if any. */
  error?: string;
}

type TargetLabels = Record<'namespace' | 'policy' | 'kind' | 'name', string>;

const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];

export class Metrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: RECONCILE_BUCKETS,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly cloudRequests = new Counter({
    name: 'loopguard_cloud_requests_total',
    help: 'CLB API calls by action and outcome (ok, error, throttled)',
    labelNames: ['action', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly cloudErrors = new Counter({
    name: 'loopguard_cloud_errors_total',
    help: 'CLB API errors by action and error code',
    labelNames: ['action', 'code'] as const,
    registers: [this.registry],
  });
  readonly cloudThrottles = new Counter({
    name: 'loopguard_cloud_throttled_total',
    help: 'CLB API calls answered with RequestLimitExceeded, by action',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  /** Read at scrape time from the CLB client (watchCloudRate). */
  private cloudRateSource: () => Record<string, number> = () => ({});
  readonly cloudRateLimit = new Gauge({
    name: 'loopguard_cloud_rate_limit',
    help: 'CLB API requests per second loopguard allows itself now, by action: --cloud-rate-limit, or less while the account quota is contended (adaptive rate)',
    labelNames: ['action'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [action, rate] of Object.entries(this.cloudRateSource())) this.cloudRateLimit.set({ action }, rate);
    },
  });
  readonly targetRisk = new Gauge({
    name: 'loopguard_target_risk',
    help: '1 for the current verdict of each target (AtRisk, Mitigated, ...), per policy',
    labelNames: ['namespace', 'policy', 'kind', 'name', 'verdict'] as const,
    registers: [this.registry],
  });
  readonly targetErrors = new Gauge({
    name: 'loopguard_target_errors',
    help: '1 while the last reconcile of a target ended with an error, by reason (alerts can name the failing target)',
    labelNames: ['namespace', 'policy', 'kind', 'name', 'reason'] as const,
    registers: [this.registry],
  });
  readonly driftCorrections = new Counter({
    name: 'loopguard_drift_corrections_total',
    help: 'Changes made outside loopguard that it corrected',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly driftChecks = new Counter({
    name: 'loopguard_drift_checks_total',
    help: 'Converged CLBs checked for drift, by tier: signal (backend health), full (the full re-read on its cycle), escalated (a full re-read the signal asked for)',
    labelNames: ['tier'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'leader_election_master_status',
    help: '1 while this replica is the leader',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  /**
   * Label sets of the per-target series each policy last reported. prom-client's remove() matches one full
   * label set, never a subset, so replacing a policy's series means removing exactly what it set before;
   * otherwise a target that went AtRisk → Mitigated would keep exporting both.
   */
  private readonly targetSeries = new Map<string, { risk: Array<TargetLabels & { verdict: string }>; errors: Array<TargetLabels & { reason: string }> }>();

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Feeds workqueue and reconcile metrics from a WorkQueue (its name is the controller name). */
  workQueueObserver(): WorkQueueObserver {
    return {
      depth: (name, depth) => this.queueDepth.set({ name }, depth),
      added: (name) => this.queueAdds.inc({ name }),
      retried: (name) => this.queueRetries.inc({ name }),
      processed: (controller, seconds, result) => {
        this.reconcileTime.observe({ controller }, seconds);
        this.reconcileTotal.inc({ controller, result: result === 'terminal' ? 'error' : result });
        if (result === 'error' || result === 'terminal') this.reconcileErrors.inc({ controller });
      },
    };
  }

  /** Replaces a policy's per-target series (risk verdict, and error reason where there is one). */
  reportTargets(namespace: string, policy: string, rows: readonly TargetSeries[]): void {
    this.forgetTargets(namespace, policy);
    const risk: Array<TargetLabels & { verdict: string }> = [];
    const errors: Array<TargetLabels & { reason: string }> = [];
    for (const row of rows) {
      const target = { namespace: row.namespace ?? namespace, policy, kind: row.kind, name: row.name };
      risk.push({ ...target, verdict: row.verdict });
      if (row.error !== undefined) errors.push({ ...target, reason: row.error });
    }
    for (const labels of risk) this.targetRisk.set(labels, 1);
    for (const labels of errors) this.targetErrors.set(labels, 1);
    this.targetSeries.set(`${namespace}/${policy}`, { risk, errors });
  }

  /** Drops every per-target series of a policy (deleted, or no longer reconciled here). */
  forgetTargets(namespace: string, policy: string): void {
    const key = `${namespace}/${policy}`;
    const last = this.targetSeries.get(key);
    if (!last) return;
    for (const labels of last.risk) this.targetRisk.remove(labels);
    for (const labels of last.errors) this.targetErrors.remove(labels);
    this.targetSeries.delete(key);
  }

  /** Where loopguard_cloud_rate_limit reads the current rates from (the CLB client's rateLimits). */
  watchCloudRate(source: () => Record<string, number>): void {
    this.cloudRateSource = source;
  }

  /** Hook for the CLB client: one call per API request. */
  recordCloudCall(action: string, outcome: 'ok' | 'error' | 'throttled', code?: string): void {
    this.cloudRequests.inc({ action, outcome });
    if (outcome === 'throttled') this.cloudThrottles.inc({ action });
    if (outcome !== 'ok') this.cloudErrors.inc({ action, code: code ?? 'Unknown' });
  }
}
