// Whether the CLB API can be used as configured: endpoint, protocol, region and credentials. One cheap read
// (the probe) answers it at start-up, so that a wrong setting is one clear line before anything else runs,
// and again while the answer is "no", so that /readyz turns true by itself once the cause is gone.
// At start-up, what only a configuration change can fix is fatal (the caller exits); what may heal — a
// network path, a CAM policy, a node clock — is retried with backoff while /readyz is false. Calls that the
// operator makes anyway report here too: a connection or authentication failure triggers a probe (the probe
// decides: one slow request must not flip readiness), any success clears a known problem at once.
import { toClbError, type ClbError, type CloudCallEvent } from '../cloud/index.js';
import { jitteredDelay } from './backoff.js';
import type { LogSink } from './logger.js';

export type ProbeVerdict =
  | { kind: 'ok' }
  /** Only a configuration change fixes it: fatal at start-up, unready afterwards. */
  | { kind: 'misconfigured'; message: string }
  /** May heal without a restart: unready, probed again with backoff. */
  | { kind: 'unavailable'; message: string };

/** How a failed probe reads; the API answering at all (throttled, busy, 5xx, a rejected parameter) counts as usable. */
export function judgeProbeFailure(err: unknown): ProbeVerdict {
  const e: ClbError = toClbError(err);
  const unavailable = (message = e.message): ProbeVerdict => ({ kind: 'unavailable', message });
  const misconfigured = (message = e.message): ProbeVerdict => ({ kind: 'misconfigured', message });
  switch (e.reason) {
    case 'NetworkError':
    case 'CredentialsUnavailable':
    case 'CredentialsRejected':
      // Unreachable may heal; a protocol mismatch (EPROTO) never will. Not retryable: no credential source at all, or a
      // key the API does not know; retryable: STS or instance metadata failed this time.
      return e.retryable ? unavailable() : misconfigured();
    case 'ClockSkew':
    case 'PermissionDenied':
      return unavailable();
    case 'InvalidRequest':
      return /Region/i.test(e.code) ? misconfigured(`${e.message} (--region / TENCENTCLOUD_REGION)`) : { kind: 'ok' };
    case 'CloudError':
      if (e.httpCode !== undefined && e.httpCode >= 400 && e.httpCode < 500) {
        return misconfigured(`${e.message} Fix: check --clb-endpoint (LOOPGUARD_CLB_ENDPOINT): that server does not answer like the CLB API.`);
      }
      return { kind: 'ok' };
    default:
      return { kind: 'ok' };
  }
}

/** Codes of a call that say the endpoint or the credentials may have gone bad (a permission is per action: not one). */
function suspicious(event: CloudCallEvent): boolean {
  if (event.outcome !== 'error' || !event.code) return false;
  if (event.code === 'NetworkError' || event.code === 'EndpointProtocolMismatch') return true;
  return event.code.startsWith('AuthFailure') && event.code !== 'AuthFailure.UnauthorizedOperation';
}

export interface CloudHealthOptions {
  /** One cheap read through a client that does not retry. */
  probe: (signal: AbortSignal) => Promise<unknown>;
  logger: LogSink;
  /** First re-probe delay and the cap of its exponential backoff. */
  minDelayMs?: number;
  maxDelayMs?: number;
}

export class CloudHealth {
  private verdict: ProbeVerdict = { kind: 'ok' };
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<ProbeVerdict> | undefined;
  private readonly abort = new AbortController();
  private stopped = false;

  constructor(private readonly options: CloudHealthOptions) {}

  /** Cause and fix while the CLB API is known to be unusable; undefined otherwise (for /readyz). */
  get problem(): string | undefined {
    return this.verdict.kind === 'ok' ? undefined : this.verdict.message;
  }

  /**
   * Probes now (joining a probe in flight); a failure schedules the next probe with backoff. At start-up a
   * misconfiguration is returned, not logged or retried: the caller exits with it as its one line.
   */
  check(startup = false): Promise<ProbeVerdict> {
    this.probing ??= this.runProbe(startup).finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** Feed of the operator's own CLB calls (TencentClbClient's onCall). */
  observe(event: CloudCallEvent): void {
    if (this.stopped) return;
    if (event.outcome !== 'error') {
      if (this.verdict.kind !== 'ok') this.settle({ kind: 'ok' });
      return;
    }
    if (suspicious(event) && this.verdict.kind === 'ok' && !this.probing && !this.timer) void this.check();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
  }

  private async runProbe(startup: boolean): Promise<ProbeVerdict> {
    clearTimeout(this.timer);
    this.timer = undefined;
    let verdict: ProbeVerdict;
    try {
      await this.options.probe(this.abort.signal);
      verdict = { kind: 'ok' };
    } catch (err) {
      if (this.stopped) return this.verdict;
      verdict = judgeProbeFailure(err);
    }
    if (startup && verdict.kind === 'misconfigured') this.verdict = verdict;
    else this.settle(verdict);
    return verdict;
  }

  private settle(verdict: ProbeVerdict): void {
    const before = this.verdict;
    this.verdict = verdict;
    if (verdict.kind === 'ok') {
      this.failures = 0;
      clearTimeout(this.timer);
      this.timer = undefined;
      if (before.kind !== 'ok') this.options.logger.info('CLB API usable again');
      return;
    }
    // One line per cause, not per attempt: the message is repeated only when it changes.
    if (before.kind === 'ok' || before.message !== verdict.message) {
      this.options.logger.error(`CLB API unusable, not ready: ${verdict.message}`, { retrying: true });
    }
    if (this.stopped) return;
    const delay = jitteredDelay(this.failures++, this.options.minDelayMs ?? 2_000, this.options.maxDelayMs ?? 60_000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, delay);
    this.timer.unref();
  }
}
