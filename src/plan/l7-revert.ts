// Pure: reading an L7 target's originals record against the CLB (what to restore, whether TKE has restored it). Originals are CLB values as observed before loopguard's first change of each field; a value
// already recorded is never overwritten (it is the true original, later values may be loopguard's own).
import type { Originals } from '../api/originals.js';
import type { ClbFacts, ListenerFacts, RuleFacts } from '../model/facts.js';
import type { FieldEdit, Removal } from './config-patch.js';

/** What the CLB currently has, enough to map record keys (listener ids, location ids) onto config fragments. */
export type ClbListenerView = Pick<ListenerFacts, 'listenerId' | 'protocol' | 'port' | 'keepaliveEnable'> & {
  rules?: readonly Pick<RuleFacts, 'locationId' | 'domain' | 'url' | 'healthCheck'>[];
};

export interface RevertPlan {
  /** Config fields to set back to their recorded originals (declared ones and, first, those loopguard added). */
  edits: FieldEdit[];
  /** Declarations loopguard added, to take out of the config once the CLB shows the originals. */
  removals: Removal[];
}

/** The listener and rule a record's rule key (`<listener id>/<location id>`) names on the CLB, as far as they exist. */
function ruleAt(listeners: readonly ClbListenerView[], key: string) {
  const [lid = '', loc = ''] = key.split('/');
  const l = listeners.find((x) => x.listenerId === lid);
  return { l, rule: l?.rules?.find((x) => x.locationId === loc) };
}

export function revertPlan(originals: Originals, listeners: readonly ClbListenerView[]): RevertPlan {
  const edits: FieldEdit[] = [];
  const removals: Removal[] = [];
  for (const [id, l] of Object.entries(originals.listeners ?? {})) {
    const found = listeners.find((x) => x.listenerId === id);
    // An entry whose listener is gone from the CLB has nothing to restore.
    if (l.keepaliveEnable === undefined || !found) continue;
    const edit: FieldEdit = { kind: 'keepalive', protocol: found.protocol, port: found.port, value: l.keepaliveEnable };
    edits.push(edit);
    if (l.keepaliveAdded !== undefined) removals.push({ edit, level: l.keepaliveAdded });
  }
  for (const [key, r] of Object.entries(originals.rules ?? {})) {
    const { l, rule } = ruleAt(listeners, key);
    if (!l || !rule) continue;
    // A restore that must add `healthCheck.enable` declares the switch as the CLB has it (docs/tencent-cloud.md §1).
    const edit: FieldEdit = { kind: 'ruleSource', protocol: l.protocol, port: l.port, domain: rule.domain, url: rule.url, value: r.sourceIpType, enable: rule.healthCheck?.healthSwitch !== 0 };
    edits.push(edit);
    if (r.added !== undefined || r.enableAdded) removals.push({ edit, ...(r.added !== undefined ? { level: r.added } : {}), ...(r.enableAdded ? { enableAdded: true } : {}) });
  }
  return { edits, removals };
}

/** Whether the CLB shows every recorded original again (what TKE must have applied before the auto annotation goes). */
export function clbRestored(originals: Originals, listeners: readonly ClbListenerView[]): boolean {
  for (const [id, l] of Object.entries(originals.listeners ?? {})) {
    const found = listeners.find((x) => x.listenerId === id);
    if (found && l.keepaliveEnable !== undefined && (found.keepaliveEnable ?? 0) !== l.keepaliveEnable) return false;
  }
  for (const [key, r] of Object.entries(originals.rules ?? {})) {
    const { rule } = ruleAt(listeners, key);
    if (rule && (rule.healthCheck?.sourceIpType ?? 0) !== r.sourceIpType) return false;
  }
  return true;
}

/** The CLB's L7 listeners, which the release planners read. */
export function listenerViews(clb: ClbFacts | undefined): ClbListenerView[] {
  return (clb?.listeners ?? []).filter((l) => l.protocol === 'HTTP' || l.protocol === 'HTTPS');
}
