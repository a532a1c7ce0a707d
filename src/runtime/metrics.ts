// Prometheus metrics. Controller and workqueue metrics keep controller-runtime's names
// (pkg/internal/controller/metrics, client-go workqueue metrics) so existing Grafana dashboards work; loopguard's own metrics are prefixed `loopguard_`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TargetSeriesExporter, type TargetSeries } from './target-series.js';
import type { WorkQueueObserver } from './work-queue.js';

/** What a /metrics endpoint serves: the registry's metrics and the per-target gauges (target-series.ts). */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];

export class Metrics implements MetricsSource {
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
  readonly driftCorrections = new Counter({
    name: 'loopguard_drift_corrections_total',
    help: 'Changes made outside loopguard that it corrected',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly driftChecks = new Counter({
    name: 'loopguard_drift_checks_total',
    help: 'Converged CLBs checked for drift, by tier: health (the backend-health signal), full (the full re-read on its cycle), escalated (a full re-read the health signal asked for)',
    labelNames: ['tier'] as const,
    registers: [this.registry],
  });
  readonly targetsPlanned = new Counter({
    name: 'loopguard_targets_planned_total',
    help: 'Targets planned by policy rounds: a round plans only the targets that a change (an object, a CLB read that differs) concerns',
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'leader_election_master_status',
    help: '1 while this replica is the leader',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  /** loopguard_target_risk and loopguard_target_errors: one series per target, rendered apart (target-series.ts). */
  private readonly targets = new TargetSeriesExporter();

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
    this.targets.report(namespace, policy, rows);
  }

  /** Drops every per-target series of a policy (deleted, or no longer reconciled here). */
  forgetTargets(namespace: string, policy: string): void {
    this.targets.forget(namespace, policy);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Everything /metrics serves, in the text exposition format. */
  async render(): Promise<string> {
    return `${await this.registry.metrics()}\n${this.targets.render()}`;
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
