// The cheap drift signal (docs/tencent-cloud.md §3 DescribeTargetHealth): what one CLB's backend health says, and
// whether it changed in a way that can mean drift. Pure.
//
// Why health shows drift: in IPVS mode kube-proxy binds the CLB VIP on every node, so a health check whose source
// is the VIP is dropped and every backend of that listener turns Dead (§5, kubernetes/kubernetes#79783). A
// listener loopguard moved to 100.64 and someone put back on the VIP therefore shows as a change in its Dead count,
// and a listener or rule added or removed shows as a change in the set of listeners and rules with backends.
// What health cannot show (docs/architecture.md "Drift checks"): a change that leaves every backend as it was —
// iptables mode or an unbound VIP (the VIP source is not dropped there), a listener without backends, one whose
// backends were all Dead already, keepalive or pass-to-target. The full re-read on the slower cycle finds those.
import type { LoadBalancerHealthInfo } from './clb-client.js';

const LAYER7 = new Set(['HTTP', 'HTTPS']);

/** Per listener (L4) or rule (L7) with backends: how many, and how many are Dead. */
export type HealthSummary = ReadonlyMap<string, { targets: number; dead: number }>;

/**
 * The summary of one CLB's DescribeTargetHealth answer. Keys: the listener id for an L4 listener (the CLB reports it
 * through pseudo-rules: their targets are summed), `listenerId/locationId` for an L7 rule. Listeners and rules
 * without backends are left out: whether the API lists them is not documented, and leaving them out on both sides
 * keeps two answers comparable.
 */
export function healthSummary(h: LoadBalancerHealthInfo): HealthSummary {
  const out = new Map<string, { targets: number; dead: number }>();
  const add = (key: string, targets: readonly { status: string }[]) => {
    if (targets.length === 0) return;
    const s = out.get(key) ?? { targets: 0, dead: 0 };
    out.set(key, { targets: s.targets + targets.length, dead: s.dead + targets.filter((t) => t.status === 'Dead').length });
  };
  for (const l of h.listeners) {
    for (const r of l.rules) add(LAYER7.has(l.protocol.toUpperCase()) ? `${l.listenerId}/${r.locationId}` : l.listenerId, r.targets);
  }
  return out;
}

/**
 * Why this health answer needs the full re-read now, or undefined. Against the last answer seen for the CLB (by the
 * signal or by a full read, whichever came last): a listener or rule with backends appeared or went, or a Dead count
 * changed (either way: Dead after a source went back on the VIP, Alive again after someone else fixed it). Without
 * an earlier answer (a new process, a CLB first read by the signal), any Dead backend: what was there before is
 * unknown, and a source already back on the VIP looks exactly like that.
 */
export function driftSuspected(before: HealthSummary | undefined, now: HealthSummary): string | undefined {
  if (!before) {
    const dead = [...now].find(([, s]) => s.dead > 0);
    return dead ? `${dead[0]}: ${dead[1].dead} of ${dead[1].targets} backends Dead, no earlier answer` : undefined;
  }
  for (const key of new Set([...before.keys(), ...now.keys()])) {
    const b = before.get(key);
    const n = now.get(key);
    if (!b) return `${key}: new listener or rule with backends`;
    if (!n) return `${key}: listener or rule gone, or its backends`;
    if (b.dead !== n.dead) return `${key}: Dead backends ${b.dead} → ${n.dead} of ${n.targets}`;
  }
  return undefined;
}
