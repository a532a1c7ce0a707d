// Lease-based leader election after client-go's tools/leaderelection/leaderelection.go:
// - a lease is valid while `leaseDuration` has not passed since *we observed* its record change (we never trust
//   the holder's clock);
// - the leader renews every `retryPeriod` and steps down if it could not renew within `renewDeadline`;
// - updates carry the resourceVersion, so of two candidates racing for an expired lease exactly one wins (409);
// - on shutdown the leader releases the lease (empty holder, 1 s duration) so a standby takes over at once.
// Failures are told apart: a missing namespace (a 404 whose Status names a namespace; a 404 naming the Lease on
// update only means it was deleted meanwhile, and the next attempt creates it), a 403 or a 401 will not go
// away by retrying every 2 s, so a candidate backs off (up to 30 s), reports one line with the cause and the
// fix, and `problem` says so for /readyz; a timeout or a 5xx is retried at the normal pace and does not make
// the replica unready.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { kubeErrorMessage, kubeStatus, kubeStatusKind } from './kube-errors.js';
import type { LogSink } from './logger.js';

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
  logger?: Pick<LogSink, 'info' | 'warn'> & Partial<Pick<LogSink, 'error'>>;
}

/** Cap of the backoff after failures that need a person (missing namespace, RBAC). */
export const LEASE_MAX_BACKOFF_MS = 30_000;
/** The same failure is logged again at most this often. */
const REPEAT_LOG_MS = 60_000;

/** A failed attempt, said once: what went wrong, how to fix it, and whether waiting can fix it. */
export class LeaseError extends Error {
  constructor(
    message: string,
    /** Network errors, timeouts, 429 and 5xx: retried at the normal pace, readiness unaffected. */
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'LeaseError';
  }
}

type LeaseStep = 'read' | 'create' | 'update';

/** Turns what a Lease call threw into one line with cause and fix (status code and apiserver message, no headers). */
export function describeLeaseFailure(err: unknown, step: LeaseStep, namespace: string, name: string): LeaseError {
  const code = kubeStatus(err);
  const said = kubeErrorMessage(err);
  const lease = `Lease ${namespace}/${name}`;
  const chooseOther = 'or point --namespace (LOOPGUARD_NAMESPACE) at a namespace that exists';
  // A 404 is about a namespace only when the Status says so: an update's 404 that names the Lease
  // (`leases.coordination.k8s.io "loopguard-leader" not found`) means it was deleted since we read it.
  const namespaceMissing = code === 404 && (kubeStatusKind(err) === 'namespaces' || /\bnamespaces "[^"]*" not found/.test(said));
  if (namespaceMissing && step !== 'read') {
    return new LeaseError(`Cannot ${step} ${lease}: namespace "${namespace}" does not exist (${said}). Fix: kubectl create namespace ${namespace}, ${chooseOther}.`, false);
  }
  if (code === 404 && step === 'update') return new LeaseError(`${lease} was deleted before it could be updated (${said}); reading it again and creating it.`, true);
  if (code === 403) {
    const grant = `grant get, create and update on leases.coordination.k8s.io in namespace ${namespace} to loopguard's identity (config/rbac/leader_election_role.yaml)`;
    return new LeaseError(`Not allowed to ${step} ${lease} (${said}). Fix: ${grant}, ${chooseOther}.`, false);
  }
  if (code === 401) {
    const check = "check the kubeconfig user (KUBECONFIG / --kubeconfig) or, in a pod, the ServiceAccount token";
    return new LeaseError(`The apiserver rejected loopguard's credentials (${step} ${lease}: ${said}). Fix: ${check}.`, false);
  }
  if (code !== undefined && code >= 400 && code < 500 && code !== 408 && code !== 409 && code !== 429) {
    return new LeaseError(`The apiserver refused to ${step} ${lease} (${said}). Fix: check --namespace and --leader-election-id.`, false);
  }
  return new LeaseError(`Could not ${step} ${lease} (${said}); retrying.`, true);
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
  private readonly t: Required<Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>>;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The acquire/renew request in flight, if any: a release must not race it (it could re-take a freed Lease). */
  private inFlight: Promise<boolean> | undefined;
  /**
   * When the request behind the last successful acquire/renew was sent, by the monotonic clock (which keeps
   * running while the process is paused): the lease is ours by our own clock until this + renewDeadline, for the
   * fence before each write (mayWrite) as for the renewal loop (tick).
   */
  private heldSince = 0;
  /** Consecutive failures that need a person (drive the backoff). */
  private failures = 0;
  private failure: LeaseError | undefined;
  private lastLogged: { message: string; at: number } | undefined;
  /** The record we last saw and when we saw it change, by our own clock. */
  private observed: { key: string; at: number } | undefined;

  constructor(kc: KubeConfig, private readonly options: LeaderElectionOptions) {
    this.api = kc.makeApiClient(CoordinationV1Api);
    // controller-runtime's manager defaults (docs/architecture.md), and client-go's rule: leaseDuration > renewDeadline > 1.2 × retryPeriod.
    const { leaseDurationMs = 15_000, renewDeadlineMs = 10_000, retryPeriodMs = 2_000 } = options;
    if (!(leaseDurationMs > renewDeadlineMs)) throw new Error('lease duration must be greater than the renew deadline');
    if (!(renewDeadlineMs > 1.2 * retryPeriodMs)) throw new Error('renew deadline must be greater than 1.2 × the retry period');
    this.t = { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * The fence before every write: whether the lease is still ours by this process's own monotonic clock. A leader
   * paused (SIGSTOP, a VM freeze, a long GC) past its renew deadline may resume with writes queued while a standby
   * has taken over; the renewal that would notice runs only after them. So each write asks first, and the first
   * one that finds the deadline passed ends the leadership here, as a failed renewal does (the process exits).
   * Without leader election (a single replica) it always may.
   */
  mayWrite(): boolean {
    if (!this.leading) return false;
    if (performance.now() - this.heldSince <= this.t.renewDeadlineMs) return true;
    this.loseLeadership('lease not renewed within the deadline by this process\'s own clock (was it paused?); no further write');
    return false;
  }

  private loseLeadership(why: string): void {
    this.leading = false;
    this.stopped = true;
    clearTimeout(this.timer);
    this.options.logger?.warn(`Lost leadership: ${why}`, { lease: this.options.name });
    this.options.onStoppedLeading();
  }

  /** Why this candidate cannot take part in the election, while that needs a person; undefined otherwise. */
  get problem(): string | undefined {
    return this.failure && !this.failure.transient ? this.failure.message : undefined;
  }

  start(): void {
    this.stopped = false;
    void this.tick();
  }

  /** Stops campaigning; a leader releases the lease so that a standby can take over without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A request that just took or renewed the Lease means we hold it, leader yet or not.
    const justHeld = (await this.inFlight?.catch(() => false)) === true;
    const held = this.leading || justHeld;
    this.leading = false;
    if (!held) return;
    // A renewal still in flight may write the Lease between our read and our write (409): read again and retry.
    for (let attempt = 1; ; attempt++) {
      try {
        const { name, namespace, identity } = this.options;
        const lease = await this.api.readNamespacedLease({ name, namespace });
        if (lease.spec?.holderIdentity !== identity) return;
        lease.spec = { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, acquireTime: microTime(lease.spec.acquireTime), renewTime: microTime(new Date()) };
        await this.api.replaceNamespacedLease({ name, namespace, body: lease });
        this.options.logger?.info('Released leader lease', { lease: this.options.name });
        return;
      } catch (err) {
        if (kubeStatus(err) === 409 && attempt < 3) continue;
        this.options.logger?.warn('Could not release leader lease', { error: kubeErrorMessage(err) });
        return;
      }
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = false;
    const sent = performance.now();
    try {
      this.inFlight = this.tryAcquireOrRenew();
      ok = await this.inFlight;
      this.recovered();
    } catch (err) {
      const failure = err instanceof LeaseError ? err : describeLeaseFailure(err, 'read', this.options.namespace, this.options.name);
      this.failed(failure);
    } finally {
      this.inFlight = undefined;
    }
    // stop() may have run while the request was in flight: a renewal landing after it is not a new leadership.
    if (this.stopped) return;
    if (ok) {
      this.heldSince = sent;
      if (!this.leading) {
        this.leading = true;
        this.options.logger?.info('Became leader', { lease: this.options.name, identity: this.options.identity });
        this.options.onStartedLeading();
      }
    } else if (this.leading && performance.now() - this.heldSince > this.t.renewDeadlineMs) {
      this.loseLeadership('lease not renewed within the deadline');
      return;
    }
    // A leader keeps the normal pace whatever happens (it must renew within the deadline); a candidate that
    // cannot work until someone creates a namespace or a RoleBinding backs off.
    const backoff = !this.leading && this.failures > 0 ? Math.min(LEASE_MAX_BACKOFF_MS, this.t.retryPeriodMs * 2 ** this.failures) : 0;
    // Jitter like client-go's wait.JitterUntil so that candidates do not retry in lockstep.
    this.timer = setTimeout(() => void this.tick(), Math.max(this.t.retryPeriodMs, backoff) * (1 + Math.random() * 0.2));
    this.timer.unref();
  }

  private failed(failure: LeaseError): void {
    this.failure = failure;
    if (!failure.transient) this.failures++;
    const now = Date.now();
    const repeat = this.lastLogged?.message === failure.message && now - this.lastLogged.at < REPEAT_LOG_MS;
    if (repeat) return;
    this.lastLogged = { message: failure.message, at: now };
    const log = this.options.logger;
    const meta = { lease: `${this.options.namespace}/${this.options.name}` };
    if (failure.transient) log?.warn(`Leader election attempt failed: ${failure.message}`, meta);
    else (log?.error ?? log?.warn)?.call(log, `Leader election cannot proceed: ${failure.message}`, meta);
  }

  private recovered(): void {
    if (!this.failure) return;
    if (this.lastLogged) this.options.logger?.info('Leader election works again', { lease: `${this.options.namespace}/${this.options.name}` });
    this.failure = undefined;
    this.failures = 0;
    this.lastLogged = undefined;
  }

  /** Reads the Lease and takes or renews it unless another holder's is still valid; creates it when there is none. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, identity } = this.options;
    const now = new Date();
    let lease: V1Lease | undefined;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (kubeStatus(err) !== 404) throw describeLeaseFailure(err, 'read', namespace, name);
    }

    const spec = lease?.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const recordKey = `${holder}|${String(spec.renewTime?.valueOf() ?? '')}|${spec.leaseDurationSeconds ?? ''}`;
    if (!this.observed || this.observed.key !== recordKey) this.observed = { key: recordKey, at: Date.now() };
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    const held = holder !== '' && holder !== identity && this.observed.at + durationMs > Date.now();
    if (held) return false;

    const transitions = spec.leaseTransitions ?? 0;
    const body: V1Lease = {
      ...(lease ?? { metadata: { name, namespace } }),
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000),
        renewTime: microTime(now),
        acquireTime: microTime(holder === identity ? spec.acquireTime : now),
        // A new Lease starts at 0 transitions; taking one over from another holder (or none) is one more.
        leaseTransitions: !lease || holder === identity ? transitions : transitions + 1,
      },
    };
    try {
      if (lease) await this.api.replaceNamespacedLease({ name, namespace, body });
      else await this.api.createNamespacedLease({ namespace, body });
      return true;
    } catch (err) {
      // 409: another candidate created or updated it first.
      if (kubeStatus(err) === 409) return false;
      throw describeLeaseFailure(err, lease ? 'update' : 'create', namespace, name);
    }
  }
}
