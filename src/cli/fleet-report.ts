// Pure: `loopguard doctor --context a --context b …` / `--all-contexts`, the fleet view. One row per kubeconfig
// context: its roll-up (targets, at risk, mitigated, uncovered) and its report, or why it could not be scanned; a
// context that fails is one row and never hides the others. Every target carries its cluster.
import { API_VERSION, type VerdictCounts } from '../api/loopbackpolicy.js';
import { countVerdicts } from '../model/verdict-counts.js';
import { EXIT_CANNOT_SCAN, EXIT_OK, EXIT_RISK } from './errors.js';
import { compareTargets, type Report, type TargetReport } from './report.js';

export interface ClusterRollup {
  targets: number;
  atRisk: number;
  mitigated: number;
  /** At risk, and no LoopbackPolicy or ClusterLoopbackPolicy covers it: nothing will mitigate it until one does. */
  uncovered: number;
}

/** One kubeconfig context: scanned (`report`) or not (`error`, one line naming cause and fix). */
export type ClusterOutcome = { cluster: string; server?: string; report: Report } | { cluster: string; server?: string; error: string };

export interface ClusterRow {
  /** The kubeconfig context name. */
  cluster: string;
  server?: string;
  status: 'Scanned' | 'Failed';
  error?: string;
  rollup?: ClusterRollup;
  report?: Report;
}

export interface FleetReport {
  apiVersion: typeof API_VERSION;
  kind: 'DoctorFleetReport';
  generatedAt: string;
  /** Every scanned cluster's targets together. */
  counts: VerdictCounts;
  atRisk: boolean;
  /** Contexts that could not be scanned. */
  failed: number;
  clusters: ClusterRow[];
}

export function rollupOf(targets: readonly TargetReport[]): ClusterRollup {
  return {
    targets: targets.length,
    atRisk: targets.filter((t) => t.verdict === 'AtRisk').length,
    mitigated: targets.filter((t) => t.verdict === 'Mitigated').length,
    uncovered: targets.filter((t) => t.uncovered === true).length,
  };
}

/** The rows in the order the contexts were given; each scanned report's targets stamped with their cluster. */
export function buildFleetReport(outcomes: readonly ClusterOutcome[], now: Date): FleetReport {
  const clusters: ClusterRow[] = outcomes.map((o) => {
    const where = o.server ? { server: o.server } : {};
    if ('error' in o) return { cluster: o.cluster, ...where, status: 'Failed', error: o.error };
    const report: Report = { ...o.report, targets: o.report.targets.map((t) => ({ ...t, cluster: o.cluster })) };
    return { cluster: o.cluster, ...where, status: 'Scanned', rollup: rollupOf(report.targets), report };
  });
  const all = fleetTargets({ clusters });
  return {
    apiVersion: API_VERSION,
    kind: 'DoctorFleetReport',
    generatedAt: now.toISOString(),
    counts: countVerdicts(all),
    atRisk: all.some((t) => t.verdict === 'AtRisk'),
    failed: clusters.filter((c) => c.status === 'Failed').length,
    clusters,
  };
}

/** Every target of every scanned cluster, most severe first (then cluster, namespace, kind, name). */
export function fleetTargets(report: Pick<FleetReport, 'clusters'>): TargetReport[] {
  return report.clusters
    .flatMap((c) => c.report?.targets ?? [])
    .sort((a, b) => compareTargets(a, b) || (a.cluster ?? '').localeCompare(b.cluster ?? ''));
}

/** The roll-up of the whole fleet (scanned clusters only). */
export function fleetRollup(report: Pick<FleetReport, 'clusters'>): ClusterRollup {
  return rollupOf(fleetTargets(report));
}

/**
 * 1 when a target is at risk in any cluster (what the fleet view is for: a failed context does not hide it);
 * otherwise 2 when some context could not be scanned (its row says why); otherwise 0.
 */
export function fleetExitCode(report: Pick<FleetReport, 'atRisk' | 'failed'>): number {
  if (report.atRisk) return EXIT_RISK;
  return report.failed > 0 ? EXIT_CANNOT_SCAN : EXIT_OK;
}
