// The per-target gauges (loopguard_target_risk, loopguard_target_errors), rendered by loopguard, not prom-client.
// One series per target and policy: 12,000 on bench/scale's cluster. prom-client renders every series anew on each
// scrape (label objects, arrays, a string per label pair), about 20 MiB of short-lived but surviving objects per
// scrape at 12,000 series: V8's young generation grew to 19–35 MiB under the bench's scrapes, and 20 scrapes of
// prom-client alone raised VmHWM by 49 MiB, 10 MiB with cached lines (docs/benchmarks.md, issue 28). Here each
// series' line is built once, when its verdict or error changes, and a scrape only joins the lines (~1.5 MiB).
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
export const TARGET_ERRORS: GaugeSpec = {
  name: 'loopguard_target_errors',
  help: '1 while the last reconcile of a target ended with an error, by reason (alerts can name the failing target)',
  value: 'reason',
};

/** Both gauges with their label names, in the order a line carries them (alert rules and the dashboard are checked against these). */
export const TARGET_GAUGES: readonly { name: string; labelNames: readonly string[] }[] = [TARGET_RISK, TARGET_ERRORS].map((g) => ({
  name: g.name,
  labelNames: ['namespace', 'policy', 'kind', 'name', g.value],
}));

/** A label value as the exposition format writes it. */
export function escapeLabel(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

/** The rendered lines of one policy's report: row key → line, per gauge. */
interface PolicyLines {
  risk: Map<string, string>;
  errors: Map<string, string>;
}

export class TargetSeriesExporter {
  /** By `<namespace>/<policy>`: what each policy last reported. */
  private readonly policies = new Map<string, PolicyLines>();

  /** Replaces a policy's series with `rows`; a line whose labels did not change is kept as it was built. */
  report(namespace: string, policy: string, rows: readonly TargetSeries[]): void {
    const key = `${namespace}/${policy}`;
    const last = this.policies.get(key);
    const next: PolicyLines = { risk: new Map(), errors: new Map() };
    for (const row of rows) {
      const ns = row.namespace ?? namespace;
      const put = (gauge: GaugeSpec, value: string, into: Map<string, string>, before: Map<string, string> | undefined) => {
        // Kept for as long as the target: flat strings (join), not ropes (see targetKey in model/facts.ts).
        const rowKey = [ns, row.kind, row.name, value].join('\u0000');
        into.set(rowKey, before?.get(rowKey) ?? render(gauge, { namespace: ns, policy, kind: row.kind, name: row.name }, value));
      };
      put(TARGET_RISK, row.verdict, next.risk, last?.risk);
      if (row.error !== undefined) put(TARGET_ERRORS, row.error, next.errors, last?.errors);
    }
    this.policies.set(key, next);
  }

  /** Drops every series of a policy (deleted, or no longer reconciled here). */
  forget(namespace: string, policy: string): void {
    this.policies.delete(`${namespace}/${policy}`);
  }

  /** Both gauges in the text exposition format, each with its HELP and TYPE even when it has no series (as prom-client). */
  render(): string {
    const parts: string[] = [];
    for (const [gauge, pick] of [
      [TARGET_RISK, (p: PolicyLines) => p.risk],
      [TARGET_ERRORS, (p: PolicyLines) => p.errors],
    ] as const) {
      parts.push(`# HELP ${gauge.name} ${gauge.help}\n# TYPE ${gauge.name} gauge\n`);
      for (const lines of this.policies.values()) for (const line of pick(lines).values()) parts.push(line);
    }
    return parts.join('');
  }
}

/**
 * One line, as one flat string (join): with templates a series' line and key took 490 bytes as ropes, 220 flat (a
 * micro-run of 12,000 series).
 */
function render(gauge: GaugeSpec, target: Record<'namespace' | 'policy' | 'kind' | 'name', string>, value: string): string {
  return [
    gauge.name,
    '{namespace="',
    escapeLabel(target.namespace),
    '",policy="',
    escapeLabel(target.policy),
    '",kind="',
    escapeLabel(target.kind),
    '",name="',
    escapeLabel(target.name),
    '",',
    gauge.value,
    '="',
    escapeLabel(value),
    '"} 1\n',
  ].join('');
}
