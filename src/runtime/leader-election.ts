// Lease-based leader election after client-go's tools/leaderelection (controller-conventions.md §1.6, §3.7):
// - a lease is valid while `leaseDuration` has not passed since *we observed* its record change (we never trust
//   the holder's clock);
// - the leader renews every `retryPeriod` and steps down if it could not renew within `renewDeadline`;
// - updates carry the resourceVersion, so of two candidates racing for an expired lease exactly one wins (409);
// - on shutdown the leader releases the lease (empty holder, 1 s duration) so a standby takes over at once.
import { ApiException, CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  /** Called once when leadership is lost (not on a voluntary release). The process should exit. */
  onStoppedLeading: () => void;
  logger?: { info(msg: string, meta?: Record<string, unknown>): void; warn(msg: string, meta?: Record<string, unknown>): void };
}

export const LEASE_DEFAULTS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** client-go requires leaseDuration > renewDeadline > 1.2 × retryPeriod. */
export function validateLeaseTimings(t: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }): void {
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) throw new Error('lease duration must be greater than the renew deadline');
  if (!(t.renewDeadlineMs > 1.2 * t.retryPeriodMs)) throw new Error('renew deadline must be greater than 1.2 × the retry period');
}

function status(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/**
 * Lease times are MicroTime: the apiserver parses them with the layout 2006-01-02T15:04:05.000000Z07:00 and
 * rejects client-node's Date serialization (toISOString, milliseconds) with 400 — found by the integration test.
 * The generated serializer passes non-Date values through untouched, so we hand it the string it should send.
 */
function microTime(d: Date | string | undefined): Date {
  // What we read back may be a Date or the raw string, depending on the deserializer's format handling.
  const iso = d === undefined ? new Date().toISOString() : typeof d === 'string' ? d : d.toISOString();
  return iso.replace(/\.(\d{3})Z$/, '.$1000Z').replace(/:(\d{2})Z$/, ':$1.000000Z') as unknown as Date;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly t: typeof LEASE_DEFAULTS;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenew = 0;
  /** The record we last saw and when we saw it change, by our own clock. */
  private observed: { key: string; at: number } | undefined;

  constructor(
    kc: KubeConfig,
    private readonly options: LeaderElectionOptions,
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
    this.t = {
      leaseDurationMs: options.leaseDurationMs ?? LEASE_DEFAULTS.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs ?? LEASE_DEFAULTS.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs ?? LEASE_DEFAULTS.retryPeriodMs,
    };
    validateLeaseTimings(this.t);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.stopped = false;
    void this.tick();
  }

  /** Stops campaigning; a leader releases the lease so that a standby can take over without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.api.readNamespacedLease({ name: this.options.name, namespace: this.options.namespace });
      if (lease.spec?.holderIdentity !== this.options.identity) return;
      lease.spec = {
        ...lease.spec,
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        acquireTime: microTime(lease.spec.acquireTime),
        renewTime: microTime(new Date()),
      };
      await this.api.replaceNamespacedLease({ name: this.options.name, namespace: this.options.namespace, body: lease });
      this.options.logger?.info('Released leader lease', { lease: this.options.name });
    } catch (err) {
      this.options.logger?.warn('Could not release leader lease', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    // Jitter like client-go's wait.JitterUntil so that candidates do not retry in lockstep.
    this.timer = setTimeout(() => void this.tick(), ms * (1 + Math.random() * 0.2));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (err) {
      this.options.logger?.warn('Leader election attempt failed', { error: err instanceof Error ? err.message : String(err) });
    }
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.options.logger?.info('Became leader', { lease: this.options.name, identity: this.options.identity });
        this.options.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew > this.t.renewDeadlineMs) {
      this.leading = false;
      this.stopped = true;
      this.options.logger?.warn('Lost leadership: lease not renewed within the deadline', { lease: this.options.name });
      this.options.onStoppedLeading();
      return;
    }
    this.schedule(this.t.retryPeriodMs);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, identity } = this.options;
    const now = new Date();
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (status(err) !== 404) throw err;
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000),
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          },
        });
        return true;
      } catch (createErr) {
        if (status(createErr) === 409) return false;
        throw createErr;
      }
    }

    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const recordKey = `${holder}|${String(spec.renewTime?.valueOf() ?? '')}|${spec.leaseDurationSeconds ?? ''}`;
    if (!this.observed || this.observed.key !== recordKey) this.observed = { key: recordKey, at: Date.now() };
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    const held = holder !== '' && holder !== identity && this.observed.at + durationMs > Date.now();
    if (held) return false;

    const transitions = spec.leaseTransitions ?? 0;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000),
      renewTime: microTime(now),
      acquireTime: microTime(holder === identity ? spec.acquireTime : now),
      leaseTransitions: holder === identity ? transitions : transitions + 1,
    };
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
      return true;
    } catch (err) {
      if (status(err) === 409) return false;
      throw err;
    }
  }
}
