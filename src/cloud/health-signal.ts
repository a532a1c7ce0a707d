// The cheap drift signal's reads (src/controllers/drift-signal.ts): backend health of many CLBs, 30 per
// DescribeTargetHealth call (docs/tencent-cloud.md §3), compared with the last answer seen for each CLB
// (health-summary.ts). The last answer comes from the signal or from a full read: the observer's reader is wrapped
// (`recording`) so that the DescribeTargetHealth of every full read is the next signal's baseline too.
import type { ClbReader, CallOptions, LoadBalancerHealthInfo } from './clb-client.js';
import { driftSuspected, healthSummary, type HealthSummary } from './health-summary.js';

export class HealthSignal {
  private readonly last = new Map<string, { at: number; summary: HealthSummary }>();

  constructor(private readonly clb: Pick<ClbReader, 'describeTargetHealth'>) {}

  /** `reader` with its DescribeTargetHealth answers recorded as baselines (give it to the ClbObserver). */
  recording(reader: ClbReader): ClbReader {
    return {
      describeLoadBalancers: (ids, options) => reader.describeLoadBalancers(ids, options),
      describeListeners: (id, options) => reader.describeListeners(id, options),
      describeTargetHealth: async (ids, options) => {
        const answers = await reader.describeTargetHealth(ids, options);
        this.record(answers, Date.now());
        return answers;
      },
    };
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
    const answers = await this.clb.describeTargetHealth(unique, options);
    const at = Date.now();
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

  private record(answers: readonly LoadBalancerHealthInfo[], at: number): void {
    for (const h of answers) this.last.set(h.loadBalancerId, { at, summary: healthSummary(h) });
  }
}
