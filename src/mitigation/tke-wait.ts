// Pure: when a wait for TKE ends (issue 22 #3). Every AwaitTke step has TKE's grace period and reads TKE's own
// Warning Events on the object: a Warning since the wait began, or the grace period over with TKE still not done,
// makes the target Stalled (a permanent TargetError) with TKE's message and the way out. A wait loopguard ends itself
// (`fallback`: after the grace period the planner writes what TKE did not, e.g. the listener sources under
// prevent-loopback) never fails here: it only quotes TKE's Warning while it waits. The clock of a wait the plan
// gives no start (`since`) is the first time the executor saw it (WaitClock), so no wait is without an end.
import { StalledReason } from '../api/reasons.js';
import { KEEPALIVE_TICKET } from '../model/cause-text.js';
import { targetKey, type TargetRef } from '../model/facts.js';
import type { TargetError } from '../model/status.js';
import type { Step } from '../plan/steps.js';
import { isKeepaliveCapabilityError, latestTkeWarning, type EventView } from './tke-events.js';

export type AwaitStep = Extract<Step, { kind: 'AwaitTke' }>;

/** Reason for a TKE-reported failure or a wait past its grace period that is not the keepalive capability (Stalled reason, API). */
export const TKE_SYNC_FAILED = 'TkeSyncFailed';
/** Event timestamps have second precision. */
export const EVENT_SLACK_MS = 2_000;
const KEEPALIVE_CAPABILITY = 'CLB layer-7 SNAT + keepalive, by ticket';

export interface WaitInput {
  step: AwaitStep;
  target: TargetRef;
  /** Events on the target (any source: only TKE's Warnings count). */
  events: readonly EventView[];
  /** When the wait began (ms): the step's `since`, else the first time the executor saw it. */
  sinceMs: number;
  /** When what the wait looks at was last read (ms): a CLB read, or now for the informer-fed config. */
  observedAtMs: number | undefined;
  nowMs: number;
  graceMs: number;
}

export type WaitVerdict =
  | { status: 'waiting'; note: string }
  /** `keepaliveRejected`: TKE's message proves the account lacks the capability (learned account-wide). */
  | { status: 'failed'; error: TargetError; keepaliveRejected?: string };

const WHAT: { readonly [R in AwaitStep['reason']]: (s: AwaitStep) => string } = {
  ConfigCreated: (s) => `create TkeServiceConfig ${s.config ?? ''}`,
  ConfigApplied: (s) => `apply TkeServiceConfig ${s.config ?? ''} to CLB ${s.loadBalancerId}`,
  PassToTargetApplied: (s) => `apply ingress.cloud.tencent.com/pass-to-target to CLB ${s.loadBalancerId}`,
  SourceSwitched: (s) => `switch the health-check sources of CLB ${s.loadBalancerId} to 100.64.0.0/10 (prevent-loopback)`,
  OriginalsApplied: (s) => `restore the originals declared in TkeServiceConfig ${s.config ?? ''} on CLB ${s.loadBalancerId}`,
  VipReleased: (s) => `unbind the VIP of CLB ${s.loadBalancerId} on every node (prevent-loopback taken off)`,
};
const what = (s: AwaitStep): string => WHAT[s.reason](s);

/** The way out when TKE does not act: look at TKE's controller, and the step's own alternative. */
function wayOut(s: AwaitStep, t: TargetRef): string {
  const controller = t.kind === 'Service' ? "TKE's service controller" : "TKE's ingress controller (l7-lb-controller)";
  const look = `check ${controller} and its Events (kubectl describe ${t.kind.toLowerCase()} ${t.name} -n ${t.namespace})`;
  if (s.reason === 'ConfigCreated') return `${look}; or create a TkeServiceConfig of your own and name it in ingress.cloud.tencent.com/tke-service-config. loopguard goes on once TKE acts`;
  if (s.reason === 'OriginalsApplied') return `${look}; loopguard keeps the record and restores once TKE syncs the Ingress again`;
  return `${look}; loopguard goes on once TKE acts`;
}

/** Whether the wait is over by TKE's Warning or by the grace period; `waiting` with a note otherwise. */
export function judgeWait(input: WaitInput): WaitVerdict {
  const { step, target } = input;
  const warning = latestTkeWarning(input.events, input.sinceMs - EVENT_SLACK_MS, target.kind);
  const tke = warning ? `TKE's latest Warning Event (${warning.reason ?? 'unknown'}): "${warning.message ?? ''}"` : undefined;
  const graceOver = step.graceOver === true || (input.observedAtMs !== undefined && input.observedAtMs >= input.sinceMs + input.graceMs);
  const secs = Math.round(input.graceMs / 1000);
  if (step.reason === 'VipReleased') {
    // A pause, not a question to TKE: kube-proxy reports nothing loopguard can read, so the planner waits the grace
    // period after taking prevent-loopback off before any source goes back to the VIP (l4.ts planL4Release).
    return { status: 'waiting', note: `waiting ${secs} s for kube-proxy to ${what(step)} before the health-check sources go back to the VIP` };
  }
  if (step.fallback) {
    // loopguard writes it itself after the grace period (the planner's step): no verdict here.
    return { status: 'waiting', note: `waiting for TKE to ${what(step)}; loopguard writes it itself if TKE has not within ${secs} s${tke ? ` (${tke})` : ''}` };
  }
  if (!warning && !graceOver) return { status: 'waiting', note: `waiting up to ${secs} s for TKE to ${what(step)}` };
  if (step.reason === 'ConfigApplied' && warning && isKeepaliveCapabilityError(warning.message)) {
    const message = `TKE could not enable keepalive on CLB ${step.loadBalancerId}: the account lacks the ${KEEPALIVE_CAPABILITY} capability (TKE: "${warning.message ?? ''}"); ${KEEPALIVE_TICKET}`;
    return { status: 'failed', keepaliveRejected: warning.message ?? 'keepalive rejected', error: { reason: StalledReason.KeepaliveCapabilityMissing, message, permanent: true } };
  }
  if (tke) return { status: 'failed', error: { reason: TKE_SYNC_FAILED, message: `TKE did not ${what(step)}; ${tke}. ${wayOut(step, target)}`, permanent: true } };
  if (step.reason === 'ConfigApplied' && step.wantsKeepalive) {
    // A timeout alone is this target's verdict, never the account's: only TKE's or the CLB's refusal is learned.
    const message = `keepaliveEnable: 1 is declared in TkeServiceConfig ${step.config ?? ''} but CLB ${step.loadBalancerId} still has keepalive off after the grace period and no TKE Warning Event explains it; most likely the account lacks the ${KEEPALIVE_CAPABILITY} capability: ${KEEPALIVE_TICKET}`;
    return { status: 'failed', error: { reason: StalledReason.KeepaliveCapabilityMissing, message, permanent: true } };
  }
  const message = `TKE did not ${what(step)} within its grace period (${secs} s) and reports no Warning Event about it. ${wayOut(step, target)}`;
  return { status: 'failed', error: { reason: TKE_SYNC_FAILED, message, permanent: true } };
}

/**
 * How long a wait not seen again stays remembered (a target no longer run: deleted, deselected); a wait seen after
 * that starts its clock anew. Longer than any sensible drift-check interval, so a Stalled wait stays Stalled.
 */
const FORGET_AFTER_MS = 60 * 60_000;

/**
 * When each wait began, for waits whose plan gives no start (an auto config TKE was asked for in an earlier round,
 * the originals of a release): the first time the executor saw it. In memory: a restart only lengthens a wait.
 */
export class WaitClock {
  /** Target → its waits' starts. By target, so a plan that ran without waiting drops its waits in one step: a round ends that for every target it planned, and a scan of every wait per target was quadratic (bench/scale: 12,000 targets). */
  private readonly started = new Map<string, Map<string, { since: number; seen: number }>>();
  /** When the waits not seen for FORGET_AFTER_MS were last dropped (a deleted target's waits would stay forever). */
  private sweptAt = 0;

  /** The wait's start: the step's own, else the first sighting (now, if it is new or was forgotten). */
  since(t: TargetRef, s: AwaitStep, nowMs: number): number {
    this.sweep(nowMs);
    const target = targetKey(t);
    const waits = this.started.get(target) ?? new Map<string, { since: number; seen: number }>();
    const key = `${s.reason}/${s.loadBalancerId}/${s.config ?? ''}`;
    const given = s.since ? Date.parse(s.since) : NaN;
    const known = waits.get(key);
    const since = !Number.isNaN(given) ? Math.min(given, nowMs) : known && nowMs - known.seen < FORGET_AFTER_MS ? known.since : nowMs;
    waits.set(key, { since, seen: nowMs });
    this.started.set(target, waits);
    return since;
  }

  /** Drops the waits forgotten anyway (not seen for FORGET_AFTER_MS), at most once per that period: O(waits) per hour. */
  private sweep(nowMs: number): void {
    if (nowMs - this.sweptAt < FORGET_AFTER_MS) return;
    this.sweptAt = nowMs;
    for (const [target, waits] of this.started) {
      for (const [key, w] of waits) if (nowMs - w.seen >= FORGET_AFTER_MS) waits.delete(key);
      if (waits.size === 0) this.started.delete(target);
    }
  }

  /** The target's plan ran without waiting on TKE: every wait of it ended. */
  ended(t: TargetRef): void {
    this.started.delete(targetKey(t));
  }

  get size(): number {
    let n = 0;
    for (const waits of this.started.values()) n += waits.size;
    return n;
  }
}
