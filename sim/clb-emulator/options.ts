import type { Capabilities } from './capabilities.js';
import { DEFAULT_CAPABILITIES, incoherentCapabilities } from './capabilities.js';
import type { FaultPlan } from './admin-types.js';
import type { TargetHealthSource } from './health.js';

/**
 * Fixed credentials of the built-in test account. They are only ever accepted by this local emulator (which binds
 * 127.0.0.1), so a constant is safer than a random key that would have to be passed around or printed.
 */
export const DEFAULT_TEST_CREDENTIALS: Readonly<{ secretId: string; secretKey: string }> = Object.freeze({
  secretId: 'AKIDloopguardEmulatorTestAccount0001',
  secretKey: 'loopguardEmulatorTestSecretKey000001',
});

/**
 * A named credential pair. Stats count calls per caller, so a benchmark can tell loopguard's calls from TKE's
 * even though both spend the one account's quota.
 */
export interface CallerCredentials {
  /** Name in the stats (`byCaller`), e.g. `loopguard`, `tke`. Several pairs may share a name. */
  caller: string;
  secretId: string;
  secretKey: string;
}

/** Caller of requests that did not authenticate (missing/garbled Authorization, unknown SecretId, bad signature). */
export const UNAUTHENTICATED_CALLER = '(unauthenticated)';

export interface EmulatorOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /**
   * SecretId → SecretKey. All keys belong to one account: state, quota and capabilities are shared. Calls made
   * with these keys are attributed to the SecretId itself; use `callers` to name them.
   */
  accounts: Record<string, string>;
  /** Named credential pairs, accepted next to (and listed before) `accounts`; same single account. */
  callers: CallerCredentials[];
  /** The only region served; requests naming another one get `InvalidParameter.RegionNotFound`. */
  region: string;
  /** How long an async write stays `Status 2` before it completes. */
  taskDurationMs: number;
  /** Default per-action request rate (token bucket, burst = rps). 0 disables throttling. */
  rps: number;
  /** Per-action overrides of `rps`, e.g. `{ ModifyListener: 5 }`. */
  rpsPerAction: Record<string, number>;
  /** Overrides of the account capabilities (defaults: 100.64 source on, L7 keepalive/SNAT off, account `legacy`). */
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
  /**
   * Target health from real probes (the data-plane lab: lab/health-oracle.ts) instead of the modelled rule
   * (`SourceIpType` 0 and the VIP bound → Dead, health.ts). Default undefined: the rule. In-process only.
   */
  targetHealth: TargetHealthSource | undefined;
}

export const DEFAULT_OPTIONS: Readonly<Omit<EmulatorOptions, 'accounts' | 'callers' | 'capabilities' | 'rpsPerAction'>> = Object.freeze({
  port: 0,
  region: 'ap-guangzhou',
  taskDurationMs: 300,
  rps: 20,
  faultSeed: 1,
  faults: undefined,
  healthConvergenceMs: 0,
  maxClockSkewSec: 300,
  log: () => undefined,
  targetHealth: undefined,
});

export interface ResolvedOptions extends Omit<EmulatorOptions, 'capabilities' | 'callers'> {
  capabilities: Capabilities;
  /** Every accepted pair in configuration order (`callers`, then `accounts`); never empty. */
  callers: CallerCredentials[];
  /** SecretId → caller name, for attributing verified requests. */
  callerOf: Record<string, string>;
}

/**
 * Merges `callers` and `accounts` into one credential list (the default test account when both are empty).
 * A SecretId given twice with different keys or caller names is a configuration error, not a silent override.
 */
function resolveCallers(options: Partial<EmulatorOptions>): CallerCredentials[] {
  const listed = [
    ...(options.callers ?? []),
    ...Object.entries(options.accounts ?? {}).map(([secretId, secretKey]) => ({ caller: secretId, secretId, secretKey })),
  ];
  const all = listed.length > 0 ? listed : [{ caller: DEFAULT_TEST_CREDENTIALS.secretId, ...DEFAULT_TEST_CREDENTIALS }];
  const seen = new Map<string, CallerCredentials>();
  for (const c of all) {
    if (!c.caller || !c.secretId || !c.secretKey) throw new Error('every caller needs a non-empty caller name, SecretId and SecretKey');
    if (c.caller === UNAUTHENTICATED_CALLER) throw new Error(`caller name ${UNAUTHENTICATED_CALLER} is reserved`);
    const prev = seen.get(c.secretId);
    if (prev && (prev.secretKey !== c.secretKey || prev.caller !== c.caller)) {
      throw new Error(`SecretId ${c.secretId} is configured twice with different keys or caller names`);
    }
    seen.set(c.secretId, { ...c });
  }
  return [...seen.values()];
}

export function resolveOptions(options: Partial<EmulatorOptions> = {}): ResolvedOptions {
  const callers = resolveCallers(options);
  const capabilities = { ...DEFAULT_CAPABILITIES, ...(options.capabilities ?? {}) };
  const incoherent = incoherentCapabilities(capabilities);
  if (incoherent) throw new Error(`capabilities: ${incoherent}`);
  return {
    port: options.port ?? DEFAULT_OPTIONS.port,
    accounts: Object.fromEntries(callers.map((c) => [c.secretId, c.secretKey])),
    callers,
    callerOf: Object.fromEntries(callers.map((c) => [c.secretId, c.caller])),
    region: options.region ?? DEFAULT_OPTIONS.region,
    taskDurationMs: options.taskDurationMs ?? DEFAULT_OPTIONS.taskDurationMs,
    rps: options.rps ?? DEFAULT_OPTIONS.rps,
    rpsPerAction: { ...(options.rpsPerAction ?? {}) },
    capabilities,
    faultSeed: options.faultSeed ?? DEFAULT_OPTIONS.faultSeed,
    faults: options.faults,
    healthConvergenceMs: options.healthConvergenceMs ?? DEFAULT_OPTIONS.healthConvergenceMs,
    maxClockSkewSec: options.maxClockSkewSec ?? DEFAULT_OPTIONS.maxClockSkewSec,
    log: options.log ?? DEFAULT_OPTIONS.log,
    targetHealth: options.targetHealth,
  };
}
