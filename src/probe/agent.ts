// The agent's loop: one window at a time, each run to its end with the plan it started with (a new plan takes
// effect at the next window, so plan updates never throw a window away), then one report write for the node.
import type { ProbePlan, ProbeReport } from '../api/probe.js';
import type { Logger } from '../runtime/logger.js';
import { measure, type Measured } from './measure.js';
import { outcomeOf } from './outcome.js';
import { parsePlan, type PlanRules } from './plan.js';
import type { PlanEvent } from './kube.js';
import { buildReport } from './report.js';
import { schedule } from './schedule.js';
import { WindowStats } from './window.js';

export interface AgentOptions {
  node: string;
  pod: { name: string; uid: string };
  namespace: string;
  rules: PlanRules;
  ratePerSecond: number;
  minIntervalSeconds: number;
  logger: Logger;
  write: (report: ProbeReport) => Promise<void>;
  /** The wire (tests of the loop may pass their own). */
  probe?: (target: ProbePlan['targets'][number], timeoutMs: number) => Promise<Measured>;
}

export class ProbeAgent {
  private plan: { plan: ProbePlan; version: string } | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  /** The loop waits for a plan (not for a probe's time): a new plan may end the wait. */
  private idle = false;

  constructor(private readonly o: AgentOptions) {}

  /** A plan version from the watch: parsed and checked; a bad one is refused whole and the last good one kept. */
  onPlan(event: PlanEvent): void {
    if (!event) {
      // A plan that was refused, or none yet: nothing was running to stop.
      if (this.plan) this.o.logger.warn('The probe plan was deleted: probing stops after this window');
      this.plan = undefined;
      return;
    }
    if (event.version === this.plan?.version) return;
    const parsed = parsePlan(event.text, this.o.rules);
    if (!parsed.ok) {
      this.o.logger.error(`Probe plan ${event.version} refused, ${this.plan ? `still running plan ${this.plan.version}` : 'nothing to run'}: ${parsed.error}`);
      return;
    }
    for (const r of parsed.refused) this.o.logger.warn(`Probe target ${r.id} refused: ${r.reason}`);
    const { plan } = parsed;
    const capacity = Math.floor(plan.windowSeconds * this.o.ratePerSecond);
    if (plan.targets.length > capacity) {
      this.o.logger.warn(
        `Probe plan ${event.version}: ${plan.targets.length} targets do not fit one window (${plan.windowSeconds} s x ${this.o.ratePerSecond}/s = ${capacity} probes); each window probes ${capacity} of them in turn`,
      );
    }
    this.o.logger.info(`Probe plan ${event.version}: ${plan.targets.length} targets, window ${plan.windowSeconds} s${parsed.refused.length ? `, ${parsed.refused.length} refused` : ''}`);
    this.plan = { plan, version: event.version };
    if (this.idle) this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** Sleeps until `at` (epoch ms), or until stop; a sleep without a plan also ends when a plan arrives. */
  private until(at: number, idle = false): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.idle = false;
        resolve();
      };
      const timer = setTimeout(done, Math.min(2 ** 31 - 1, Math.max(0, at - Date.now())));
      this.wake = done;
      this.idle = idle;
    });
  }

  async run(): Promise<void> {
    const probe = this.o.probe ?? measure;
    while (!this.stopped) {
      const current = this.plan;
      if (!current) {
        await this.until(Number.POSITIVE_INFINITY, true);
        continue;
      }
      const { plan, version } = current;
      const start = Date.now();
      const windowMs = plan.windowSeconds * 1000;
      const { probes } = schedule({
        targets: plan.targets.length,
        windowSeconds: plan.windowSeconds,
        ratePerSecond: this.o.ratePerSecond,
        minIntervalSeconds: this.o.minIntervalSeconds,
        windowIndex: Math.floor(start / windowMs),
        seed: this.o.node,
      });
      const stats = new WindowStats(plan.targets.map((t) => t.id));
      const inFlight: Promise<void>[] = [];
      for (const p of probes) {
        await this.until(start + p.atMs);
        if (this.stopped) return;
        const target = plan.targets[p.target]!;
        inFlight.push(probe(target, target.timeoutMs ?? plan.timeoutMs).then((m) => stats.record(p.target, outcomeOf(m.end, m.ms))));
      }
      await this.until(start + windowMs);
      if (this.stopped) return;
      await Promise.all(inFlight);
      const report = buildReport({ node: this.o.node, pod: this.o.pod, namespace: this.o.namespace, planVersion: version, windowStartMs: start, windowSeconds: plan.windowSeconds, targets: stats.results() });
      try {
        await this.o.write(report);
        const t = report.spec.targets;
        this.o.logger.info(`Probe window written: ${t.reduce((n, r) => n + r.probes, 0)} probes, ${t.reduce((n, r) => n + r.failures, 0)} failed, ${t.reduce((n, r) => n + r.stalls, 0)} stalled`);
      } catch (err) {
        // The next window's report replaces this one: one lost window, logged, and no retry loop to pile up writes.
        this.o.logger.error(`Cannot write the probe report for node ${this.o.node}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
