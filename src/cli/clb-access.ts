// The CLB API as `loopguard doctor` uses it: the operator's client (credentials chain, per-action budgets, retries),
// held only as a ClbReader, and read through the operator's ClbObserver (DescribeLoadBalancers in batches of 20,
// DescribeListeners per CLB, DescribeTargetHealth in batches of 20). CAM needs only the three Describe actions.
// Before the scan one cheap probe read, like the operator's start-up check, turns a wrong region, endpoint or
// credentials into one line (exit 2) instead of a failure halfway through.
import { batches, MAX_LOAD_BALANCER_IDS } from '../cloud/batching.js';
import { describeCloudError, TencentClbClient, type ClbReader, type CloudCallEvent, type CredentialProvider } from '../cloud/index.js';
import { ClbObserver } from '../cloud/clb-observer.js';
import type { ClbObservation } from '../model/facts.js';
import { judgeProbeFailure } from '../runtime/cloud-health.js';
import { settleAll } from '../runtime/settle.js';
import { CliError } from './errors.js';

export interface ClbSettings {
  region: string;
  /** host[:port] or http(s)://host[:port]; undefined: the public endpoint. */
  endpoint?: string;
  protocol: 'https' | 'http';
  /** Requests per second per action, as the operator's --cloud-rate-limit. */
  rateLimit: number;
}

/** A CLB id that cannot exist: the API checks region, endpoint, credentials and CAM, then answers an empty list. */
const PROBE_ID = 'lb-00000000';
const PROBE_TIMEOUT_MS = 5_000;
/** DescribeLoadBalancers batches read at once: one batch's listener reads overlap the next batch's CLB read. */
const BATCHES_IN_FLIGHT = 3;

export interface CallCounts {
  calls: Record<string, number>;
  throttled: number;
}

export interface ClbAccess {
  reader: ClbReader;
  close(): Promise<void>;
}

/** Counts every HTTP attempt per action (the probe's and the scan's), for the report and the bench. */
export function callCounter(): { counts: CallCounts; onCall: (e: CloudCallEvent) => void } {
  const counts: CallCounts = { calls: {}, throttled: 0 };
  return {
    counts,
    onCall: (e) => {
      counts.calls[e.action] = (counts.calls[e.action] ?? 0) + 1;
      if (e.outcome === 'throttled') counts.throttled++;
    },
  };
}

function endpointOptions(s: ClbSettings): { endpoint?: string; protocol: 'https' | 'http' } {
  return { ...(s.endpoint ? { endpoint: s.endpoint } : {}), protocol: s.protocol };
}

/** Throws a one-line CliError unless the CLB API answers a read with these settings. */
export async function probeClbAccess(settings: ClbSettings, credentials: CredentialProvider, onCall?: (e: CloudCallEvent) => void): Promise<void> {
  const probe = new TencentClbClient({
    region: settings.region,
    credentials,
    ...endpointOptions(settings),
    ...(onCall ? { onCall } : {}),
    requestTimeoutMs: PROBE_TIMEOUT_MS,
    retry: { maxAttempts: 1 },
    throttle: { defaultBudget: { rps: 1 } },
  });
  try {
    await probe.describeLoadBalancers([PROBE_ID]);
  } catch (err) {
    const verdict = judgeProbeFailure(err);
    // An answer that proves access (throttled, busy: the operator's probe takes these as ok) lets the scan go on;
    // its reads retry those. Anything else ends the one-shot scan.
    if (verdict.kind === 'ok') return;
    throw new CliError(`cannot read CLBs in region ${settings.region}: ${verdict.message}`);
  } finally {
    await probe.close();
  }
}

export function openClbAccess(settings: ClbSettings, credentials: CredentialProvider, onCall?: (e: CloudCallEvent) => void): ClbAccess {
  const client = new TencentClbClient({
    region: settings.region,
    credentials,
    ...endpointOptions(settings),
    throttle: { defaultBudget: { rps: settings.rateLimit } },
    ...(onCall ? { onCall } : {}),
  });
  // Only the read side leaves this function: nothing downstream can reach a write method.
  const reader: ClbReader = client;
  return { reader, close: () => client.close() };
}

export interface ObservedClbs {
  observations: Map<string, ClbObservation>;
  observedAt: Map<string, number>;
}

/** Reads every CLB once, 20 ids a batch, reporting progress per batch; any failure left after retries ends the scan. */
export async function observeClbs(reader: ClbReader, ids: readonly string[], onProgress: (done: number) => void): Promise<ObservedClbs> {
  const observer = new ClbObserver(reader);
  const chunks = batches(ids, MAX_LOAD_BALANCER_IDS);
  let done = 0;
  const settled = await settleAll(chunks, BATCHES_IN_FLIGHT, async (chunk) => {
    const result = await observer.observe(chunk, 0);
    done += chunk.length;
    onProgress(done);
    return result;
  });
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw new CliError(`cannot read CLBs: ${describeCloudError(failed.reason).message}`);
  const observations = new Map<string, ClbObservation>();
  const observedAt = new Map<string, number>();
  for (const r of settled) {
    if (r.status !== 'fulfilled') continue;
    for (const [id, o] of r.value) {
      observations.set(id, o);
      const at = observer.observedAt(id);
      if (at !== undefined) observedAt.set(id, at);
    }
  }
  return { observations, observedAt };
}
