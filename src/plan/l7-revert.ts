// Pure: reading an L7 target's originals record against the CLB (what to restore, whether TKE has restored it). Originals are CLB values as observed before loopguard's first change of each field; a value
// already recorded is never overwritten (it is the true original, later values may be loopguard's own).
import type { Originals } from '../api/originals.js';
import type { ListenerFacts, RuleFacts } from '../model/facts.js';
import type { FieldEdit, Removal } from './config-patch.js';

/** What the CLB's L7 listeners currently have, enough to map record keys (listener ids, location ids) onto config fragments. */
export type ClbListenerView = Pick<ListenerFacts, 'listenerId' | 'protocol' | 'port' | 'keepaliveEnable'> & {
  rules?: readonly Pick<RuleFacts, 'locationId' | 'domain' | 'url' | 'healthCheck'>[];
};

export interface RevertPlan {
  /** Config fields to set back to their recorded originals (declared ones and, first, those loopguard added). */
  edits: FieldEdit[];
  /** Declarations loopguard added, to take out of the config once the CLB shows the originals. */
  removals: Removal[];
  /** Whether the CLB shows every recorded original again (what TKE must have applied before the auto annotation goes). */
  restored: boolean;
}

/** The record's originals read against the CLB's L7 listeners: an entry whose listener or rule is gone has nothing to restore. */
export function revertPlan(originals: Originals, listeners: readonly ClbListenerView[]): RevertPlan {
  const plan: RevertPlan = { edits: [], removals: [], restored: true };
  for (const [id, l] of Object.entries(originals.listeners ?? {})) {
    const found = listeners.find((x) => x.listenerId === id);
    if (l.keepaliveEnable === undefined || !found) continue;
    const edit: FieldEdit = { kind: 'keepalive', protocol: found.protocol, port: found.port, value: l.keepaliveEnable };
    plan.edits.push(edit);
    if (l.keepaliveAdded !== undefined) plan.removals.push({ edit, level: l.keepaliveAdded });
    if ((found.keepaliveEnable ?? 0) !== l.keepaliveEnable) plan.restored = false;
  }
  for (const [key, r] of Object.entries(originals.rules ?? {})) {
    // A record's rule key is `<listener id>/<location id>`.
    const [lid = '', loc = ''] = key.split('/');
    const l = listeners.find((x) => x.listenerId === lid);
    const rule = l?.rules?.find((x) => x.locationId === loc);
    if (!l || !rule) continue;
    // A restore that must add `healthCheck.enable` declares the switch as the CLB has it (docs/tencent-cloud.md §1).
    const edit: FieldEdit = { kind: 'ruleSource', protocol: l.protocol, port: l.port, domain: rule.domain, url: rule.url, value: r.sourceIpType, enable: rule.healthCheck?.healthSwitch !== 0 };
    plan.edits.push(edit);
    if (r.added !== undefined || r.enableAdded) plan.removals.push({ edit, ...(r.added !== undefined ? { level: r.added } : {}), ...(r.enableAdded ? { enableAdded: true } : {}) });
    if ((rule.healthCheck?.sourceIpType ?? 0) !== r.sourceIpType) plan.restored = false;
  }
  return plan;
}
