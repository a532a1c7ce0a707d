// `npm run lab -- --probe` (issue 41 #5): loopguard's probe agent (src/probe, run unmodified inside the lab's pod
// network by lab/agent.ts) measures the lab's CLB before and after the fixes, and its reports are summed into one
// line. The figures are the agent's own (docs/probe.md §3, §5): a failure is a refused, reset or timed-out probe or
// a 502/503/504, a stall a probe that took 3 s or more.
import type { ProbeReport, ProbeTarget } from '../src/api/probe.js';
import { TIMEOUT_MS } from '../src/probe/plan.js';
import { L4_PORT, L7_PORT, VIP } from './addresses.js';
import type { Lab } from './lab.js';

/** The agent's rate and window knobs (its `--rate`, `--min-interval-seconds`; the plan's `windowSeconds`). */
export interface ProbeKnobs {
  windowSeconds: number;
  ratePerSecond: number;
  minIntervalSeconds: number;
}

/** Where the reports would live: loopguard's namespace (the lead's operator test reads them from there). */
export const PROBE_NAMESPACE = 'loopguard-system';
/** The targets, named as the operator names them (docs/probe.md §1). */
export const L4_TARGET = `Service/lab/l4:${L4_PORT}`;
export const L7_HOST = 'web.lab.example';
export const L7_TARGET = `Ingress/lab/web/${L7_HOST}/`;

export type ProbePhaseName = 'before' | 'after-l4' | 'after-l7';

export interface ProbePhase {
  phase: ProbePhaseName;
  /** The lab's state while the window ran. */
  state: string;
  planVersion: string;
  /** One LoopbackProbeReport per node the agent ran on, as the agent built it. */
  reports: ProbeReport[];
}

/** One target over one phase, summed over the nodes' reports. */
export interface ProbeTally {
  probes: number;
  failures: number;
  stalls: number;
  notRun: number;
  /** The worst node's p99 (reports carry quantiles, not samples, so they are not merged). */
  p99Ms?: number;
  /** The nodes whose report shows failures or stalls ("the nodes that saw them", docs/probe.md §3). */
  nodes: string[];
}

export interface ProbeFigures {
  l4: { before: ProbeTally; after: ProbeTally };
  l7: { before: ProbeTally; after: ProbeTally };
}

export interface ProbeResults {
  knobs: ProbeKnobs;
  phases: ProbePhase[];
  figures: ProbeFigures;
  line: string;
  durationMs: number;
}

/** The plan.json the operator would publish for these targets (the agent parses it, docs/probe.md §1). */
export function probePlanText(targets: ProbeTarget[], windowSeconds: number, timeoutMs: number): string {
  return JSON.stringify({ version: 1, windowSeconds, timeoutMs, targets });
}

export function tally(reports: ProbeReport[], id: string): ProbeTally {
  const t: ProbeTally = { probes: 0, failures: 0, stalls: 0, notRun: 0, nodes: [] };
  for (const report of reports) {
    const r = report.spec.targets.find((x) => x.id === id);
    if (!r) continue;
    t.probes += r.probes;
    t.failures += r.failures;
    t.stalls += r.stalls;
    t.notRun += r.notRun;
    if (r.p99Ms !== undefined) t.p99Ms = Math.max(t.p99Ms ?? 0, r.p99Ms);
    if (r.failures > 0 || r.stalls > 0) t.nodes.push(report.spec.node);
  }
  return t;
}

export function figures(phases: ProbePhase[]): ProbeFigures {
  const of = (name: ProbePhaseName) => phases.find((p) => p.phase === name)?.reports ?? [];
  return {
    l4: { before: tally(of('before'), L4_TARGET), after: tally(of('after-l4'), L4_TARGET) },
    l7: { before: tally(of('before'), L7_TARGET), after: tally(of('after-l7'), L7_TARGET) },
  };
}

const seconds = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(2)}s`);
const millis = (ms: number | undefined) => (ms === undefined ? '-' : `${Number(ms.toPrecision(3))}ms`);

/** The one line `--probe` prints (issue 41 #5). */
export function probeLine(f: ProbeFigures): string {
  const { l4, l7 } = f;
  return (
    `probe: L4 before failed=${l4.before.failures}/${l4.before.probes} after failed=${l4.after.failures}/${l4.after.probes}; ` +
    `L7 before stalls=${l7.before.stalls}/${l7.before.probes} p99=${seconds(l7.before.p99Ms)} after stalls=${l7.after.stalls}/${l7.after.probes} p99=${millis(l7.after.p99Ms)}`
  );
}

/**
 * Three windows of the agent from the pod network: before (VIP not bound, L4 to a random node, L7 pass-through),
 * after the L4 fix (kube-proxy binds the VIP: prevent-loopback) and after the L7 fix (SNAT/keepalive). The two fixes
 * get a window each because the lab's L4 and L7 CLBs share one VIP: with it bound, kube-proxy would answer the L7
 * probes too, and the window would measure kube-proxy instead of the L7 CLB's fix.
 */
export async function measureProbe(lab: Lab, knobs: ProbeKnobs, l4TimeoutMs: number, log: (line: string) => void = () => undefined): Promise<ProbeResults> {
  const t0 = Date.now();
  const l4: ProbeTarget = { id: L4_TARGET, vip: VIP, port: L4_PORT, protocol: 'TCP', timeoutMs: l4TimeoutMs };
  // Longer than the CLB's real-server timeout plus a retry's answer, so a ~4.2 s answer is measured as a stall, not
  // cut off as a failure (docs/probe.md §5).
  const l7: ProbeTarget = { id: L7_TARGET, vip: VIP, port: L7_PORT, protocol: 'HTTP', host: L7_HOST, path: '/', timeoutMs: Math.min(TIMEOUT_MS.max, lab.options.l7TimeoutMs + 5000) };
  const phases: ProbePhase[] = [];
  const run = async (phase: ProbePhaseName, state: string, targets: ProbeTarget[]) => {
    log(`(d) probe agent, ${phase}: ${state} …`);
    const planVersion = `lab-${phase}`;
    const reports = await lab.probeWindow({
      planText: probePlanText(targets, knobs.windowSeconds, 5000),
      planVersion,
      namespace: PROBE_NAMESPACE,
      ratePerSecond: knobs.ratePerSecond,
      minIntervalSeconds: knobs.minIntervalSeconds,
      // The agent's --min-window-seconds (tests' knob): accept this plan's short window.
      minWindowSeconds: knobs.windowSeconds,
    });
    phases.push({ phase, state, planVersion, reports });
  };

  await lab.bindVip(false);
  await lab.setL4Backend('random');
  await lab.setL7Mode('passthrough');
  await run('before', 'VIP not bound, L4 to a random node, L7 pass-through', [l4, l7]);
  await lab.bindVip(true);
  await run('after-l4', 'VIP bound on every node (prevent-loopback)', [l4]);
  await lab.bindVip(false);
  await lab.setL7Mode('snat');
  await run('after-l7', 'L7 SNAT/keepalive (100.127.0.1), VIP not bound', [l7]);
  await lab.setL7Mode('passthrough');

  const f = figures(phases);
  return { knobs, phases, figures: f, line: probeLine(f), durationMs: Date.now() - t0 };
}
