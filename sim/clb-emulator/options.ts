import type { Capabilities } from './capabilities.js';
import { DEFAULT_CAPABILITIES } from './capabilities.js';
import type { FaultPlan } from './admin-types.js';

/**
 * Fixed credentials of the built-in test account. They are only ever accepted by this local emulator (which binds
 * 127.0.0.1), so a constant is safer than a random key that would have to be passed around or printed.
 */
export const DEFAULT_TEST_CREDENTIALS: Readonly<{ secretId: string; secretKey: string }> = Object.freeze({
  secretId: 'AKIDloopguardEmulatorTestAccount0001',
  secretKey: 'loopguardEmulatorTestSecretKey000001',
});

export interface EmulatorOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** SecretId → SecretKey. All keys belong to one account: state, quota and capabilities are shared. */
  accounts: Record<string, string>;
  /** The only region served; requests naming another one get `InvalidParameter.RegionNotFound`. */
  region: string;
  /** How long an async write stays `Status 2` before it completes. */
  taskDurationMs: number;
  /** Default per-action request rate (token bucket, burst = rps). 0 disables throttling. */
  rps: number;
  /** Per-action overrides of `rps`, e.g. `{ ModifyListener: 5 }`. */
  rpsPerAction: Record<string, number>;
  /** Overrides of the account capabilities (defaults: 100.64 source on, L7 keepalive/SNAT off). */
  capabilities: Partial<Capabilities>;
  /** Seed of the fault RNG when a fault plan does not give its own. */
  faultSeed: number;
  /** Fault plan active from start-up (normally set later through the admin API). */
  faults: FaultPlan | undefined;
  /** After a health-check change, targets report `Unknown` for this long (models probe convergence). */
  healthConvergenceMs: number;
  /** Allowed |now − X-TC-Timestamp|, seconds (Tencent: 5 minutes). */
  maxClockSkewSec: number;
  /** Log sink for the few lines the emulator writes; never receives secrets. Default: silent. */
  log: (line: string) => void;
}

export const DEFAULT_OPTIONS: Readonly<Omit<EmulatorOptions, 'accounts' | 'capabilities' | 'rpsPerAction'>> = Object.freeze({
  port: 0,
  region: 'ap-guangzhou',
  taskDurationMs: 300,
  rps: 20,
  faultSeed: 1,
  faults: undefined,
  healthConvergenceMs: 0,
  maxClockSkewSec: 300,
  log: () => undefined,
});

export interface ResolvedOptions extends Omit<EmulatorOptions, 'capabilities'> {
  capabilities: Capabilities;
}

export function resolveOptions(options: Partial<EmulatorOptions> = {}): ResolvedOptions {
  const accounts =
    options.accounts && Object.keys(options.accounts).length > 0
      ? { ...options.accounts }
      : { [DEFAULT_TEST_CREDENTIALS.secretId]: DEFAULT_TEST_CREDENTIALS.secretKey };
  return {
    port: options.port ?? DEFAULT_OPTIONS.port,
    accounts,
    region: options.region ?? DEFAULT_OPTIONS.region,
    taskDurationMs: options.taskDurationMs ?? DEFAULT_OPTIONS.taskDurationMs,
    rps: options.rps ?? DEFAULT_OPTIONS.rps,
    rpsPerAction: { ...(options.rpsPerAction ?? {}) },
    capabilities: { ...DEFAULT_CAPABILITIES, ...(options.capabilities ?? {}) },
    faultSeed: options.faultSeed ?? DEFAULT_OPTIONS.faultSeed,
    faults: options.faults,
    healthConvergenceMs: options.healthConvergenceMs ?? DEFAULT_OPTIONS.healthConvergenceMs,
    maxClockSkewSec: options.maxClockSkewSec ?? DEFAULT_OPTIONS.maxClockSkewSec,
    log: options.log ?? DEFAULT_OPTIONS.log,
  };
}
