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
// 10 req/s in 50 s); before its first throttle it climbs at probeIncreasePerSecond (below).
// One cut per `holdMs`: the answers to calls already sent at the old
// rate arrive after the cut and must not cut again (TCP's once per round trip); 1 s is the quota's window.
//
// Slow start (TCP's, RFC 5681 §3.1, in time rather than per acknowledgement): an action starts at a quarter of the
// ceiling and doubles every second up to half of it (TCP's ssthresh), then climbs by `probeIncreasePerSecond`
// (1 req/s per second) until its first RequestLimitExceeded or the ceiling; then AIMD as above. Three loopguards
// starting an Enforce together at their ceilings asked 30 req/s of a 20 req/s quota from the first instant, and most
// of the fleet's throttled calls came in those first seconds (bench:fleet, 2026-11-26). Doubling alone only moved that
// burst 2 s later (the emulator's quota, like a token bucket, lets a second's worth of calls through before it
// refuses, and by then every client had doubled to its ceiling, 15 to 30 req/s in one step); the deeper first cut
// (slowStartBeta 0.5, as TCP halves its window) brings three clients from 30 to 15 req/s at once instead of over two
// rounds of refusals; and the climb past half the ceiling overshoots the quota by a few calls instead of doubling past
// it (the loopguards alone had asked 28 DescribeListeners in one second of their discovery, and 14 of their 25
// throttled calls, and 16 of TKE's 31, came in those first seconds). A loopguard alone reaches its ceiling 6 s after
// its first call (2 s when it doubled all the way): about 10 calls fewer in its first seconds.
// An action idle for `idleRestartMs` starts slowly again (RFC 5681 §4.1 "restart window"): its rate, grown back
// to the ceiling while nothing was sent, says nothing about the quota now.

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
  /** The cut of the first RequestLimitExceeded, which ends slow start (TCP's halving of its window). */
  slowStartBeta: number;
  /** Slow start: the first rate, as a fraction of the ceiling (1: none). */
  startFraction: number;
  /** Slow start: the rate doubles every this many ms until the first throttle or the threshold. */
  doublingMs: number;
  /** Slow start: doubling stops at this fraction of the ceiling (1: at the ceiling). */
  slowStartThreshold: number;
  /** Slow start, past the threshold: the climb, req/s per second, until the first throttle or the ceiling. */
  probeIncreasePerSecond: number;
  /** No call for this long: the next starts slowly again. */
  idleRestartMs: number;
}

export const DEFAULT_ADAPTIVE_RATE: Readonly<Omit<AdaptiveRateParams, 'ceiling'>> = Object.freeze({
  floor: 0.5,
  beta: 0.7,
  increasePerSecond: 0.1,
  holdMs: 1_000,
  slowStartBeta: 0.5,
  startFraction: 0.25,
  doublingMs: 1_000,
  slowStartThreshold: 0.5,
  probeIncreasePerSecond: 1,
  idleRestartMs: 30_000,
});

/** One action's rate: `base` req/s at time `since` (ms), growing by increasePerSecond from then on. */
export interface RateState {
  base: number;
  since: number;
  /** When the last cut happened (ms); -Infinity before the first. */
  cutAt: number;
  /** Growing multiplicatively (slow start) rather than additively. */
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
  if (!(p.startFraction > 0 && p.startFraction <= 1)) throw new TypeError(`adaptive rate: startFraction must be in (0, 1], got ${p.startFraction}`);
  if (!(p.doublingMs > 0)) throw new TypeError(`adaptive rate: doublingMs must be positive, got ${p.doublingMs}`);
  if (!(p.slowStartThreshold > 0 && p.slowStartThreshold <= 1)) throw new TypeError(`adaptive rate: slowStartThreshold must be in (0, 1], got ${p.slowStartThreshold}`);
  if (!(p.probeIncreasePerSecond > 0)) throw new TypeError(`adaptive rate: probeIncreasePerSecond must be positive, got ${p.probeIncreasePerSecond}`);
  if (!(p.idleRestartMs > 0)) throw new TypeError(`adaptive rate: idleRestartMs must be positive, got ${p.idleRestartMs}`);
  return p;
}

/** The first state of an action: slow start from startFraction × the ceiling (never below the floor). */
export function initialRate(params: AdaptiveRateParams, now: number): RateState {
  const base = Math.max(params.floor, params.ceiling * params.startFraction);
  return base >= params.ceiling ? { base: params.ceiling, since: now, cutAt: -Infinity } : { base, since: now, cutAt: -Infinity, slowStart: true };
}

/**
 * The allowed rate at `now`: the base grown since (slow start: doubling up to the threshold, then climbing by
 * probeIncreasePerSecond; after it: by increasePerSecond), within [floor, ceiling].
 */
export function currentRate(state: RateState, params: AdaptiveRateParams, now: number): number {
  const elapsed = Math.max(0, now - state.since);
  return Math.min(params.ceiling, Math.max(params.floor, state.slowStart ? slowStartRate(state.base, params, elapsed) : state.base + (params.increasePerSecond * elapsed) / 1000));
}

function slowStartRate(base: number, params: AdaptiveRateParams, elapsed: number): number {
  const threshold = Math.max(base, params.ceiling * params.slowStartThreshold);
  const doubling = params.doublingMs * Math.log2(threshold / base);
  if (elapsed <= doubling) return base * 2 ** (elapsed / params.doublingMs);
  return threshold + (params.probeIncreasePerSecond * (elapsed - doubling)) / 1000;
}

/**
 * A call about to be paced at `now`, the previous one having started at `lastStart` (ms; -Infinity: none). After
 * idleRestartMs without a call the action starts slowly again, from no more than it was allowed (a rate cut
 * recently stays cut) and no more than startFraction × the ceiling.
 */
export function onCall(state: RateState, params: AdaptiveRateParams, now: number, lastStart: number): RateState {
  if (!Number.isFinite(lastStart) || now - lastStart < params.idleRestartMs) return state;
  const restart = initialRate(params, now);
  return { ...restart, base: Math.min(restart.base, currentRate(state, params, now)), cutAt: state.cutAt };
}

/**
 * A RequestLimitExceeded answer at `now`. `measured` is what the client sent over the last second or so; the cut
 * is from the lower of it and the allowed rate. Within `holdMs` of the last cut nothing changes.
 */
export function onThrottled(state: RateState, params: AdaptiveRateParams, now: number, measured = Infinity): RateState {
  if (now - state.cutAt < params.holdMs) return state;
  // The first throttle ends slow start, with a deeper cut: every client doubled into the overshoot together, and the
  // quota's burst hid it for a second or more, so the rate sent is well above the share. Then it grows additively.
  const from = Math.min(currentRate(state, params, now), Math.max(measured, 0));
  return { base: Math.max(params.floor, from * (state.slowStart ? params.slowStartBeta : params.beta)), since: now, cutAt: now };
}
