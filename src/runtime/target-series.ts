// The per-target gauges (loopguard_target_risk, loopguard_target_errors), rendered by loopguard, not prom-client.
// One series per target and policy: 12,000 on bench/scale's cluster. prom-client renders every series anew on each
// scrape (label objects, arrays, a string per label pair), about 20 MiB of short-lived but surviving objects per
// scrape at 12,000 series: V8's young generation grew to 19–35 MiB under the bench's scrapes, and 20 scrapes of
// prom-client alone raised VmHWM by 49 MiB, 10 MiB with cached lines (docs/benchmarks.md, issue 28). Here each
// series' line is built once, when its verdict or error changes, and a scrape only joins the lines (~1.5 MiB); a
// report updates the rows in place.
// Label values are escaped as the text exposition format asks (backslash, double quote, line feed).

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

interface GaugeSpec {
  name: string;
  help: string;
  /** The last label's name: the row's verdict, or its error's reason. */
  value: 'verdict' | 'reason';
}

export const TARGET_RISK: GaugeSpec = { name: 'loopguard_target_risk', help: '1 for the current verdict of each target (AtRisk, Mitigated, ...), per policy', value: 'verdict' };
export const TARGET_ERRORS: GaugeSpec = { name: 'loopguard_target_errors', help: '1 while the last reconcile of a target ended with an error, by reason (alerts can name the failing target)', value: 'reason' };

/** Both gauges with their label names, in the order a line carries them (alert rules and the dashboard are checked against these). */
export const TARGET_GAUGES: readonly { name: string; labelNames: readonly string[] }[] = [TARGET_RISK, TARGET_ERRORS].map((g) => ({ name: g.name, labelNames: ['namespace', 'policy', 'kind', 'name', g.value] }));

/** A label value as the exposition format writes it. */
export function escapeLabel(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

/** One target's series: its labels' values as last reported and their lines, rendered when a value changes. */
interface Row {
  verdict: string;
  risk: string;
  error?: string;
  errorLine?: string;
  /** The report that last named the target (PolicyRows.generation): rows a report no longer names are dropped. */
  seen: number;
}

/**
 * One policy's rows by namespace, kind and name, updated in place. A report names every target of the policy (12,000
 * on bench/scale) every full round, and nearly all of them unchanged: looking each up by its three labels allocates
 * nothing, where building a key per row and a new map per report (the first version) allocated ~2.5 MiB per round at
 * 3,000 targets and kept the previous round's map alive until the next one (docs/benchmarks.md, issue 40).
 */
interface PolicyRows {
  generation: number;
  rows: Map<string, Map<string, Map<string, Row>>>;
}

function child<V>(m: Map<string, V>, key: string, make: () => V): V {
  let v = m.get(key);
  if (v === undefined) m.set(key, (v = make()));
  return v;
}

export class TargetSeriesExporter {
  /** By `<namespace>/<policy>`: what each policy last reported. */
  private readonly policies = new Map<string, PolicyRows>();

  /** Replaces a policy's series with `rows`; a line whose labels did not change is kept as it was built. */
  report(namespace: string, policy: string, rows: readonly TargetSeries[]): void {
    const p = child(this.policies, `${namespace}/${policy}`, (): PolicyRows => ({ generation: 0, rows: new Map() }));
    const generation = ++p.generation;
    for (const row of rows) {
      const ns = row.namespace ?? namespace;
      const byName = child(child(p.rows, ns, () => new Map<string, Map<string, Row>>()), row.kind, () => new Map<string, Row>());
      let r = byName.get(row.name);
      if (r === undefined) byName.set(row.name, (r = { verdict: row.verdict, risk: render(TARGET_RISK, ns, policy, row, row.verdict), seen: generation }));
      else if (r.verdict !== row.verdict) {
        r.verdict = row.verdict;
        r.risk = render(TARGET_RISK, ns, policy, row, row.verdict);
      }
      if (r.error !== row.error) {
        // Set, never deleted: a `delete` turns the row into a hash table (target-trim.ts definedOf).
        r.error = row.error;
        r.errorLine = row.error === undefined ? undefined : render(TARGET_ERRORS, ns, policy, row, row.error);
      }
      r.seen = generation;
    }
    // Targets this report did not name are gone (deleted, or no longer selected).
    for (const [ns, byKind] of p.rows) {
      for (const [kind, byName] of byKind) {
        for (const [name, r] of byName) if (r.seen !== generation) byName.delete(name);
        if (byName.size === 0) byKind.delete(kind);
      }
      if (byKind.size === 0) p.rows.delete(ns);
    }
  }

  /** Drops every series of a policy (deleted, or no longer reconciled here). */
  forget(namespace: string, policy: string): void {
    this.policies.delete(`${namespace}/${policy}`);
  }

  /** Both gauges in the text exposition format, each with its HELP and TYPE even when it has no series (as prom-client). */
  render(): string {
    const parts: string[] = [];
    for (const [gauge, pick] of [[TARGET_RISK, (r: Row) => r.risk], [TARGET_ERRORS, (r: Row) => r.errorLine]] as const) {
      parts.push(`# HELP ${gauge.name} ${gauge.help}\n# TYPE ${gauge.name} gauge\n`);
      for (const p of this.policies.values()) {
        for (const byKind of p.rows.values()) {
          for (const byName of byKind.values()) {
            for (const r of byName.values()) if (pick(r) !== undefined) parts.push(pick(r)!);
          }
        }
      }
    }
    return parts.join('');
  }
}

/**
 * One line, as one flat string (join): with templates a series' line and key took 490 bytes as ropes, 220 flat (a
 * micro-run of 12,000 series).
 */
function render(gauge: GaugeSpec, namespace: string, policy: string, target: { kind: string; name: string }, value: string): string {
  const labels = [gauge.name, '{namespace="', escapeLabel(namespace), '",policy="', escapeLabel(policy), '",kind="', escapeLabel(target.kind)];
  return [...labels, '",name="', escapeLabel(target.name), '",', gauge.value, '="', escapeLabel(value), '"} 1\n'].join('');
}
