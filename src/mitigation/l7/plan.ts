// Pure: from the model's L7 desired state to the TkeServiceConfig fields loopguard holds, and the originals
// to record before writing them.
import type { OriginalsRecord } from '../../api/annotations.js';
import type { L7DesiredState } from '../../model/desired-state.js';
import type { FieldEdit } from './config-patch.js';
import { ruleKey, type OriginalsAdditions } from './originals.js';

/** The config fields the desired state asks for, plus recorded originals of fields it no longer manages. */
export function desiredEdits(desired: L7DesiredState, record: OriginalsRecord | undefined, keepaliveRejected: boolean): FieldEdit[] {
  const edits: FieldEdit[] = [];
  for (const l of desired.listeners) {
    const recorded = record?.listeners?.[l.listenerId]?.keepaliveEnable;
    // A known-missing capability: do not declare keepalive anew (TKE would only fail); keep what is declared.
    if (l.desiredKeepalive !== undefined && !(keepaliveRejected && l.desiredKeepalive === 1)) {
      edits.push({ kind: 'keepalive', protocol: l.protocol, port: l.port, value: l.desiredKeepalive });
    } else if (l.desiredKeepalive === undefined && recorded !== undefined) {
      edits.push({ kind: 'keepalive', protocol: l.protocol, port: l.port, value: recorded });
    }
    for (const r of l.rules) {
      const recordedRule = record?.rules?.[ruleKey(l.listenerId, r.locationId)]?.sourceIpType;
      const value = r.desiredSourceIpType ?? recordedRule;
      if (value !== undefined) edits.push({ kind: 'ruleSource', protocol: l.protocol, port: l.port, domain: r.domain, url: r.url, value });
    }
  }
  return edits;
}

/** Originals to record for the edits about to be written: the CLB's current values. */
export function originalsFor(desired: L7DesiredState, edits: readonly FieldEdit[]): OriginalsAdditions {
  const keepalive: Record<string, 0 | 1> = {};
  const ruleSource: Record<string, 0 | 1> = {};
  for (const e of edits) {
    const l = desired.listeners.find((x) => x.protocol.toUpperCase() === e.protocol.toUpperCase() && x.port === e.port);
    if (!l) continue;
    if (e.kind === 'keepalive') {
      if (e.value !== l.currentKeepalive) keepalive[l.listenerId] = l.currentKeepalive;
    } else {
      const r = l.rules.find((x) => x.domain === e.domain && x.url === e.url);
      if (r && e.value !== r.currentSourceIpType) ruleSource[ruleKey(l.listenerId, r.locationId)] = r.currentSourceIpType;
    }
  }
  return { keepalive, ruleSource };
}
