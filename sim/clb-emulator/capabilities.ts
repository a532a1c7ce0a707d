import { ApiError } from './errors.js';

/**
 * Account-level CLB features that Tencent gates behind a console switch or a ticket (tke-clb.md §2 "Loopback fix
 * requirements", §1 SNAT paragraph, open questions 6 and 9). The real error codes are unknown; the ones below are
 * the emulator's documented choice (sim/README.md, Assumptions).
 */
export interface Capabilities {
  /** `HealthCheck.SourceIpType = 1` (health checks from 100.64.0.0/10 instead of the VIP). */
  healthCheckSource100_64: boolean;
  /** Layer-7 `KeepaliveEnable = 1` and `SnatEnable = true` on listeners. */
  l7KeepaliveSnat: boolean;
}

export const DEFAULT_CAPABILITIES: Readonly<Capabilities> = Object.freeze({
  healthCheckSource100_64: true,
  l7KeepaliveSnat: false,
});

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
