// Reads CLBs for the assessment and keeps what it read for a while. A policy reconcile only fetches CLBs it
// has not seen, or has not seen within `maxAgeMs` (the drift-check interval), so 500 Services appearing at
// once cost 500 new reads, not 500 × the number of reconciles. Writes invalidate the CLB they touched.
import type { ClbClient, ListenerInfo, LoadBalancerHealthInfo, LoadBalancerInfo } from '../cloud/index.js';
import type { BackendHealth, ClbFacts, ClbObservation, ListenerFacts } from '../model/facts.js';

interface Entry {
  at: number;
  observation: ClbObservation;
}

function health(targets: readonly { status: string }[]): BackendHealth | undefined {
  if (targets.length === 0) return undefined;
  const alive = targets.filter((t) => t.status === 'Alive').length;
  const dead = targets.filter((t) => t.status === 'Dead').length;
  return { alive, dead, unknown: targets.length - alive - dead };
}

/** Maps the CLB API's view onto the model's plain facts. */
export function clbFacts(lb: LoadBalancerInfo, listeners: readonly ListenerInfo[], hc?: LoadBalancerHealthInfo): ClbFacts {
  const healthOf = new Map(hc?.listeners.map((l) => [l.listenerId, l]) ?? []);
  return {
    loadBalancerId: lb.loadBalancerId,
    loadBalancerType: lb.type,
    addressIpVersion: lb.addressIpVersion,
    vips: lb.vips,
    status: lb.status,
    forward: lb.forward,
    passToTarget: lb.passToTarget,
    listeners: listeners.map((l): ListenerFacts => {
      const lh = healthOf.get(l.listenerId);
      const l4Health = lh ? health(lh.rules.flatMap((r) => r.targets)) : undefined;
      return {
        listenerId: l.listenerId,
        protocol: l.protocol,
        port: l.port,
        ...(l.healthCheck ? { healthCheck: { sourceIpType: l.healthCheck.SourceIpType ?? 0 } } : {}),
        ...(l.keepaliveEnable !== undefined ? { keepaliveEnable: l.keepaliveEnable } : {}),
        ...(l.rules.length > 0
          ? {
              rules: l.rules.map((r) => {
                const rh = lh?.rules.find((x) => x.locationId === r.locationId);
                const ruleHealth = rh ? health(rh.targets) : undefined;
                return {
                  locationId: r.locationId,
                  domain: r.domain,
                  url: r.url,
                  ...(r.healthCheck ? { healthCheck: { sourceIpType: r.healthCheck.SourceIpType ?? 0 } } : {}),
                  ...(ruleHealth ? { health: ruleHealth } : {}),
                };
              }),
            }
          : {}),
        ...(l4Health && l.rules.length === 0 ? { health: l4Health } : {}),
      };
    }),
  };
}

export class ClbObserver {
  private readonly cache = new Map<string, Entry>();
  /** Raw listeners as last read, for writers that must send a listener's full HealthCheck back. */
  private readonly listeners = new Map<string, ListenerInfo[]>();
  /** The rest of the last full read, so a read-back after a write costs one DescribeListeners. */
  private readonly loadBalancers = new Map<string, { lb: LoadBalancerInfo; health?: LoadBalancerHealthInfo }>();

  constructor(private readonly clb: ClbClient) {}

  /** Observations for `ids`, reading from the CLB API those not read within `maxAgeMs`. */
  async observe(ids: readonly string[], maxAgeMs: number, signal?: AbortSignal): Promise<Map<string, ClbObservation>> {
    const now = Date.now();
    const unique = [...new Set(ids)];
    const stale = unique.filter((id) => {
      const e = this.cache.get(id);
      return !e || now - e.at > maxAgeMs;
    });
    if (stale.length > 0) await this.refresh(stale, signal);
    const result = new Map<string, ClbObservation>();
    for (const id of unique) result.set(id, this.cache.get(id)?.observation ?? { state: 'NotObserved' });
    return result;
  }

  /** The listeners of a CLB as last read (full SDK HealthCheck structs). */
  rawListeners(id: string): readonly ListenerInfo[] | undefined {
    return this.listeners.get(id);
  }

  invalidate(id: string): void {
    this.cache.delete(id);
    this.listeners.delete(id);
  }

  /**
   * Re-reads only the listeners of a CLB read before (a write's read-back): the CLB's own attributes do not
   * change with a listener write, and backend health is only advisory. Falls back to a full read.
   */
  async refreshListeners(id: string, signal?: AbortSignal): Promise<ClbObservation> {
    const known = this.loadBalancers.get(id);
    if (!known) return (await this.observe([id], 0, signal)).get(id) ?? { state: 'NotObserved' };
    const listeners = await this.clb.describeListeners(id, { signal });
    this.listeners.set(id, listeners);
    const observation: ClbObservation = { state: 'Found', clb: clbFacts(known.lb, listeners, known.health) };
    this.cache.set(id, { at: Date.now(), observation });
    return observation;
  }

  private async refresh(ids: string[], signal?: AbortSignal): Promise<void> {
    const found = await this.clb.describeLoadBalancers(ids, { signal });
    const byId = new Map(found.map((lb) => [lb.loadBalancerId, lb]));
    const [listenerSets, healthSets] = await Promise.all([
      Promise.all(found.map((lb) => this.clb.describeListeners(lb.loadBalancerId, { signal }))),
      found.length > 0 ? this.clb.describeTargetHealth(found.map((lb) => lb.loadBalancerId), { signal }) : Promise.resolve([]),
    ]);
    const healthById = new Map(healthSets.map((h) => [h.loadBalancerId, h]));
    const at = Date.now();
    found.forEach((lb, i) => {
      const listeners = listenerSets[i] ?? [];
      this.listeners.set(lb.loadBalancerId, listeners);
      const health = healthById.get(lb.loadBalancerId);
      this.loadBalancers.set(lb.loadBalancerId, { lb, ...(health ? { health } : {}) });
      this.cache.set(lb.loadBalancerId, {
        at,
        observation: { state: 'Found', clb: clbFacts(lb, listeners, healthById.get(lb.loadBalancerId)) },
      });
    });
    for (const id of ids) {
      if (byId.has(id)) continue;
      this.loadBalancers.delete(id);
      this.cache.set(id, { at, observation: { state: 'NotFound', loadBalancerId: id } });
    }
  }
}
