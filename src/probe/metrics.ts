// The probe's figures as Prometheus series (docs/probe.md §11 "Metrics"), fed from the agents' reports: one count per
// node window of each target the plan names, never per node or per plan entry, so the label set is bounded by the
// plan's targets (namespace, kind, name). A target that leaves the plan leaves the series.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ProbeTargetResult } from '../api/probe.js';
import { targetKey, type TargetRef } from '../model/facts.js';
import type { WindowSink } from './evidence-store.js';

/** Seconds: a healthy VIP answers in milliseconds; 3 s and more is a stall; 4–5 s is the CLB's timeout and retry. */
export const P99_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 3, 5, 10];

const LABELS = ['namespace', 'kind', 'name'] as const;

export class ProbeMetrics implements WindowSink {
  readonly probes: Counter<(typeof LABELS)[number]>;
  readonly failures: Counter<(typeof LABELS)[number]>;
  readonly stalls: Counter<(typeof LABELS)[number]>;
  readonly p99: Histogram<(typeof LABELS)[number]>;
  private readonly known = new Map<string, TargetRef>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.probes = new Counter({ name: 'loopguard_probe_probes_total', help: "Probes the agents sent to a target's private CLB VIP (all nodes, all its ports and hosts)", labelNames: LABELS, registers });
    this.failures = new Counter({ name: 'loopguard_probe_failures_total', help: 'Probes to a target that were refused, reset, timed out or answered 502/503/504', labelNames: LABELS, registers });
    this.stalls = new Counter({ name: 'loopguard_probe_stalls_total', help: 'Probes to a target that took 3 s or more', labelNames: LABELS, registers });
    this.p99 = new Histogram({ name: 'loopguard_probe_p99_seconds', help: "Each node window's p99 latency of a target (one observation per node and window)", labelNames: LABELS, buckets: P99_BUCKETS, registers });
  }

  window(t: TargetRef, results: readonly ProbeTargetResult[]): void {
    const labels = { namespace: t.namespace, kind: t.kind, name: t.name };
    this.known.set(targetKey(t), t);
    let p99: number | undefined;
    for (const r of results) {
      this.probes.inc(labels, r.probes);
      this.failures.inc(labels, r.failures);
      this.stalls.inc(labels, r.stalls);
      if (r.p99Ms !== undefined) p99 = Math.max(p99 ?? 0, r.p99Ms);
    }
    if (p99 !== undefined) this.p99.observe(labels, p99 / 1000);
  }

  targets(targets: readonly TargetRef[]): void {
    const keep = new Set(targets.map(targetKey));
    // A new target's counters start at 0, so that the first window's figures are an increase an alert can see.
    for (const t of targets) {
      const k = targetKey(t);
      if (this.known.has(k)) continue;
      this.known.set(k, t);
      const labels = { namespace: t.namespace, kind: t.kind, name: t.name };
      for (const c of [this.probes, this.failures, this.stalls]) c.inc(labels, 0);
    }
    for (const [k, t] of this.known) {
      if (keep.has(k)) continue;
      const labels = { namespace: t.namespace, kind: t.kind, name: t.name };
      for (const m of [this.probes, this.failures, this.stalls, this.p99]) m.remove(labels);
      this.known.delete(k);
    }
  }
}
