import { ApiError } from './errors.js';

/**
 * When the account started using CLB, which decides its default health-check source (tencent-cloud.md §9 #3, CLB doc
 * intl 214/53639): `since2023` accounts (new to CLB since 2023-02-24) get the 100.64 source by default, `legacy`
 * accounts the VIP source — the at-risk default loopguard exists for.
 */
export const ACCOUNT_PROFILES = ['legacy', 'since2023'] as const;
export type AccountProfile = (typeof ACCOUNT_PROFILES)[number];

export const isAccountProfile = (value: unknown): value is AccountProfile => (ACCOUNT_PROFILES as readonly unknown[]).includes(value);

/**
 * Account-level CLB properties: features Tencent gates behind a console switch or a ticket (tencent-cloud.md §2
 * "Loopback fix requirements", §1 SNAT paragraph, open questions 6 and 9) and the account's profile. The real
 * error codes are unknown; the ones below are the emulator's documented choice (sim/README.md, Assumptions).
 */
export interface Capabilities {
  /** `HealthCheck.SourceIpType = 1` (health checks from 100.64.0.0/10 instead of the VIP). */
  healthCheckSource100_64: boolean;
  /** Layer-7 `KeepaliveEnable = 1` and `SnatEnable = true` on listeners. */
  l7KeepaliveSnat: boolean;
  /** The account's age, which sets the health-check source a check gets when a write does not choose one. */
  account: AccountProfile;
}

export const DEFAULT_CAPABILITIES: Readonly<Capabilities> = Object.freeze({
  healthCheckSource100_64: true,
  l7KeepaliveSnat: false,
  account: 'legacy',
});

/** The `SourceIpType` a health check gets when the request leaves it out (IPv6 CLBs always 0, §9 #4). */
export function accountSourceIpType(caps: Capabilities): 0 | 1 {
  return caps.account === 'since2023' ? 1 : 0;
}

/**
 * Why a set of capabilities no account can have, or undefined. An account whose default source is 100.64 uses it
 * on every listener it creates: it cannot lack the capability (`legacy` without it is an old account that still
 * needs the ticket, the world of the TKE loopback doc).
 */
export function incoherentCapabilities(caps: Capabilities): string | undefined {
  if (!isAccountProfile(caps.account)) return `account must be one of ${ACCOUNT_PROFILES.join(', ')}`;
  if (caps.account === 'since2023' && !caps.healthCheckSource100_64) {
    return 'account since2023 has the 100.64 health-check source by default, so it cannot lack healthCheckSource100_64';
  }
  return undefined;
}

export const SOURCE_100_64_DISABLED_CODE = 'UnauthorizedOperation';
export const SOURCE_100_64_DISABLED_MESSAGE =
  'The account has not enabled non-VIP health-check source IP (SourceIpType=1, 100.64.0.0/10); ' +
  'enable it in the CLB console or file a ticket.';

export const KEEPALIVE_SNAT_DISABLED_CODE = 'FailedOperation';
export const KEEPALIVE_SNAT_DISABLED_MESSAGE =
  'KeepaliveEnable/SnatEnable requires the CLB layer-7 SNAT and keepalive capability; apply for it by ticket.';

export function requireSource100_64(caps: Capabilities): void {
  if (!caps.healthCheckSource100_64) {
    throw new ApiError(SOURCE_100_64_DISABLED_CODE, SOURCE_100_64_DISABLED_MESSAGE);
  }
}

export function requireKeepaliveSnat(caps: Capabilities): void {
  if (!caps.l7KeepaliveSnat) {
    throw new ApiError(KEEPALIVE_SNAT_DISABLED_CODE, KEEPALIVE_SNAT_DISABLED_MESSAGE);
  }
}
