// The cheap drift signal's reads (src/controllers/drift-signal.ts): backend health of many CLBs, 30 per
// DescribeTargetHealth call (docs/tencent-cloud.md §3), compared with the last answer seen for each CLB
// (health-summary.ts). The last answer comes from the signal or from a full read: the observer's reader is wrapped
// (`recording`) so that the DescribeTargetHealth of every full read is the next signal's baseline too.
// Policies check their CLBs in rounds of their own: 300 namespaces with a LoopbackPolicy of one CLB each would each
// send a DescribeTargetHealth of one id every half interval (2/s at 5 min, three times the one-tier cost). Checks
// are therefore gathered across policies for up to BATCH_WINDOW_MS (or until 30 ids) and sent together.
import { MAX_TARGET_HEALTH_IDS } from './batching.js';
import type { ClbReader, CallOptions, LoadBalancerHealthInfo } from './clb-client.js';
import { driftSuspected, healthSummary, type HealthSummary } from './health-summary.js';

/** How long a check waits for others to share its DescribeTargetHealth call (ms). */
export const BATCH_WINDOW_MS = 1_000;

interface Batch {
  ids: Set<string>;
  timer: NodeJS.Timeout | undefined;
  answer: Promise<ReadonlyMap<string, LoadBalancerHealthInfo>>;
  resolve: (answers: ReadonlyMap<string, LoadBalancerHealthInfo>) => void;
  reject: (err: unknown) => void;
}

export class HealthSignal {
  /** Per CLB, when its health was last read and what it showed (no summary: a time assumed after a restart, see spread). */
  private readonly last = new Map<string, { at: number; summary?: HealthSummary }>();
  private batch: Batch | undefined;

  constructor(
    private readonly clb: Pick<ClbReader, 'describeTargetHealth'>,
    private readonly windowMs = BATCH_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** `reader` with its DescribeTargetHealth answers recorded as baselines (give it to the ClbObserver). */
  recording(reader: ClbReader): ClbReader {
    return {
      describeLoadBalancers: (ids, options) => reader.describeLoadBalancers(ids, options),
      describeListeners: (id, options) => reader.describeListeners(id, options),
      describeTargetHealth: async (ids, options) => {
        const answers = await reader.describeTargetHealth(ids, options);
        this.record(answers, this.now());
        return answers;
      },
    };
  }

  /** Forgets the CLBs the observer dropped (ClbObserver.sweep): what is kept of a CLB goes with it, by one rule. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.last.delete(id);
  }

  /**
   * After a restart: the CLBs seeded from the observation checkpoint (controllers/observation-upkeep.ts) carry the time
   * of their last full read, not of their last health read, which the previous leader made every half interval. Taken
   * as they are, most would be overdue at once, and the new leader's first round would read the health of every CLB
   * before judging anything (3,000 CLBs: 100 DescribeTargetHealth calls, 10 s at the default rate, that a new
   * Service waited behind). Instead their health reads are assumed spread over the last `spanMs`, oldest full read
   * first, so they come due at the signal's pace over the next `spanMs`: each is checked within one signal interval
   * of the restart, as drift always is. No baseline is assumed (the answer counts as a first answer).
   */
  spread(seeded: ReadonlyArray<{ id: string; at: number }>, now: number, spanMs: number): void {
    const fresh = seeded.filter((e) => !this.last.has(e.id)).sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
    fresh.forEach((e, i) => this.last.set(e.id, { at: now - spanMs + (spanMs * (i + 1)) / fresh.length }));
  }

  /** When the CLB's health was last read, by the signal or a full read. */
  readAt(id: string): number | undefined {
    return this.last.get(id)?.at;
  }

  /**
   * Reads the health of `ids` (the client batches them by 30) and returns the CLBs to re-read in full, with why:
   * those whose answer can mean drift, and those the answer left out (gone: the full read says so).
   */
  async check(ids: readonly string[], options: CallOptions = {}): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const shared = await abortable(this.gathered(unique), options.signal);
    const answers = unique.flatMap((id) => shared.get(id) ?? []);
    const at = this.now();
    const suspects = new Map<string, string>();
    const answered = new Set<string>();
    for (const h of answers) {
      answered.add(h.loadBalancerId);
      const summary = healthSummary(h);
      const why = driftSuspected(this.last.get(h.loadBalancerId)?.summary, summary);
      // A suspect keeps its old baseline until the full read records the new one: should that read fail, the next
      // signal suspects it again instead of taking the change for normal.
      if (why) suspects.set(h.loadBalancerId, why);
      else this.last.set(h.loadBalancerId, { at, summary });
    }
    for (const id of unique) {
      if (answered.has(id)) continue;
      suspects.set(id, 'not in the DescribeTargetHealth answer');
      this.last.delete(id);
    }
    return suspects;
  }

  /** The answers for `ids`, from a call shared with the other checks of the window (a full batch goes at once). */
  private gathered(ids: readonly string[]): Promise<ReadonlyMap<string, LoadBalancerHealthInfo>> {
    let b = this.batch;
    if (!b) {
      let resolve!: Batch['resolve'];
      let reject!: Batch['reject'];
      const answer = new Promise<ReadonlyMap<string, LoadBalancerHealthInfo>>((res, rej) => ((resolve = res), (reject = rej)));
      // Callers that gave up (aborted) leave the promise unobserved: its rejection is theirs to ignore.
      answer.catch(() => undefined);
      b = this.batch = { ids: new Set(), timer: undefined, answer, resolve, reject };
      b.timer = setTimeout(() => this.flush(), this.windowMs);
    }
    for (const id of ids) b.ids.add(id);
    if (b.ids.size >= MAX_TARGET_HEALTH_IDS) this.flush();
    return b.answer;
  }

  private flush(): void {
    const b = this.batch;
    if (!b) return;
    this.batch = undefined;
    clearTimeout(b.timer);
    // No caller's abort signal: the call serves every check of the window (the client's own timeouts bound it).
    this.clb.describeTargetHealth([...b.ids]).then((answers) => b.resolve(new Map(answers.map((h) => [h.loadBalancerId, h]))), b.reject);
  }

  private record(answers: readonly LoadBalancerHealthInfo[], at: number): void {
    for (const h of answers) this.last.set(h.loadBalancerId, { at, summary: healthSummary(h) });
  }
}

/** `p`, or the signal's reason once it aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
