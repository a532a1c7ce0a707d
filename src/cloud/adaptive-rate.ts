// The adaptive per-action rate (pure; throttle.ts applies it). The CLB quota is per action per *account*
// (docs/tencent-cloud.md §3 "Rate limits"), shared by TKE's controllers and by every loopguard of every cluster in
// the account, none of which know of the others. Each one therefore runs TCP's AIMD on its own send rate:
// start at the configured ceiling (--cloud-rate-limit), cut multiplicatively when the CLB answers
// RequestLimitExceeded, grow additively, in time, while it does not; never above the ceiling. Clients that
// all do this converge to equal shares without talking to each other (Chiu & Jain 1989), and the cut leaves
// room for callers that do not adapt (TKE) instead of fighting them for every token.
//
// Constants, after the AWS SDKs' "adaptive" retry mode (smithy-typescript @smithy/util-retry DefaultRateLimiter,
// aws-sdk-cpp AdaptiveRetryStrategy): the cut is to β = 0.7 of what the client actually sent (its measured
// rate, so a client that asks less than its allowance still yields), with a floor of 0.5 req/s. Where AWS grows
// back along CUBIC, we grow linearly (α req/s per second): simpler to reason about with a quota of 20, and what
// makes the fair share the fixed point. α = 0.1: every climb past the free quota costs RequestLimitExceeded
// answers, so a slower climb probes less often; in bench:fleet (3 clusters × 60 Services on one account, 2026-11-26)
// 0.5 gave 5.7 % of loopguard's calls throttled, 0.2 gave 2.7–5.0 % at the same speed (β 0.5 instead: no better,
// slower), and 0.1, once TKE's syncs and task polls were paced too (effect.ts paceTkeSync, throttle.ts pacedWith),
// 1.5 % (README, bench:fleet). The price: after a cut, a client alone climbs back to its ceiling slowly (from 5 to
// 10 req/s in 50 s).
// One cut per `holdMs`: the answers to calls already sent at the old
// rate arrive after the cut and must not cut again (TCP's once per round trip); 1 s is the quota's window.
//
// The start (issue 40): an action starts at the rate the account last sustained, and slows down only on evidence of
// contention. Evidence is a refusal that recurs: `contentionRefusals` (2) RequestLimitExceeded answers to this
// client, on any actions, within `contentionMemoryMs`. One refusal is not: a lone cluster's discovery reads meet
// TKE's own syncs on one action for a second, and when that single refusal slowed every action started in the next
// minute, a lone cluster's bulk Enforce fell from T_min/T_actual 0.91 to 0.67–0.77 (bench:l4, N = 200, 2026-12-02),
// while counting from the second left the fleet throttled as much or less (bench:fleet; docs/benchmarks.md "The
// second refusal is the evidence"). With evidence, a new action (or one idle for `idleRestartMs`) starts at the
// lowest rate the recently cut actions run at now, the rate this client has found the account's quota to leave it;
// without such evidence, at the full share (the ceiling), with the first refusal cutting deeper (`slowStartBeta` 0.5, TCP's halving of its window: every client
// that started at its share together overshoots the quota together, and the quota's one-second burst hides it for a
// second or so). History: a TCP-like slow start (a quarter of the ceiling, doubling each second to half of it, then
// +1 req/s per second; 2026-11-26) halved the fleet's start-up refusals but cost a lone cluster every start: its bulk
// Enforce fell from T_min/T_actual 0.87–0.89 to 0.75 (bench:l4, N = 200), each action ramping up from 2.5 req/s in
// turn (discovery's reads, then the writes, then their task polls) with nobody else on the quota.
// An action idle for `idleRestartMs` starts again by the same rule, from no more than it was allowed (a rate cut
// recently stays cut): its rate, grown back while nothing was sent, says nothing about the quota now.

export interface AdaptiveRateParams {
  /** --cloud-rate-limit: the rate never goes above it, and starts there. */
  ceiling: number;
  /** Never below (req/s): a client must keep probing to learn that the quota is free again. */
  floor: number;
  /** Multiplicative decrease on RequestLimitExceeded. */
  beta: number;
  /** Additive increase, req/s per second without throttling. */
  increasePerSecond: number;
  /** After a cut, further RequestLimitExceeded answers for this long do not cut again. */
  holdMs: number;
  /** The cut of the first RequestLimitExceeded of an action that started at the full share without evidence. */
  slowStartBeta: number;
  /** This many RequestLimitExceeded answers (any actions) within contentionMemoryMs: evidence of contention for a start. */
  contentionRefusals: number;
  /** How long a RequestLimitExceeded answer is remembered as part of that evidence. */
  contentionMemoryMs: number;
  /** No call for this long: the next starts again (startRate). */
  idleRestartMs: number;
}

export const DEFAULT_ADAPTIVE_RATE: Readonly<Omit<AdaptiveRateParams, 'ceiling'>> = Object.freeze({
  floor: 0.5,
  beta: 0.7,
  increasePerSecond: 0.1,
  holdMs: 1_000,
  slowStartBeta: 0.5,
  contentionRefusals: 2,
  contentionMemoryMs: 60_000,
  idleRestartMs: 30_000,
});

/** One action's rate: `base` req/s at time `since` (ms), growing by increasePerSecond from then on. */
export interface RateState {
  base: number;
  since: number;
  /** When the last cut happened (ms); -Infinity before the first. */
  cutAt: number;
  /** Started at the full share without evidence of contention: the first throttle cuts by slowStartBeta. */
  slowStart?: boolean;
}

export function resolveAdaptiveRate(ceiling: number, overrides: Partial<Omit<AdaptiveRateParams, 'ceiling'>> = {}): AdaptiveRateParams {
  // A budget below the default floor (e.g. 0.2 req/s) is its own floor: the rate then stays fixed.
  const p = { ...DEFAULT_ADAPTIVE_RATE, floor: Math.min(DEFAULT_ADAPTIVE_RATE.floor, ceiling), ...overrides, ceiling };
  if (!(p.ceiling > 0)) throw new TypeError(`adaptive rate: ceiling must be positive, got ${p.ceiling}`);
  if (!(p.floor > 0) || p.floor > p.ceiling) throw new TypeError(`adaptive rate: floor must be in (0, ceiling], got ${p.floor}`);
  if (!(p.beta > 0 && p.beta < 1)) throw new TypeError(`adaptive rate: beta must be in (0, 1), got ${p.beta}`);
  if (!(p.increasePerSecond > 0)) throw new TypeError(`adaptive rate: increasePerSecond must be positive, got ${p.increasePerSecond}`);
  if (!(p.holdMs >= 0)) throw new TypeError(`adaptive rate: holdMs must be ≥ 0, got ${p.holdMs}`);
  if (!(p.slowStartBeta > 0 && p.slowStartBeta < 1)) throw new TypeError(`adaptive rate: slowStartBeta must be in (0, 1), got ${p.slowStartBeta}`);
  if (!(Number.isInteger(p.contentionRefusals) && p.contentionRefusals >= 1)) throw new TypeError(`adaptive rate: contentionRefusals must be an integer ≥ 1, got ${p.contentionRefusals}`);
  if (!(p.contentionMemoryMs >= 0)) throw new TypeError(`adaptive rate: contentionMemoryMs must be ≥ 0, got ${p.contentionMemoryMs}`);
  if (!(p.idleRestartMs > 0)) throw new TypeError(`adaptive rate: idleRestartMs must be positive, got ${p.idleRestartMs}`);
  return p;
}

/**
 * What this client knows of the account's quota at `now`: the times of its last contentionRefusals RequestLimitExceeded
 * answers, any action, oldest first (rememberRefusal), and the lowest rate its actions cut since run at now (what the
 * quota has been found to leave it).
 */
export interface AccountEvidence {
  refusedAt: readonly number[];
  sustained: number;
}

export const NO_EVIDENCE: Readonly<AccountEvidence> = Object.freeze({ refusedAt: Object.freeze([]), sustained: Infinity });

/** The refusal times a client remembers after one more at `now`: the last contentionRefusals, all startRate needs. */
export function rememberRefusal(refusedAt: readonly number[], params: AdaptiveRateParams, now: number): number[] {
  return [...refusedAt, now].slice(-params.contentionRefusals);
}

/**
 * The first state of an action: with evidence of contention (contentionRefusals refusals within contentionMemoryMs), the
 * rate the account sustains (within [floor, ceiling]), growing additively; without, the full share, the first refusal
 * cutting deeper.
 */
export function startRate(params: AdaptiveRateParams, now: number, evidence: AccountEvidence = NO_EVIDENCE): RateState {
  // The last contentionRefusals refusals all within the memory: the oldest of them is.
  const oldest = evidence.refusedAt.at(-params.contentionRefusals);
  if (oldest !== undefined && now - oldest < params.contentionMemoryMs) {
    return { base: Math.min(params.ceiling, Math.max(params.floor, evidence.sustained)), since: now, cutAt: -Infinity };
  }
  return { base: params.ceiling, since: now, cutAt: -Infinity, slowStart: true };
}

/** The allowed rate at `now`: the base grown by increasePerSecond since `since`, within [floor, ceiling]. */
export function currentRate(state: RateState, params: AdaptiveRateParams, now: number): number {
  const elapsed = Math.max(0, now - state.since);
  return Math.min(params.ceiling, Math.max(params.floor, state.base + (params.increasePerSecond * elapsed) / 1000));
}

/**
 * A call about to be paced at `now`, the previous one having started at `lastStart` (ms; -Infinity: none). After
 * idleRestartMs without a call the action starts again (startRate, from the evidence then), from no more than it was
 * allowed (a rate cut recently stays cut).
 */
export function onCall(state: RateState, params: AdaptiveRateParams, now: number, lastStart: number, evidence: AccountEvidence = NO_EVIDENCE): RateState {
  if (!Number.isFinite(lastStart) || now - lastStart < params.idleRestartMs) return state;
  const restart = startRate(params, now, evidence);
  const allowed = currentRate(state, params, now);
  return allowed < restart.base ? { base: allowed, since: now, cutAt: state.cutAt } : { ...restart, cutAt: state.cutAt };
}

/**
 * A RequestLimitExceeded answer at `now`. `measured` is what the client sent over the last second or so; the cut
 * is from the lower of it and the allowed rate. Within `holdMs` of the last cut nothing changes.
 */
export function onThrottled(state: RateState, params: AdaptiveRateParams, now: number, measured = Infinity): RateState {
  if (now - state.cutAt < params.holdMs) return state;
  // The first throttle of an action started at the full share without evidence cuts deeper: every client that started
  // together overshoots together, and the quota's burst hid it for a second or so. Then it grows additively.
  const from = Math.min(currentRate(state, params, now), Math.max(measured, 0));
  return { base: Math.max(params.floor, from * (state.slowStart ? params.slowStartBeta : params.beta)), since: now, cutAt: now };
}
