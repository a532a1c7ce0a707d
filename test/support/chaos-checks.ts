// What the chaos suite judges after each restart: the converged states (every target mitigated with its
// originals recorded; or every original restored exactly and loopguard's traces gone) and, from the emulator's
// write log, the effective writes per listener and whether two replicas ever wrote one listener in turn.
// The state readers return what is still missing ([] = converged), so a wait's timeout says how far it got.
import type { WriteLogEntry } from '../../sim/clb-emulator/index.js';
import { RECORD_PLURAL, TARGET_NAMESPACE_LABEL, type LoopbackRecord } from '../../src/api/loopbackrecord.js';
import type { ChaosWorld } from './chaos-world.js';
import { readPolicy } from './policy.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const GROUP = { group: 'loopguard.dev', version: 'v1alpha1', plural: RECORD_PLURAL };

async function recordsOf(world: ChaosWorld): Promise<Map<string, LoopbackRecord>> {
  const list = (await world.custom.listClusterCustomObject({ ...GROUP, labelSelector: `${TARGET_NAMESPACE_LABEL}=${world.ns}` })) as { items: LoopbackRecord[] };
  return new Map(list.items.map((r) => [r.spec.target.name, r]));
}

async function listenersNow(world: ChaosWorld): Promise<Map<string, { SourceIpType: number; hc: unknown }>> {
  const out = new Map<string, { SourceIpType: number; hc: unknown }>();
  for (const lb of (await world.tke.emulator.admin.state()).loadBalancers) {
    for (const l of lb.Listeners) if (l.HealthCheck) out.set(`${lb.LoadBalancerId}/${l.ListenerId}`, { SourceIpType: l.HealthCheck.SourceIpType, hc: l.HealthCheck });
  }
  return out;
}

/** What keeps Enforce from being converged: every target Mitigated, every listener on 100.64, originals recorded. */
export async function enforceGaps(world: ChaosWorld): Promise<string[]> {
  const gaps: string[] = [];
  const policy = await readPolicy(world.policy);
  const ready = policy?.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True' || policy?.status?.observedGeneration !== policy?.metadata.generation) gaps.push(`policy not Ready at its generation (${ready?.reason ?? 'no status'})`);
  const counts = policy?.status?.counts;
  if (counts?.mitigated !== world.services.length) gaps.push(`mitigated ${counts?.mitigated ?? 0}/${world.services.length}`);
  const now = await listenersNow(world);
  const unswitched = Object.keys(world.originals).filter((k) => now.get(k)?.SourceIpType !== 1);
  if (unswitched.length > 0) gaps.push(`listeners not on 100.64: ${unswitched.length}`);
  const services = (await world.core.listNamespacedService({ namespace: world.ns })).items;
  const unannotated = services.filter((s) => s.metadata?.annotations?.[PREVENT] !== 'true').map((s) => s.metadata?.name);
  if (unannotated.length > 0) gaps.push(`without prevent-loopback: ${unannotated.join(',')}`);
  const records = await recordsOf(world);
  for (const name of world.services) {
    const lb = world.lbOf[name] ?? '';
    const originals = records.get(name)?.spec.originals;
    if (!originals) {
      gaps.push(`no record for ${name}`);
      continue;
    }
    if (originals.loadBalancerId !== lb) gaps.push(`record of ${name} names CLB ${originals.loadBalancerId ?? '(none)'}, not ${lb}`);
    for (const [key, hc] of Object.entries(world.originals)) {
      if (!key.startsWith(`${lb}/`)) continue;
      const recorded = originals.listeners?.[key.slice(lb.length + 1)]?.sourceIpType;
      if (recorded !== hc.SourceIpType) gaps.push(`lost original of ${key}: recorded ${String(recorded)}, was ${hc.SourceIpType}`);
    }
  }
  return gaps;
}

/** What keeps a revert from being done: the policy gone, every health check exactly as TKE made it, no traces. */
export async function revertGaps(world: ChaosWorld): Promise<string[]> {
  const gaps: string[] = [];
  const policy = await readPolicy(world.policy);
  if (policy) gaps.push(`policy still there (finalizers ${JSON.stringify(policy.metadata.finalizers ?? [])})`);
  const now = await listenersNow(world);
  const differing = Object.entries(world.originals).filter(([k, hc]) => JSON.stringify(now.get(k)?.hc) !== JSON.stringify(hc));
  if (differing.length > 0) gaps.push(`not restored: ${differing.map(([k]) => k).slice(0, 5).join(', ')}${differing.length > 5 ? ` (+${differing.length - 5})` : ''}`);
  for (const s of (await world.core.listNamespacedService({ namespace: world.ns })).items) {
    const left = Object.keys(s.metadata?.annotations ?? {}).filter((k) => k === PREVENT || k.startsWith('loopguard.dev/'));
    if (left.length > 0) gaps.push(`${s.metadata?.name} keeps ${left.join(',')}`);
  }
  const records = await recordsOf(world);
  if (records.size > 0) gaps.push(`records left: ${records.size}`);
  return gaps;
}

export const listenerOf = (e: WriteLogEntry): string => `${e.loadBalancerId}/${e.listenerId}${e.locationId ? `/${e.locationId}` : ''}`;
export const isEffective = (e: WriteLogEntry): boolean => e.status === 'succeeded' && e.changed.length > 0;

/** Effective writes per listener (succeeded and changed a value), by every caller `counted` accepts. */
export function effectiveWrites(log: readonly WriteLogEntry[], counted: (caller: string) => boolean = () => true): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of log) if (isEffective(e) && counted(e.caller)) out.set(listenerOf(e), (out.get(listenerOf(e)) ?? 0) + 1);
  return out;
}

/** Listeners written more than once effectively: each a violation of "≤ 1 effective write per listener". */
export function doubleWrites(log: readonly WriteLogEntry[], counted?: (caller: string) => boolean): string[] {
  return [...effectiveWrites(log, counted)].filter(([, n]) => n > 1).map(([k, n]) => `${k}: ${n} effective writes`);
}

/**
 * "Never two writers": per listener, the writers (of those `counted`) in log order, runs collapsed, must not
 * come back to an earlier one (A, A, B is a hand-over; A, B, A is two writers taking turns). Every write
 * counts here, effective or not: a write sent at all by a replica that is not the leader is the fault.
 */
export function interleavedWriters(log: readonly WriteLogEntry[], counted: (caller: string) => boolean): string[] {
  const runs = new Map<string, string[]>();
  for (const e of log) {
    if (!counted(e.caller)) continue;
    const seq = runs.get(listenerOf(e)) ?? [];
    if (seq[seq.length - 1] !== e.caller) seq.push(e.caller);
    runs.set(listenerOf(e), seq);
  }
  return [...runs].filter(([, seq]) => new Set(seq).size !== seq.length).map(([k, seq]) => `${k}: ${seq.join(' → ')}`);
}
