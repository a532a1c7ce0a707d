// Mapping between a TkeServiceConfig `healthCheck` (lowerCamel) and the CLB API `HealthCheck` struct
// (docs/tencent-cloud.md §1 field list, §3 HealthCheck struct). Pure.
import type { HealthCheck } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type { MissingEnableReading } from './health-check-enable.js';
import type { TkeHealthCheck } from './tke-service-config.js';

type NumberField = 'IntervalTime' | 'HealthNum' | 'UnHealthNum' | 'TimeOut' | 'SourceIpType' | 'HttpCode';
type StringField = 'HttpCheckPath' | 'HttpCheckDomain' | 'HttpCheckMethod';

const NUMBER_FIELDS: ReadonlyArray<[keyof TkeHealthCheck & string, NumberField]> = [
  ['intervalTime', 'IntervalTime'],
  ['healthNum', 'HealthNum'],
  ['unHealthNum', 'UnHealthNum'],
  ['timeout', 'TimeOut'],
  ['sourceIpType', 'SourceIpType'],
  ['httpCode', 'HttpCode'],
];
const STRING_FIELDS: ReadonlyArray<[keyof TkeHealthCheck & string, StringField]> = [
  ['httpCheckPath', 'HttpCheckPath'],
  ['httpCheckDomain', 'HttpCheckDomain'],
  ['httpCheckMethod', 'HttpCheckMethod'],
];

/**
 * The CLB fields a config declares; undeclared ones are absent, so they are never touched. A fragment without
 * `enable` declares the check off in reading `switchOff` (health-check-enable.ts); in reading `refused` such a
 * config never gets here (syncConfig refuses it whole).
 */
export function declaredHealthCheck(hc: TkeHealthCheck | undefined, missingEnable: MissingEnableReading = 'refused'): HealthCheck {
  const out: HealthCheck = {};
  if (!hc) return out;
  if (typeof hc.enable === 'boolean') out.HealthSwitch = hc.enable ? 1 : 0;
  else if (missingEnable === 'switchOff') out.HealthSwitch = 0;
  for (const [from, to] of NUMBER_FIELDS) {
    const v = hc[from];
    if (typeof v === 'number') out[to] = v;
  }
  for (const [from, to] of STRING_FIELDS) {
    const v = hc[from];
    if (typeof v === 'string') out[to] = to === 'HttpCheckMethod' ? v.toUpperCase() : v;
  }
  return out;
}

/** The CLB's struct without the nulls DescribeListeners returns for fields that do not apply. */
export function withoutNulls(hc: HealthCheck | null | undefined): HealthCheck {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(hc ?? {})) if (v !== null && v !== undefined) out[k] = v;
  return out as HealthCheck;
}

const same = (key: string, a: unknown, b: unknown): boolean =>
  key === 'HttpCheckMethod' && typeof a === 'string' && typeof b === 'string' ? a.toUpperCase() === b.toUpperCase() : a === b;

/** True when a declared field disagrees with the CLB. */
export function healthCheckDiffers(actual: HealthCheck | null | undefined, declared: HealthCheck): boolean {
  const current = withoutNulls(actual) as Record<string, unknown>;
  return Object.entries(declared).some(([k, v]) => !same(k, current[k], v));
}

/**
 * The full struct to send: the CLB's current values with the declared ones laid over them. ModifyListener /
 * ModifyRule reset omitted HealthCheck fields to defaults (the emulator's strict model of tencent-cloud.md open
 * question 4), so a partial struct would silently undo settings nobody declared.
 */
export function fullHealthCheck(actual: HealthCheck | null | undefined, declared: HealthCheck): HealthCheck {
  return { ...withoutNulls(actual), ...declared };
}

/**
 * A config fragment mirroring the CLB, as TKE writes into auto-generated configs (live export in tencent-cloud.md §1:
 * enable, intervalTime, timeout, healthNum, unHealthNum, sourceIpType, and for L7 rules httpCode and the HTTP
 * check fields).
 */
export function mirrorHealthCheck(actual: HealthCheck | null | undefined, layer7: boolean): TkeHealthCheck {
  const hc = withoutNulls(actual);
  const out: TkeHealthCheck = { enable: (hc.HealthSwitch ?? 1) === 1 };
  const numbers: ReadonlyArray<[keyof TkeHealthCheck & string, NumberField]> = layer7
    ? NUMBER_FIELDS
    : NUMBER_FIELDS.filter(([, to]) => to !== 'HttpCode');
  for (const [to, from] of numbers) {
    const v = hc[from];
    if (typeof v === 'number') out[to] = v;
  }
  if (layer7) {
    for (const [to, from] of STRING_FIELDS) {
      const v = hc[from];
      if (typeof v === 'string' && v !== '') out[to] = from === 'HttpCheckMethod' ? v.toUpperCase() : v;
    }
  }
  return out;
}

/**
 * TKE's own view of an L4 listener's health check, for sync scope `all` (tencent-cloud.md §9 #2: console edits to
 * listeners of CLBs TKE manages "will be overwritten during automatic synchronization"): what it creates — the
 * check on, CLB's documented defaults (§3 HealthCheck struct; CheckType by protocol) — with a TkeServiceConfig's
 * declared fields laid over it. `declared.SourceIpType` carries the source TKE itself wants (100.64 on
 * prevent-loopback); without one the check has the account's default source, `accountSourceIpType`.
 */
export function tkeL4HealthCheck(protocol: string | undefined, declared: HealthCheck, accountSourceIpType: number): HealthCheck {
  return {
    HealthSwitch: 1,
    TimeOut: 2,
    IntervalTime: 5,
    HealthNum: 3,
    UnHealthNum: 3,
    CheckType: protocol === 'UDP' ? 'PING' : 'TCP',
    SourceIpType: accountSourceIpType,
    ...declared,
  };
}

/**
 * True when the CLB's check is not exactly `view`: a field differs, or the CLB has a field set that the view
 * leaves unset (a console user's CheckPort, say). Used for scope `all`, so a resync writes only on a difference.
 */
export function healthCheckIsNot(actual: HealthCheck | null | undefined, view: HealthCheck): boolean {
  const current = withoutNulls(actual) as Record<string, unknown>;
  const wanted = view as Record<string, unknown>;
  const keys = new Set([...Object.keys(current), ...Object.keys(wanted)]);
  return [...keys].some((k) => !same(k, current[k], wanted[k]));
}
