// Per-action request budgets. The CLB API allows 20 requests/s per action per account and TKE's own
// service and ingress controllers spend the same quota (tencent-cloud.md §3 "Rate limits", docs/architecture.md
// §5 "Share the quota"), so loopguard's default is half of it, per action, and configurable.
//
// One p-queue per action in strict (sliding-window) mode: no more than `burst` requests start in any
// window of `burst / rps` seconds. A small burst spreads calls evenly over the second instead of
// spending the account's whole allowance in one instant, which would throttle TKE's controller that
// happens to call at that instant. A RequestLimitExceeded answer means someone else is using the
// quota too. With the adaptive rate (the default, adaptive-rate.ts) the action's rate is cut and grows back, so
// several loopguards on one account settle on shares of it; without it the action's queue pauses for a cool-down
// and resumes at the same rate, so queued calls wait instead of piling on.
import PQueue from 'p-queue';
import type { AccountEvidence, AdaptiveRateParams, RateState } from './adaptive-rate.js';
import { currentRate, onCall, onThrottled, rememberRefusal, resolveAdaptiveRate, startRate } from './adaptive-rate.js';
import { Pacer } from './pacer.js';
import { queueSignal } from './queue-signal.js';

export interface ActionBudget {
  /** Sustained requests per second for this action (> 0). */
  rps: number;
  /** Requests allowed to start together; the window is burst/rps seconds. Default ≈ rps/5 (see defaultBurst). */
  burst?: number;
  /** Requests of this action in flight at once. */
  concurrency?: number;
}

export interface ThrottleOptions {
  /** Budget of every action without its own entry. Default `{ rps: 10, concurrency: 10 }`. */
  defaultBudget?: ActionBudget;
  /** Per-action overrides, e.g. `{ DescribeTaskStatus: { rps: 15 } }`. */
  budgets?: Record<string, Partial<ActionBudget>>;
  /** How long an action pauses after a RequestLimitExceeded, when the rate is not adaptive. Default 1000 ms. */
  cooldownMs?: number;
  /**
   * Adapt each action's rate to RequestLimitExceeded answers, within its budget's rps (default true; constants
   * may be overridden, e.g. for tests). false: the fixed budget and a cool-down pause per throttle.
   */
  adaptive?: boolean | Partial<Omit<AdaptiveRateParams, 'ceiling'>>;
  /**
   * Adaptive only: actions sent no faster than the fastest of other actions' current rates, e.g. an async write no
   * faster than the calls that can prove it landed (DescribeTaskStatus or DescribeListeners, proof.ts; each write needs
   * at least one of them on the account's quota): when those are throttled and their rates cut, the writes slow down
   * with them instead of queueing proofs that are refused again.
   */
  pacedWith?: Record<string, string | readonly string[]>;
}

export const DEFAULT_ACTION_BUDGET: Readonly<Required<ActionBudget>> = Object.freeze({ rps: 10, burst: 2, concurrency: 10 });
export const DEFAULT_COOLDOWN_MS = 1_000;

export interface ResolvedBudget {
  rps: number;
  burst: number;
  concurrency: number;
  /** p-queue window: `burst` starts per `intervalMs`, sliding. */
  intervalMs: number;
}

export function resolveBudget(action: string, options: ThrottleOptions = {}): ResolvedBudget {
  const base = options.defaultBudget ?? DEFAULT_ACTION_BUDGET;
  const override = options.budgets?.[action] ?? {};
  const rps = override.rps ?? base.rps;
  if (!Number.isFinite(rps) || rps <= 0) throw new TypeError(`CLB budget for ${action}: rps must be a positive number, got ${rps}`);
  const burst = override.burst ?? (override.rps === undefined ? base.burst : undefined) ?? defaultBurst(rps);
  if (!Number.isInteger(burst) || burst < 1) throw new TypeError(`CLB budget for ${action}: burst must be an integer ≥ 1, got ${burst}`);
  const concurrency = override.concurrency ?? base.concurrency ?? DEFAULT_ACTION_BUDGET.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`CLB budget for ${action}: concurrency must be an integer ≥ 1, got ${concurrency}`);
  }
  return { rps, burst, concurrency, intervalMs: (burst * 1000) / rps };
}

/**
 * About a fifth of the rate, but a divisor of it, so whole windows fit a second exactly: 19 rps in
 * windows of 4 would let 20 start within one second; 19 windows of 1 do not.
 */
export function defaultBurst(rps: number): number {
  if (!Number.isInteger(rps)) return 1;
  for (let d = Math.max(1, Math.round(rps / 5)); d > 1; d--) if (rps % d === 0) return d;
  return 1;
}

export interface ActionQueueStats {
  /** Waiting for a token or a concurrency slot. */
  waiting: number;
  running: number;
  /** In a RequestLimitExceeded cool-down (fixed rate only). */
  coolingDown: boolean;
  /** The rate calls are sent at now, req/s: the budget's rps, or below it after throttling (adaptive). */
  rate: number;
}

interface ActionQueue {
  queue: PQueue;
  budget: ResolvedBudget;
  resumeAt: number;
  timer: NodeJS.Timeout | undefined;
  /** Adaptive only: the action's rate and the pacer that holds calls to it. */
  adaptive?: { params: AdaptiveRateParams; state: RateState; pacer: Pacer };
}

export class ActionThrottle {
  private readonly queues = new Map<string, ActionQueue>();
  private readonly cooldownMs: number;
  /** Adaptive only: the times of this client's last contentionRefusals refusals, any action (rememberRefusal). */
  private refusedAt: readonly number[] = [];

  constructor(private readonly options: ThrottleOptions = {}) {
    this.cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS;
    // Fail at start-up, not on the first call, when a configured budget is invalid.
    for (const action of Object.keys(options.budgets ?? {})) resolveBudget(action, options);
    const base = resolveBudget('*', { ...options, budgets: {} });
    if (typeof options.adaptive === 'object') resolveAdaptiveRate(base.rps, options.adaptive);
  }

  /**
   * Runs `fn` when the action's budget allows. The signal given to `fn` aborts when the caller's does;
   * a caller that aborts while waiting leaves the queue without spending a token. `stopping` ends only the
   * wait: a call that has not started when it aborts is dropped, one that has is not (queue-signal.ts).
   */
  run<T>(action: string, fn: () => Promise<T>, options: { signal?: AbortSignal; priority?: number; stopping?: AbortSignal } = {}): Promise<T> {
    const { queue, adaptive } = this.entry(action);
    const wait = queueSignal(options.signal, options.stopping);
    return queue.add(
      async () => {
        if (adaptive) {
          const now = performance.now();
          adaptive.state = onCall(adaptive.state, adaptive.params, now, adaptive.pacer.lastStart, this.evidence(now));
          await adaptive.pacer.take(wait.signal);
        }
        wait.started();
        return fn();
      },
      {
        ...(wait.signal ? { signal: wait.signal } : {}),
        ...(options.priority === undefined ? {} : { priority: options.priority }),
      },
    );
  }

  /**
   * The CLB said RequestLimitExceeded for `action`. Adaptive: cut its rate (adaptive-rate.ts `onThrottled`).
   * Fixed: pause its queue (calls in flight finish) until the cool-down has passed; repeated signals extend the
   * pause, they do not stack.
   */
  slowDown(action: string, ms: number = this.cooldownMs): void {
    const q = this.entry(action);
    if (q.adaptive) {
      const { params, state, pacer } = q.adaptive;
      const now = performance.now();
      q.adaptive.state = onThrottled(state, params, now, pacer.measured());
      this.refusedAt = rememberRefusal(this.refusedAt, params, now);
      return;
    }
    const resumeAt = Date.now() + ms;
    if (resumeAt <= q.resumeAt) return;
    q.resumeAt = resumeAt;
    q.queue.pause();
    clearTimeout(q.timer);
    q.timer = setTimeout(() => {
      q.timer = undefined;
      q.queue.start();
    }, ms);
  }

  stats(): Record<string, ActionQueueStats> {
    const out: Record<string, ActionQueueStats> = {};
    for (const [action, q] of this.queues) {
      out[action] = {
        waiting: q.queue.size + (q.adaptive?.pacer.waiting ?? 0),
        running: q.queue.pending - (q.adaptive?.pacer.waiting ?? 0),
        coolingDown: q.queue.isPaused,
        rate: this.rate(action),
      };
    }
    return out;
  }

  /** The rate `action` is sent at now (req/s), within the rate of the action it is paced with; its budget's rps before its first call. */
  rate(action: string): number {
    const q = this.entry(action);
    return q.adaptive ? this.adaptiveRate(action, q.adaptive) : q.budget.rps;
  }

  /** The action's own rate, within the fastest own rate of the actions it is paced with (one level: no chain, no cycle). */
  private adaptiveRate(action: string, a: NonNullable<ActionQueue['adaptive']>): number {
    const now = performance.now();
    const own = currentRate(a.state, a.params, now);
    const paced = this.options.pacedWith?.[action];
    const others = (paced === undefined ? [] : typeof paced === 'string' ? [paced] : paced).filter((o) => o !== action);
    const rates = others.flatMap((o) => {
      const w = this.entry(o).adaptive;
      return w ? [currentRate(w.state, w.params, now)] : [];
    });
    return rates.length > 0 ? Math.min(own, Math.max(...rates)) : own;
  }

  /** The action's rate now and the calls queued on it (proof.ts chooses where a write's proof goes by this). */
  load(action: string): { rate: number; waiting: number; running: number } {
    const q = this.entry(action);
    const pacing = q.adaptive?.pacer.waiting ?? 0;
    return { rate: this.rate(action), waiting: q.queue.size + pacing, running: q.queue.pending - pacing };
  }

  /**
   * What this client knows of the account's quota (adaptive-rate.ts startRate): its RequestLimitExceeded answers on any
   * action, and the lowest rate an action cut within the memory runs at now.
   */
  private evidence(now: number): AccountEvidence {
    let sustained = Infinity;
    for (const q of this.queues.values()) {
      const a = q.adaptive;
      if (!a || !(now - a.state.cutAt < a.params.contentionMemoryMs)) continue;
      sustained = Math.min(sustained, currentRate(a.state, a.params, now));
    }
    return { refusedAt: this.refusedAt, sustained };
  }

  /**
   * Whether `action` is below its budget now: adaptive, its rate cut by RequestLimitExceeded answers and not grown back,
   * or started below it on evidence of contention; fixed, in a cool-down. What loopguard's calls cause others to send is paced only then.
   */
  congested(action: string): boolean {
    const q = this.entry(action);
    return q.adaptive ? this.adaptiveRate(action, q.adaptive) < q.adaptive.params.ceiling : q.queue.isPaused;
  }

  /** Actions called so far and their rates now, for the rate gauge. */
  rates(): Record<string, number> {
    return Object.fromEntries([...this.queues.keys()].map((action) => [action, this.rate(action)]));
  }

  /** Shutdown: rejects every waiting call with an AbortError (never retried) and drops cool-down timers. */
  close(): void {
    for (const q of this.queues.values()) {
      q.adaptive?.pacer.close();
      clearTimeout(q.timer);
      q.timer = undefined;
      q.queue.clear();
    }
  }

  private entry(action: string): ActionQueue {
    let q = this.queues.get(action);
    if (!q) {
      const budget = resolveBudget(action, this.options);
      q = {
        budget,
        queue: new PQueue({ concurrency: budget.concurrency, intervalCap: budget.burst, interval: budget.intervalMs, strict: true }),
        resumeAt: 0,
        timer: undefined,
      };
      const adaptive = this.options.adaptive ?? true;
      if (adaptive !== false) {
        const params = resolveAdaptiveRate(budget.rps, adaptive === true ? {} : adaptive);
        const now = performance.now();
        const state = startRate(params, now, this.evidence(now));
        const a: NonNullable<ActionQueue['adaptive']> = { params, state, pacer: new Pacer(() => this.adaptiveRate(action, a)) };
        q.adaptive = a;
      }
      this.queues.set(action, q);
    }
    return q;
  }
}
