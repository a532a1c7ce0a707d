// Pure: which health-check source the CLB account gives a new listener (tencent-cloud.md §9 #3), judged from listeners
// whose source only the account can have chosen; no API reports it (docs/diagnosis.md §5 "The account's default").
import { readBool, readString, ServiceAnnotation } from '../api/annotations.js';
import { clbGate, isIpv6 } from './assess-common.js';
import { matchServiceListeners } from './assess-service.js';
import { sourceIpTypeOf } from './desired-state.js';
import { targetKey, type ClbObservation, type TargetFacts } from './facts.js';

export type AccountSource = 'Range100_64' | 'Vip' | 'Unknown';

/** Fewer listeners than this that agree say nothing about the account. */
export const MIN_WITNESSES = 2;

export interface AccountEvidence {
  facts: TargetFacts;
  clb: ClbObservation;
  /** loopguard holds a LoopbackRecord of the target. */
  recorded: boolean;
}

export interface AccountDefault {
  source: AccountSource;
  /** Witness listeners (each counted once) on 100.64.0.0/10 and on the VIP. */
  range100_64: number;
  vip: number;
  /** The targets (targetKey) whose listeners are witnesses, with the sources of their witnesses. */
  witnesses: ReadonlyMap<string, readonly (0 | 1)[]>;
}

/** The sources of a target's witness listeners (by `lb/listenerId`), or none when the target cannot witness. */
export function witnessListeners(e: AccountEvidence): Map<string, 0 | 1> {
  const out = new Map<string, 0 | 1>();
  const svc = e.facts;
  if (svc.kind !== 'Service' || svc.type !== 'LoadBalancer' || svc.loadBalancerClass) return out;
  if (e.recorded || Object.keys(svc.setByLoopguard ?? {}).length > 0) return out;
  const a = svc.annotations;
  const prevent = readBool(a, ServiceAnnotation.PreventLoopback);
  // Only a clear "false" or no annotation: an unreadable value may still be read by TKE as a request.
  if (!(prevent.kind === 'absent' || (prevent.kind === 'value' && !prevent.value))) return out;
  if ([ServiceAnnotation.TkeServiceConfig, ServiceAnnotation.TkeServiceConfigAuto, ServiceAnnotation.ExistingLoadBalancerId].some((key) => readString(a, key).kind !== 'absent')) return out;
  const gate = clbGate(svc, e.clb);
  if ('cause' in gate || isIpv6(gate.clb)) return out;
  for (const l of matchServiceListeners(svc, gate.clb).matched) {
    out.set(`${gate.clb.loadBalancerId}/${l.listenerId}`, sourceIpTypeOf(l.healthCheck?.sourceIpType));
  }
  return out;
}

export function judgeAccountDefault(evidence: readonly AccountEvidence[]): AccountDefault {
  const listeners = new Map<string, 0 | 1>();
  const witnesses = new Map<string, (0 | 1)[]>();
  for (const e of evidence) {
    const own = witnessListeners(e);
    if (own.size === 0) continue;
    for (const [id, source] of own) listeners.set(id, source);
    witnesses.set(targetKey(e.facts), [...own.values()]);
  }
  const sources = [...listeners.values()];
  const range100_64 = sources.filter((s) => s === 1).length;
  const vip = sources.length - range100_64;
  const source: AccountSource = sources.length < MIN_WITNESSES || (range100_64 > 0 && vip > 0) ? 'Unknown' : range100_64 > 0 ? 'Range100_64' : 'Vip';
  return { source, range100_64, vip, witnesses };
}
