// The gather step of a round: the snapshot the pure planner works on (src/plan/snapshot.ts), from the informer
// caches and the CLB observer. Reads only; nothing here decides.
import { targetKey, type ClbObservation, type TargetFacts } from '../../model/facts.js';
import { readRecord } from '../../model/record-registry.js';
import { configViewOf, type OrphanSnapshot, type Snapshot, type TargetSnapshot } from '../../plan/snapshot.js';
import type { Orphan, RoundDeps, RoundInput } from './deps.js';
import { recordedEnvoyProxy } from './targets.js';

/** The snapshot without its targets: the policy, the cluster, what was learned, the clock. */
export function snapshotBase(d: RoundDeps, input: Pick<RoundInput, 'owner' | 'spec' | 'profile' | 'shared' | 'ignoreSkipAnnotation'>): Omit<Snapshot, 'targets' | 'orphans'> {
  return {
    ...(input.ignoreSkipAnnotation ? { ignoreSkipAnnotation: true } : {}),
    owner: input.owner,
    spec: input.spec,
    profile: input.profile,
    capabilities: d.capabilities.snapshot(),
    configsKnown: d.tkeServiceConfigsSynced(),
    now: new Date(),
    graceMs: d.tkeGraceMs,
    shared: input.shared,
  };
}

/** One chunk's targets with their CLBs as read (`observations`), records and governing TkeServiceConfigs. */
export function gatherTargets(d: RoundDeps, chunk: readonly TargetFacts[], observations: ReadonlyMap<string, ClbObservation>): TargetSnapshot[] {
  return chunk.map((t) => {
    const clb: ClbObservation = (t.loadBalancerId ? observations.get(t.loadBalancerId) : undefined) ?? { state: 'NotObserved' };
    const at = t.loadBalancerId ? d.observer.observedAt(t.loadBalancerId) : undefined;
    const config = configViewOf(t, d.tkeServiceConfig);
    const entry = d.caches.record(t);
    // The target's ownership, from a record made for this very object; an invalid record is left alone and logged.
    const own = readRecord(entry, t);
    if (own.problem) d.logger.warn('Ignoring an invalid LoopbackRecord', { target: targetKey(t), problem: own.problem });
    // A Gateway's key goes back where its record wrote it, if it was moved to another EnvoyProxy (policy-plan.ts).
    const envoyProxy = entry && own.originals?.envoyProxy ? recordedEnvoyProxy(entry, d.caches, new Set([targetKey(t)])) : undefined;
    return { facts: t, clb, ownership: own, ...(at !== undefined ? { observedAt: at } : {}), ...(config ? { config } : {}), ...(envoyProxy ? { envoyProxy } : {}) };
  });
}

/**
 * The orphans to release, with what their release needs: Ingresses their CLB (what TKE has restored), Services
 * nothing more. Until the TkeServiceConfig cache has synced, orphaned Ingresses are not read (nothing is planned
 * for them: see Snapshot.configsKnown).
 */
export async function gatherOrphans(d: RoundDeps, orphans: readonly Orphan[], signal: AbortSignal): Promise<OrphanSnapshot[]> {
  const configsKnown = d.tkeServiceConfigsSynced();
  const ids = orphans.filter((o) => configsKnown && o.facts.kind === 'Ingress' && o.facts.loadBalancerId).map((o) => o.facts.loadBalancerId as string);
  const observations = ids.length > 0 ? await d.observer.observe(ids, d.driftScheduler.fullIntervalMs(), signal) : new Map<string, ClbObservation>();
  return orphans.map(({ facts, entry, stale, envoyProxy }) => {
    const clb = facts.loadBalancerId ? observations.get(facts.loadBalancerId) : undefined;
    const at = facts.loadBalancerId ? d.observer.observedAt(facts.loadBalancerId) : undefined;
    const config = configViewOf(facts, d.tkeServiceConfig);
    return {
      facts,
      ownership: readRecord(entry),
      ...(stale ? { stale: true } : {}),
      ...(envoyProxy ? { envoyProxy } : {}),
      ...(clb ? { clb } : {}),
      ...(at !== undefined ? { observedAt: at } : {}),
      ...(config ? { config } : {}),
    };
  });
}
