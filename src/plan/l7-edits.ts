// Pure: from the model's L7 desired state to the TkeServiceConfig fields loopguard holds, and the originals
// to record before writing them.
import type { Originals } from '../api/originals.js';
import type { L7DesiredState } from '../model/desired-state.js';
import { addedLevel, declaredValue, enableMissing, type FieldEdit } from './config-patch.js';
import { ruleKey } from '../api/originals.js';

/** Capabilities the account refused (`AccountCapabilities`): such values are not declared anew. */
export interface RejectedCapabilities {
  keepalive: boolean;
  range100_64: boolean;
}

/**
 * The config fields the desired state asks for, plus recorded originals of fields it no longer manages. A value
 * the account has refused is not declared anew (TKE would only fail, as the model's blocker says); what is
 * declared already stays.
 */
export function desiredEdits(desired: L7DesiredState, originals: Originals | undefined, rejected: RejectedCapabilities): FieldEdit[] {
  const edits: FieldEdit[] = [];
  const wanted = <T extends 0 | 1>(desiredValue: T | undefined, recorded: T | undefined, refused: boolean): T | undefined =>
    desiredValue === undefined ? recorded : refused && desiredValue === 1 ? undefined : desiredValue;
  for (const l of desired.listeners) {
    const keepalive = wanted(l.desiredKeepalive, originals?.listeners?.[l.listenerId]?.keepaliveEnable, rejected.keepalive);
    if (keepalive !== undefined) edits.push({ kind: 'keepalive', protocol: l.protocol, port: l.port, value: keepalive });
    for (const r of l.rules) {
      const value = wanted(r.desiredSourceIpType, originals?.rules?.[ruleKey(l.listenerId, r.locationId)]?.sourceIpType, rejected.range100_64);
      // `enable` is the rule's switch as the CLB has it: declaring the source never turns a check on or off.
      if (value !== undefined) edits.push({ kind: 'ruleSource', protocol: l.protocol, port: l.port, domain: r.domain, url: r.url, value, enable: r.currentHealthSwitch !== 0 });
    }
  }
  return edits;
}

/**
 * Originals to record for the edits about to be written: the CLB's current values, for fields whose value
 * changes and for fields the config does not declare yet (with what loopguard adds to declare them, so the
 * release can take it out again, and whether it adds `healthCheck.enable` to a fragment that lacks it). Without
 * `config` every field counts as declared.
 */
export function originalsFor(desired: L7DesiredState, edits: readonly FieldEdit[], config?: { spec: unknown; vip: string | undefined }): Originals {
  const listeners: NonNullable<Originals['listeners']> = {};
  const rules: NonNullable<Originals['rules']> = {};
  for (const e of edits) {
    const l = desired.listeners.find((x) => x.protocol.toUpperCase() === e.protocol.toUpperCase() && x.port === e.port);
    if (!l) continue;
    const added = config ? addedLevel(config.spec, e, config.vip) : undefined;
    if (e.kind === 'keepalive') {
      if (e.value !== l.currentKeepalive || added !== undefined) {
        listeners[l.listenerId] = { keepaliveEnable: l.currentKeepalive, ...(added !== undefined ? { keepaliveAdded: added } : {}) };
      }
    } else {
      const r = l.rules.find((x) => x.domain === e.domain && x.url === e.url);
      if (!r) continue;
      const enableAdded = config ? enableMissing(config.spec, e, config.vip) : false;
      // Only `enable` added to a fragment that declares the wanted source already: the source is the user's, so it is
      // its own original (the revert leaves it and takes out `enable` alone).
      const usersSource = enableAdded && config !== undefined && declaredValue(config.spec, e, config.vip) === e.value;
      if (e.value !== r.currentSourceIpType || added !== undefined || enableAdded) {
        const sourceIpType = usersSource ? e.value : r.currentSourceIpType;
        rules[ruleKey(l.listenerId, r.locationId)] = { sourceIpType, ...(added !== undefined ? { added } : {}), ...(enableAdded ? { enableAdded } : {}) };
      }
    }
  }
  return { v: 1, ...(Object.keys(listeners).length > 0 ? { listeners } : {}), ...(Object.keys(rules).length > 0 ? { rules } : {}) };
}
