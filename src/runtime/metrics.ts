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
  readonly reconcileTotal = this.counter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']);
  readonly reconcileErrors = this.counter('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']);
  readonly reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', labelNames: ['controller'] as const, buckets: RECONCILE_BUCKETS, registers: [this.registry] });
  readonly queueDepth = this.gauge('workqueue_depth', 'Current depth of workqueue', ['name']);
  readonly queueAdds = this.counter('workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
  readonly queueRetries = this.counter('workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']);
  readonly cloudRequests = this.counter('loopguard_cloud_requests_total', 'CLB API calls by action and outcome (ok, error, throttled)', ['action', 'outcome']);
  readonly cloudErrors = this.counter('loopguard_cloud_errors_total', 'CLB API errors by action and error code', ['action', 'code']);
  readonly cloudThrottles = this.counter('loopguard_cloud_throttled_total', 'CLB API calls answered with RequestLimitExceeded, by action', ['action']);
  /** Read at scrape time from the CLB client (watchCloudRate). */
  private cloudRateSource: () => Record<string, number> = () => ({});
  readonly cloudRateLimit: Gauge<'action'> = this.gauge('loopguard_cloud_rate_limit', 'CLB API requests per second loopguard allows itself now, by action: --cloud-rate-limit, or less while the account quota is contended (adaptive rate)', ['action'], () => {
    for (const [action, rate] of Object.entries(this.cloudRateSource())) this.cloudRateLimit.set({ action }, rate);
  });
  readonly driftCorrections = this.counter('loopguard_drift_corrections_total', 'Changes made outside loopguard that it corrected', ['kind']);
  readonly driftChecks = this.counter('loopguard_drift_checks_total', 'Converged CLBs checked for drift, by tier: health (the backend-health signal), full (the full re-read on its cycle), escalated (a full re-read the health signal asked for)', ['tier']);
  readonly targetsPlanned = this.counter('loopguard_targets_planned_total', 'Targets planned by policy rounds: a round plans only the targets that a change (an object, a CLB read that differs) concerns');
  readonly leader = this.gauge('leader_election_master_status', '1 while this replica is the leader', ['name']);

  /** loopguard_target_risk and loopguard_target_errors: one series per target, rendered apart (target-series.ts). */
  private readonly targets = new TargetSeriesExporter();

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect?: () => void): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry], ...(collect ? { collect } : {}) });
  }

  /** Feeds workqueue and reconcile metrics from a WorkQueue (its name is the controller name). */
  workQueueObserver(): WorkQueueObserver {
    return {
      depth: (name, depth) => this.queueDepth.set({ name }, depth),
      added: (name) => this.queueAdds.inc({ name }),
      retried: (name) => this.queueRetries.inc({ name }),
      processed: (controller, seconds, result) => {
        this.reconcileTime.observe({ controller }, seconds);
        this.reconcileTotal.inc({ controller, result });
        if (result === 'error') this.reconcileErrors.inc({ controller });
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
