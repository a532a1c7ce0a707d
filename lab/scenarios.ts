// The three before/after measurements of issue 14, each in the same lab and the same run.
import { L4_PORT, nodeName, type ProbeSource } from './addresses.js';
import type { Outcome } from './agent-protocol.js';
import { martianSourceDrops, type L7Mode, type Lab } from './lab.js';
import type { ProbeKnobs, ProbeResults } from './probe.js';
import { summarize, type Summary } from './stats.js';

export interface Profile {
  name: 'short' | 'full';
  /** Health checks per node and configuration. */
  probesPerNode: number;
  /** L4 connections per pinned real server (the same-node / other-node rows). */
  pinnedConnections: number;
  /** L4 connections with random real-server choice, per configuration. */
  l4Connections: number;
  /** L7 requests per mode. */
  l7Requests: number;
  /** Connections or requests in flight at once (each is independent; this only bounds the wall time). */
  concurrency: number;
  /** A health check or an L4 connection that has no answer after this long failed (L4 CLBs do not retry). */
  connectTimeoutMs: number;
  /**
   * `--probe`: the probe agent's window and rates. Its defaults (300 s, 5/s, a target every 10 s) are for a cluster;
   * here a short window at 20/s gives each target as many probes as the tables' rows get, in seconds.
   */
  probe: ProbeKnobs;
}

export const PROFILES: Record<Profile['name'], Profile> = {
  full: { name: 'full', probesPerNode: 3, pinnedConnections: 10, l4Connections: 100, l7Requests: 100, concurrency: 10, connectTimeoutMs: 1000, probe: { windowSeconds: 10, ratePerSecond: 20, minIntervalSeconds: 0.1 } },
  short: { name: 'short', probesPerNode: 1, pinnedConnections: 3, l4Connections: 30, l7Requests: 30, concurrency: 15, connectTimeoutMs: 1000, probe: { windowSeconds: 3, ratePerSecond: 20, minIntervalSeconds: 0.1 } },
};

export interface HealthRow {
  source: ProbeSource;
  vipBound: boolean;
  probes: number;
  alive: number;
  /** Probe SYNs the nodes saw arrive on eth0 (PREROUTING), and delivered to the NodePort (INPUT). */
  seen: number;
  delivered: number;
  /** in_martian_src while the row ran (kernel-wide, so other traffic may add to it; never less). */
  martianDrops: number;
}

export interface L4Row {
  label: string;
  summary: Summary;
  note: string;
}

export interface L7Row {
  mode: L7Mode;
  summary: Summary;
  latenciesMs: number[];
  note: string;
}

export interface LabResults {
  profile: Profile;
  nodes: number;
  l7TimeoutMs: number;
  health: HealthRow[];
  l4: L4Row[];
  l7: L7Row[];
  durationMs: number;
  /** `--probe` only. */
  probe?: ProbeResults;
}

async function countersOf(lab: Lab): Promise<Array<Record<string, number>>> {
  return Promise.all(lab.allNodes().map((i) => lab.counters(i)));
}

function delta(before: Array<Record<string, number>>, after: Array<Record<string, number>>, name: string, nodes?: number[]): number {
  return after.reduce((sum, c, i) => (nodes && !nodes.includes(i) ? sum : sum + (c[name] ?? 0) - (before[i]?.[name] ?? 0)), 0);
}

/** (a) CLB TCP health checks of every node's NodePort, from the VIP and from 100.64, with and without the VIP bound. */
export async function measureHealthChecks(lab: Lab, p: Profile): Promise<HealthRow[]> {
  const rows: HealthRow[] = [];
  const configs: Array<[ProbeSource, boolean]> = [
    ['vip', false],
    ['vip', true],
    ['range', true],
  ];
  for (const [source, vipBound] of configs) {
    await lab.bindVip(vipBound);
    const before = await countersOf(lab);
    const m0 = await martianSourceDrops();
    const outcomes = (
      await Promise.all(
        lab.allNodes().map(async (i) => {
          const out: Outcome[] = [];
          for (let k = 0; k < p.probesPerNode; k++) out.push(await lab.probe(i, source, p.connectTimeoutMs));
          return out;
        }),
      )
    ).flat();
    const after = await countersOf(lab);
    rows.push({
      source,
      vipBound,
      probes: outcomes.length,
      alive: outcomes.filter((o) => o.ok).length,
      seen: delta(before, after, `seen_${source}`),
      delivered: delta(before, after, `delivered_${source}`),
      martianDrops: (await martianSourceDrops()) - m0,
    });
  }
  await lab.bindVip(false);
  return rows;
}

/**
 * Node1's SYN-ACKs to the client pod that never went back through the CLB (straight to the pod's veth), and the
 * pod's SYNs node1 accepted: the loop of TKE-CN/TKE-2021 in tencent-cloud.md §7 in counters.
 */
function bypassNote(before: Array<Record<string, number>>, after: Array<Record<string, number>>): string {
  return `node1 accepted ${delta(before, after, 'delivered_pod', [0])} SYNs from the pod and sent ${delta(before, after, 'reply_inside_pod', [0])} SYN-ACKs straight to it, not via the CLB`;
}

/** (b) The L4 CLB: the pod on node1 → VIP:81 → a node's NodePort, client IP preserved. */
export async function measureL4(lab: Lab, p: Profile): Promise<L4Row[]> {
  const rows: L4Row[] = [];
  const connect = (n: number) => lab.l4Connections(n, p.concurrency, p.connectTimeoutMs, L4_PORT);
  await lab.bindVip(false);
  for (const i of lab.allNodes()) {
    await lab.setL4Backend(i);
    const before = await countersOf(lab);
    const summary = summarize(await connect(p.pinnedConnections));
    const after = await countersOf(lab);
    rows.push({ label: `CLB → ${nodeName(i)}${i === 0 ? " (the client's node)" : ''}`, summary, note: i === 0 ? bypassNote(before, after) : '' });
  }
  await lab.setL4Backend('random');
  {
    const before = await countersOf(lab);
    const summary = summarize(await connect(p.l4Connections));
    const after = await countersOf(lab);
    rows.push({
      label: 'random node, VIP not bound (TKE IPVS)',
      summary,
      note: bypassNote(before, after),
    });
  }
  // The mitigation: kube-proxy binds the VIP (prevent-loopback), so in-cluster calls never leave the node, and the
  // health checks move to 100.64 so the binding no longer kills them.
  await lab.bindVip(true);
  const summary = summarize(await connect(p.l4Connections));
  const checks = await Promise.all(lab.allNodes().map((i) => lab.probe(i, 'range', p.connectTimeoutMs)));
  rows.push({
    label: 'random node, VIP bound + 100.64 checks',
    summary,
    note: `answered on node1 by kube-proxy, never via the CLB; health checks from 100.64: ${checks.filter((c) => c.ok).length}/${checks.length} alive`,
  });
  await lab.bindVip(false);
  return rows;
}

/** (c) The L7 CLB: pass-through (client IP kept, retry after the timeout) vs SNAT/keepalive from 100.127.0.1. */
export async function measureL7(lab: Lab, p: Profile): Promise<L7Row[]> {
  const rows: L7Row[] = [];
  // A client that waits longer than the CLB tries every real server sees the delay, not an error (TKE-CN).
  const clientTimeoutMs = lab.options.l7TimeoutMs * lab.nodeCount + 5000;
  await lab.bindVip(false);
  for (const mode of ['passthrough', 'snat'] as const) {
    await lab.setL7Mode(mode);
    const before = await countersOf(lab);
    const outcomes = await lab.l7Requests(p.l7Requests, p.concurrency, clientTimeoutMs);
    const after = await countersOf(lab);
    rows.push({ mode, summary: summarize(outcomes), latenciesMs: outcomes.filter((o) => o.ok).map((o) => o.ms), note: bypassNote(before, after) });
  }
  await lab.setL7Mode('passthrough');
  return rows;
}

export async function runAll(lab: Lab, p: Profile, log: (line: string) => void = () => undefined): Promise<LabResults> {
  const t0 = Date.now();
  log('(a) health checks …');
  const health = await measureHealthChecks(lab, p);
  log('(b) L4 …');
  const l4 = await measureL4(lab, p);
  log('(c) L7 …');
  const l7 = await measureL7(lab, p);
  return { profile: p, nodes: lab.nodeCount, l7TimeoutMs: lab.options.l7TimeoutMs, health, l4, l7, durationMs: Date.now() - t0 };
}
