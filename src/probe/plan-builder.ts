// The operator's side of the plan (docs/probe.md §1, §11): from the targets each probing policy manages, the entries
// the agents measure. Pure: the policy controller hands over what it selected (its own selection, the same targets its
// status lists), this turns them into one plan in a stable order, so that the same selection always makes the same
// text and the plan is written only when the selection really changed.
import type { ProbeSpec, TargetKind } from '../api/loopbackpolicy.js';
import type { ProbePlan, ProbeTarget } from '../api/probe.js';
import { targetKey, type TargetFacts, type TargetRef } from '../model/facts.js';
import { inCidr, parseCidr, parseIPv4, PRIVATE_RANGES, MAX_TARGETS } from './plan.js';

/** Every target is measured from every node at least once a window (docs/probe.md §4: 300 s, "a few minutes"). */
export const PLAN_WINDOW_SECONDS = 300;
/** Above the CLB's 4 s backend timeout, so its 4.2 s answers are measured as stalls, not cut off (docs/probe.md §5). */
export const PLAN_TIMEOUT_MS = 5_000;
/** TKE's Ingress listeners: HTTP on 80, HTTPS on 443 when the Ingress has TLS (assumption, docs/probe.md §11). */
const HTTP_PORT = 80;
const HTTPS_PORT = 443;

const PRIVATE = PRIVATE_RANGES.map((r) => parseCidr(r)!);

/** What one policy hands over: its resolved `probe:` and the targets it manages now. */
export interface ProbeSelection {
  probe: Required<ProbeSpec>;
  targets: readonly TargetFacts[];
}

/** A plan entry and the target it measures (the evidence is per target: all its ports and hosts together). */
export interface PlannedProbe {
  entry: ProbeTarget;
  target: TargetRef;
  loadBalancerId?: string;
}

/** The first private IPv4 address TKE wrote into the target's status (its CLB's VIP), if any. */
export function privateVip(t: Pick<TargetFacts, 'loadBalancerIps'>): string | undefined {
  return t.loadBalancerIps?.find((ip) => {
    const n = parseIPv4(ip);
    return n !== undefined && PRIVATE.some((c) => inCidr(n, c));
  });
}

/**
 * One target's entries: L4 each TCP port of the VIP (a Gateway's: its Service's ports, its listeners); L7 each host of
 * the Ingress (or the VIP without one) at `path`.
 */
export function probesOf(t: TargetFacts, path: string): PlannedProbe[] {
  const vip = privateVip(t);
  if (!vip) return [];
  const target: TargetRef = { kind: t.kind, namespace: t.namespace, name: t.name };
  const base = { target, ...(t.loadBalancerId ? { loadBalancerId: t.loadBalancerId } : {}) };
  const key = targetKey(t);
  if (t.kind !== 'Ingress') {
    const svc = t.kind === 'Service' ? t : 'facts' in t.service ? t.service.facts : undefined;
    if (svc?.type !== 'LoadBalancer') return [];
    // UDP and SCTP have no connect to measure: only TCP ports are probed.
    const ports = [...new Set(svc.ports.filter((p) => p.protocol === 'TCP').map((p) => p.port))].sort((a, b) => a - b);
    return ports.map((port) => ({ ...base, entry: { id: `${key}:${port}`, vip, port, protocol: 'TCP' } }));
  }
  const protocol = t.tls ? 'HTTPS' : 'HTTP';
  const port = t.tls ? HTTPS_PORT : HTTP_PORT;
  // A wildcard host names no one host to send: such a rule is probed at the VIP, like a rule without a host.
  const hosts = [...new Set(t.rules.map((r) => (r.host && !r.host.includes('*') ? r.host : '')))].sort();
  if (hosts.length === 0) hosts.push('');
  return hosts.map((host) => ({ ...base, entry: { id: `${key}/${host || vip}${path}`, vip, port, protocol, ...(host ? { host } : {}), path } }));
}

/**
 * The target a plan entry's id names (probesOf's ids: `Service/<ns>/<name>:<port>`, `Gateway/<ns>/<name>:<port>`,
 * `Ingress/<ns>/<name>/<host><path>`).
 */
export function targetOfProbeId(id: string): TargetRef | undefined {
  const [kind, namespace, rest] = [id.split('/')[0], id.split('/')[1], id.split('/').slice(2).join('/')];
  // Kubernetes names hold neither "/" nor ":": the name ends at the first of them.
  const name = rest.split(kind === 'Ingress' ? '/' : ':')[0];
  if ((kind !== 'Service' && kind !== 'Ingress' && kind !== 'Gateway') || !namespace || !name) return undefined;
  return { kind, namespace, name };
}

/** A target's own entries at most: ports or hosts beyond these (sorted) are not probed (the evidence is per target). */
export const MAX_PROBES_PER_TARGET = 8;

/**
 * The plan of every probing policy's targets: a policy with `probe.enabled`, the kinds `probe.targets` keeps (the
 * resolved spec has already narrowed them to the policy's kinds), every target with a private IPv4 VIP whatever its
 * verdict (a Mitigated or NotApplicable target is where a contradiction shows). One entry per id (a target has one
 * manager, so two policies never hand over the same one; the first wins if they did). At most MAX_TARGETS entries (the
 * agent refuses a longer plan whole), shared fairly: a namespace's users choose its Ingress hosts and Service ports,
 * so entries are taken one per namespace in turn (and at most MAX_PROBES_PER_TARGET per target), and one namespace's
 * thousand hosts cannot push the others out. `left`: the targets that got no entry for want of room. Sorted by id.
 */
export function buildProbePlan(selections: Iterable<ProbeSelection>, windowSeconds = PLAN_WINDOW_SECONDS): { plan: ProbePlan; probes: PlannedProbe[]; dropped: number; left: TargetRef[] } {
  const byId = new Map<string, PlannedProbe>();
  for (const s of selections) {
    if (!s.probe.enabled) continue;
    const kinds = new Set<TargetKind>(s.probe.targets);
    for (const t of s.targets) {
      if (!kinds.has(t.kind)) continue;
      for (const p of probesOf(t, s.probe.path).slice(0, MAX_PROBES_PER_TARGET)) if (!byId.has(p.entry.id)) byId.set(p.entry.id, p);
    }
  }
  const idOrder = (a: PlannedProbe, b: PlannedProbe) => (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0);
  const queues = new Map<string, PlannedProbe[]>();
  for (const p of [...byId.values()].sort(idOrder)) {
    const q = queues.get(p.target.namespace) ?? [];
    queues.set(p.target.namespace, q);
    q.push(p);
  }
  const lines = [...queues.keys()].sort().map((ns) => queues.get(ns)!);
  const probes: PlannedProbe[] = [];
  for (let i = 0; probes.length < MAX_TARGETS && lines.some((q) => i < q.length); i++) {
    for (const q of lines) if (i < q.length && probes.length < MAX_TARGETS) probes.push(q[i]!);
  }
  probes.sort(idOrder);
  const kept = new Set(probes.map((p) => targetKey(p.target)));
  const left = new Map([...byId.values()].filter((p) => !kept.has(targetKey(p.target))).map((p) => [targetKey(p.target), p.target]));
  return { plan: { version: 1, windowSeconds, timeoutMs: PLAN_TIMEOUT_MS, targets: probes.map((p) => p.entry) }, probes, dropped: byId.size - probes.length, left: [...left.values()] };
}
