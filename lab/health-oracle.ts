// The CLB emulator's target health from the lab's real probes (issue 14 #3): passed as
// `EmulatorOptions.targetHealth`, DescribeTargetHealth then answers from TCP checks the lab's health checker sent
// to a node's NodePort with the listener's configured source (SourceIpType 0: the VIP; 1: 100.64.0.2), instead of
// the rule in sim/clb-emulator/health.ts. Like the real API it answers at once from the latest result and probes in
// the background; a target not probed yet is `Unknown`.
//
// The mapping is the lab's one CLB: every emulated CLB stands for it (its VIP is the lab's VIP, 10.0.0.100, not the
// emulator's 10.100.x VIPs), emulated node k is lab node k mod N, and every
// listener's NodePort is the lab backend's TCP NodePort.
import type { TargetHealthSource, TargetProbe } from '../sim/clb-emulator/index.js';
import type { ProbeSource } from './addresses.js';
import type { Lab } from './lab.js';

export interface OracleStats {
  /** Probes sent, and how many got an answer, per source. */
  sent: Record<ProbeSource, number>;
  alive: Record<ProbeSource, number>;
  /** Why failed probes failed (`timeout` when the node never answered), with counts. */
  failures: Record<string, number>;
}

export interface LabHealthOracle {
  source: TargetHealthSource;
  stats(): OracleStats;
  /** No probe is sent after this (call it before stopping the lab). */
  stop(): void;
}

interface Entry {
  detail: 'Alive' | 'Dead' | 'Unknown';
  atMs: number;
  inflight: boolean;
}

export function labHealthOracle(lab: Lab, options: { refreshMs?: number; probeTimeoutMs?: number } = {}): LabHealthOracle {
  const refreshMs = options.refreshMs ?? 1000;
  const probeTimeoutMs = options.probeTimeoutMs ?? 1000;
  const entries = new Map<string, Entry>();
  const stats: OracleStats = { sent: { vip: 0, range: 0 }, alive: { vip: 0, range: 0 }, failures: {} };
  let stopped = false;

  const refresh = (key: string, node: number, source: ProbeSource, entry: Entry) => {
    entry.inflight = true;
    stats.sent[source] += 1;
    lab.probe(node, source, probeTimeoutMs).then(
      (o) => {
        if (o.ok) stats.alive[source] += 1;
        else stats.failures[`${source} ${o.error ?? '?'}`] = (stats.failures[`${source} ${o.error ?? '?'}`] ?? 0) + 1;
        entries.set(key, { detail: o.ok ? 'Alive' : 'Dead', atMs: Date.now(), inflight: false });
      },
      () => {
        entry.inflight = false; // the lab is going away; the next call retries if it is not
      },
    );
  };

  const source: TargetHealthSource = (probe: TargetProbe) => {
    const node = probe.nodeIndex % lab.nodeCount;
    const src: ProbeSource = probe.sourceIpType === 1 ? 'range' : 'vip';
    const key = `${node}/${src}`;
    let entry = entries.get(key);
    if (!entry) {
      entry = { detail: 'Unknown', atMs: 0, inflight: false };
      entries.set(key, entry);
    }
    if (!stopped && !entry.inflight && Date.now() - entry.atMs >= refreshMs) refresh(key, node, src, entry);
    return entry.detail;
  };

  return {
    source,
    stats: () => structuredClone(stats),
    stop: () => {
      stopped = true;
    },
  };
}
