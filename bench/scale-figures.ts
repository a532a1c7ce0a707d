// The pure parts of bench:scale (unit-tested): how many namespaces the cluster-policy run spreads the workload over,
// which namespace each object goes to, the ClusterLoopbackPolicy it applies, and the line that sets a cluster
// policy's figures beside a namespaced policy's measured in the same invocation.
import { GROUP, VERSION } from '../src/api/loopbackpolicy.js';
import { CLUSTER_KIND } from '../src/api/clusterloopbackpolicy.js';
import { MiB } from './operator-sampler.js';

/** Issue 24 item 7: the cluster policy's run spreads the workload over 500 namespaces (times --scale, at least 2). */
export const CLUSTER_NAMESPACES = 500;

/** The label the bench puts on its namespaces; the cluster policy's namespaceSelector matches its value. */
export const BENCH_NAMESPACE_LABEL = 'bench.loopguard.dev/scale';

export type PolicyKind = 'namespaced' | 'cluster';

/** `--policy namespaced|cluster|both` → the runs, namespaced first (the baseline the cluster run is compared with). */
export function policyKinds(option: string): PolicyKind[] {
  if (option === 'both') return ['namespaced', 'cluster'];
  if (option === 'namespaced' || option === 'cluster') return [option];
  throw new Error(`--policy must be namespaced, cluster or both, not ${option}`);
}

/** Namespaces of the cluster run: `base` (500) times the scale, rounded, at least 2 (a cluster policy over one is the namespaced case). */
export function clusterNamespaceCount(base: number, scale: number): number {
  if (!Number.isFinite(base) || base < 1) throw new Error(`--namespaces must be a positive number, not ${base}`);
  return Math.max(2, Math.round(base * scale));
}

/**
 * Object i of each kind goes to namespace i mod n, so every namespace gets its share of LoadBalancer Services,
 * ClusterIP Services and Ingresses. Ingress i's backend is ClusterIP Service (i mod n), which lies in the same
 * namespace; with one namespace that is cip-00000, the namespaced run's backend.
 */
export function spread(i: number, namespaces: number): { namespace: number; backend: number } {
  return { namespace: i % namespaces, backend: i % namespaces };
}

/** One Audit ClusterLoopbackPolicy over the namespaces labelled `BENCH_NAMESPACE_LABEL=<run>`, as YAML for kubectl. */
export function clusterPolicyYaml(name: string, run: string): string {
  return `apiVersion: ${GROUP}/${VERSION}\nkind: ${CLUSTER_KIND}\nmetadata: {name: ${name}}\nspec: {mode: Audit, namespaceSelector: {matchLabels: {${BENCH_NAMESPACE_LABEL}: "${run}"}}}\n`;
}

/** What one run measured. */
export interface RunFigures {
  readyMs: number;
  statusBytes: number;
  policyBytes: number;
  rssPeakBytes: number;
  rssSettledBytes: number;
  heapPeakBytes: number;
  heapSettledBytes: number;
}

const mb = (bytes: number) => (bytes / MiB).toFixed(1);
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const r = (x: number, y: number) => (y > 0 ? (x / y).toFixed(2) : 'n/a');

/**
 * The cluster run beside the namespaced run of the same invocation: each figure of the cluster policy and the
 * namespaced one, and their ratio (issue 24: memory no worse than the namespaced case, i.e. RSS ratio ≤ 1.00).
 */
export function comparisonLines(clbs: string, namespaced: RunFigures, cluster: RunFigures): string[] {
  return [
    `cluster vs namespaced (${clbs} CLBs): time to Ready ${(cluster.readyMs / 1000).toFixed(1)} s vs ${(namespaced.readyMs / 1000).toFixed(1)} s (ratio ${r(cluster.readyMs, namespaced.readyMs)})`,
    `cluster vs namespaced (${clbs} CLBs): status ${kb(cluster.statusBytes)} KiB vs ${kb(namespaced.statusBytes)} KiB (ratio ${r(cluster.statusBytes, namespaced.statusBytes)}); policy object ${kb(cluster.policyBytes)} KiB vs ${kb(namespaced.policyBytes)} KiB`,
    `cluster vs namespaced (${clbs} CLBs): RSS peak ${mb(cluster.rssPeakBytes)} vs ${mb(namespaced.rssPeakBytes)} MiB (ratio ${r(cluster.rssPeakBytes, namespaced.rssPeakBytes)}; goal ≤ 1.00), settled ${mb(cluster.rssSettledBytes)} vs ${mb(namespaced.rssSettledBytes)} MiB (ratio ${r(cluster.rssSettledBytes, namespaced.rssSettledBytes)}); heap used peak ${mb(cluster.heapPeakBytes)} vs ${mb(namespaced.heapPeakBytes)} MiB, settled ${mb(cluster.heapSettledBytes)} vs ${mb(namespaced.heapSettledBytes)} MiB`,
  ];
}
