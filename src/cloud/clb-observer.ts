// Reads CLBs for the assessment and keeps what it read for a while. A policy reconcile only fetches CLBs it
// has not seen, or has not seen within `maxAgeMs` (the drift-check interval), so 500 Services appearing at
// once cost 500 new reads, not 500 × the number of reconciles. Ids are read in DescribeLoadBalancers calls of
// up to 20. A write whose async task succeeded updates the cached facts in
// place (the task's success is the verification); the next drift check reads the CLB again and sees any drift.
import { isDeepStrictEqual } from 'node:util';
import { isClbId } from '../api/annotations.js';
import { MAX_LOAD_BALANCER_IDS, batches } from './batching.js';
import type { ClbReader, ListenerInfo, LoadBalancerHealthInfo, LoadBalancerInfo } from './clb-client.js';
import { plannedView, type BackendHealth, type ClbFacts, type ClbObservation, type HealthCheckFacts, type ListenerFacts } from '../model/facts.js';

/**
 * What a listener write needs of a listener as read: its id and full health check (clb-client.ts: a write sends the
 * whole struct back). Kept for L4 listeners only, the ones loopguard writes through the API (an L7 rule's source goes
 * through TkeServiceConfig), and nothing else of the SDK's answer: not names, nor listeners with rules.
 */
export type RawListener = Pick<ListenerInfo, 'listenerId' | 'healthCheck'>;

function rawListeners(listeners: readonly ListenerInfo[]): RawListener[] {
  return listeners.flatMap((l) => (l.rules.length === 0 ? [{ listenerId: l.listenerId, ...(l.healthCheck ? { healthCheck: l.healthCheck } : {}) }] : []));
}

interface Entry {
  at: number;
  observation: ClbObservation;
  /** Loaded from the observation checkpoint (a previous leader's read), not read by this process: no raw listeners. */
  seeded?: boolean;
}

function health(targets: readonly { status: string }[]): BackendHealth | undefined {
  if (targets.length === 0) return undefined;
  const alive = targets.filter((t) => t.status === 'Alive').length;
  const dead = targets.filter((t) => t.status === 'Dead').length;
  return { alive, dead };
}

/** The health-check facts the model reads: the source, and the switch TkeServiceConfig fragments must carry (tencent-cloud.md §1). */
function healthCheckFacts(hc: NonNullable<ListenerInfo['healthCheck']>): HealthCheckFacts {
  return { sourceIpType: hc.SourceIpType ?? 0, ...(typeof hc.HealthSwitch === 'number' ? { healthSwitch: hc.HealthSwitch } : {}) };
}

/** Maps the CLB API's view onto the model's plain facts. */
export function clbFacts(lb: LoadBalancerInfo, listeners: readonly ListenerInfo[], hc?: LoadBalancerHealthInfo): ClbFacts {
  const healthOf = new Map(hc?.listeners.map((l) => [l.listenerId, l]) ?? []);
  return {
    loadBalancerId: lb.loadBalancerId,
    loadBalancerType: lb.type,
    addressIpVersion: lb.addressIpVersion,
    vips: lb.vips,
    ...(lb.ipv6Address ? { ipv6Address: lb.ipv6Address } : {}),
    tags: lb.tags,
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
        ...(l.healthCheck ? { healthCheck: healthCheckFacts(l.healthCheck) } : {}),
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
                  ...(r.healthCheck ? { healthCheck: healthCheckFacts(r.healthCheck) } : {}),
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
  /** How old a seeded read a round still trusts (seed). */
  private seededMaxAgeMs = 0;
  /** L4 listeners' health checks as last read, for writers that must send a listener's full HealthCheck back. */
  private readonly listeners = new Map<string, RawListener[]>();
  /** When a round last asked for each CLB (observe), so that CLBs no target names any more can be dropped (sweep). */
  private readonly used = new Map<string, number>();
  /**
   * Per CLB, the number (from `seq`, one counter for all) of the newest thing known of it: a read stored (numbered when
   * it was asked for), a write patched in, an invalidation. A read asked for before that may have been answered before
   * the write took effect, or before the newer read: it is not stored (docs/history.md "Landed on 2026-12-01,
   * sixteenth session"). Seeded entries are older than any of it.
   */
  private readonly newest = new Map<string, number>();
  private seq = 0;
  /**
   * Told of every read whose observation differs from the cached one as a plan reads it (plannedView): the work that
   * concerns that CLB, and only it, is planned again (routing.ts), the reader's own included (another of its chunks
   * or its releases may have planned on the older read). Not told: a read that finds what was cached, loopguard's own
   * writes patched in below, and a CLB's first read (a target planned before it had none, which keeps it pending).
   */
  onChange: (id: string) => void = () => undefined;

  constructor(
    private readonly clb: ClbReader,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached observation, without reading (undefined when not cached or invalidated). */
  cached(id: string): ClbObservation | undefined {
    return this.cache.get(id)?.observation;
  }

  /** When the CLB was last read (ms since the epoch), if it is cached. */
  observedAt(id: string): number | undefined {
    return this.cache.get(id)?.at;
  }

  /**
   * A listener write whose task succeeded: the cached listener now has `sourceIpType` (facts and raw struct),
   * keeping the entry's read time, so drift checks still happen on schedule.
   */
  listenerSourceWritten(id: string, listenerId: string, sourceIpType: 0 | 1): void {
    const raw = this.listeners.get(id);
    if (raw) this.listeners.set(id, raw.map((l) => (l.listenerId === listenerId ? { ...l, healthCheck: { ...(l.healthCheck ?? {}), SourceIpType: sourceIpType } } : l)));
    this.patchFacts(id, (clb) => ({
      ...clb,
      listeners: clb.listeners.map((l) => (l.listenerId === listenerId ? { ...l, healthCheck: { ...(l.healthCheck ?? {}), sourceIpType } } : l)),
    }));
  }

  /** A ModifyLoadBalancerAttributes task that succeeded: the cached CLB now has `passToTarget`. */
  passToTargetWritten(id: string, passToTarget: boolean): void {
    this.patchFacts(id, (clb) => ({ ...clb, passToTarget }));
  }

  private patchFacts(id: string, change: (clb: ClbFacts) => ClbFacts): void {
    this.newest.set(id, ++this.seq);
    const e = this.cache.get(id);
    if (e?.observation.state !== 'Found') return;
    this.cache.set(id, { ...e, observation: { state: 'Found', clb: change(e.observation.clb) } });
  }

  /** Observations for `ids`, reading from the CLB API those not read within `maxAgeMs`. */
  async observe(ids: readonly string[], maxAgeMs: number, signal?: AbortSignal): Promise<Map<string, ClbObservation>> {
    const now = this.now();
    // An id is user-writable text on the target: one that is not a CLB id names no CLB and would only risk the whole
    // DescribeLoadBalancers batch (the other targets' CLBs) on an InvalidParameter. It is never sent.
    const unique = [...new Set(ids)].filter(isClbId);
    for (const id of unique) this.used.set(id, now);
    const stale = unique.filter((id) => {
      const e = this.cache.get(id);
      // A seeded read is trusted for the checkpoint's full cycle (seed): the caller's bound follows the CLBs its drift
      // checks have counted, none yet right after a restart, and judged by it a restart read nearly every CLB again.
      return !e || now - e.at > (e.seeded ? Math.max(maxAgeMs, this.seededMaxAgeMs) : maxAgeMs);
    });
    // One DescribeLoadBalancers per 20 ids. Each caller reads its own ids: the policy round's chunks are 20
    // targets, and reading them apart keeps one chunk's reads overlapping another chunk's writes.
    if (stale.length > 0) await Promise.all(batches(stale, MAX_LOAD_BALANCER_IDS).map((b) => this.refresh(b, signal)));
    const result = new Map<string, ClbObservation>();
    for (const id of ids) result.set(id, isClbId(id) ? (this.cache.get(id)?.observation ?? { state: 'NotObserved' }) : { state: 'NotFound', loadBalancerId: id });
    return result;
  }

  /** Reads `ids` again now, however recently they were read (the drift checks due, see drift-signal.ts), 20 per call. */
  async reread(ids: readonly string[], signal?: AbortSignal): Promise<void> {
    await Promise.all(batches([...new Set(ids)], MAX_LOAD_BALANCER_IDS).map((b) => this.refresh(b, signal)));
  }

  /** The L4 listeners of a CLB as last read (full SDK HealthCheck structs). */
  rawListeners(id: string): readonly RawListener[] | undefined {
    return this.listeners.get(id);
  }

  /**
   * A previous leader's observations (the checkpoint, observation-checkpoint.ts), each with its own read time: they
   * come due for drift checks on their schedule, and a round trusts them up to `maxAgeMs` (the full cycle of the
   * checkpoint's CLBs, which kept none older). Never replaces what this process has read itself.
   */
  seed(entries: Iterable<{ id: string; at: number; observation: ClbObservation }>, maxAgeMs = 0): number {
    this.seededMaxAgeMs = maxAgeMs;
    let n = 0;
    for (const { id, at, observation } of entries) {
      if (this.cache.has(id)) continue;
      this.cache.set(id, { at, observation, seeded: true });
      n++;
    }
    return n;
  }

  /** Whether the CLB's cached observation came from the checkpoint and has not been read since. */
  seeded(id: string): boolean {
    return this.cache.get(id)?.seeded === true;
  }

  /** Every cached observation with its read time (for the checkpoint). */
  *entries(): IterableIterator<{ id: string; at: number; observation: ClbObservation }> {
    for (const [id, e] of this.cache) yield { id, at: e.at, observation: e.observation };
  }

  invalidate(id: string): void {
    this.newest.set(id, ++this.seq);
    this.cache.delete(id);
    this.listeners.delete(id);
  }

  /**
   * Drops the CLBs no round has asked for since `before` (ms since the epoch) and that `named` does not name (the
   * CLBs of the cluster's current Services and Ingresses): those of deleted targets. Without it the cache (and the
   * checkpoint made of it) would grow with every CLB the cluster ever had. A CLB a target names is never dropped,
   * however long a round works on it (an Enforce of thousands of CLBs takes longer than a few drift intervals, and
   * its writes patch the cached facts its verdicts are read from). Seeded entries no round asked for count from their
   * read time. Returns the ids dropped.
   */
  sweep(before: number, named: (id: string) => boolean = () => false): string[] {
    const dropped: string[] = [];
    for (const [id, e] of this.cache) {
      if ((this.used.get(id) ?? e.at) >= before || named(id)) continue;
      this.invalidate(id);
      dropped.push(id);
    }
    for (const [id, at] of this.used) if (at < before && !this.cache.has(id)) this.used.delete(id);
    for (const id of this.newest.keys()) if (!this.cache.has(id) && !this.used.has(id)) this.newest.delete(id);
    return dropped;
  }

  private async refresh(ids: string[], signal?: AbortSignal): Promise<void> {
    const sent = ++this.seq;
    const found = await this.clb.describeLoadBalancers(ids, { signal });
    const byId = new Map(found.map((lb) => [lb.loadBalancerId, lb]));
    const [listenerSets, healthSets] = await Promise.all([
      Promise.all(found.map((lb) => this.clb.describeListeners(lb.loadBalancerId, { signal }))),
      found.length > 0 ? this.clb.describeTargetHealth(found.map((lb) => lb.loadBalancerId), { signal }) : Promise.resolve([]),
    ]);
    const healthById = new Map(healthSets.map((h) => [h.loadBalancerId, h]));
    const at = this.now();
    // A read older than the newest known of the CLB keeps neither its answer nor its read time: the cache keeps what it
    // has, and the CLB stays due, so the next drift check reads it again. Conservative: `sent` is taken before the
    // client's throttle, so a read that reached the CLB after the write is dropped too (one more read).
    const stale = (id: string): boolean => (this.newest.get(id) ?? 0) > sent;
    found.forEach((lb, i) => {
      if (stale(lb.loadBalancerId)) return;
      const listeners = listenerSets[i] ?? [];
      this.listeners.set(lb.loadBalancerId, rawListeners(listeners));
      this.store(lb.loadBalancerId, at, sent, { state: 'Found', clb: clbFacts(lb, listeners, healthById.get(lb.loadBalancerId)) });
    });
    for (const id of ids) {
      if (byId.has(id) || stale(id)) continue;
      this.store(id, at, sent, { state: 'NotFound', loadBalancerId: id });
    }
  }

  /** A read's result: the read time always, onChange only when the observation differs from the cached one. */
  private store(id: string, at: number, seq: number, observation: ClbObservation): void {
    const before = this.cache.get(id);
    this.cache.set(id, { at, observation });
    this.newest.set(id, seq);
    // A seeded entry read the same is not news: a converged plan does not depend on whether its read was seeded; nor
    // is what no plan reads (plannedView: backend health behind a 100.64 source comes and goes with the backends).
    if (before && !isDeepStrictEqual(plannedView(before.observation), plannedView(observation))) this.onChange(id);
  }
}
