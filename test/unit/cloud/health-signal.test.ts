// The drift signal's escalation (src/cloud/health-summary.ts, health-signal.ts): which health answers send a CLB to
// the full re-read, against which baseline.
import { describe, expect, it } from '@jest/globals';
import type { ClbReader, LoadBalancerHealthInfo } from '../../../src/cloud/clb-client.js';
import { HealthSignal } from '../../../src/cloud/health-signal.js';
import { driftSuspected, healthSummary } from '../../../src/cloud/health-summary.js';

const t = (status: string) => ({ ip: '10.0.0.1', port: 30080, healthy: status === 'Alive', status });
/** A CLB with one TCP listener (its pseudo-rule) and one HTTP listener with two rules. */
function lb(id: string, tcp: string[], rule1: string[] = ['Alive'], rule2: string[] = []): LoadBalancerHealthInfo {
  return {
    loadBalancerId: id,
    listeners: [
      { listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, rules: [{ locationId: 'lbl-tcp', targets: tcp.map(t) }] },
      {
        listenerId: 'lbl-http',
        protocol: 'HTTP',
        port: 8080,
        rules: [
          { locationId: 'loc-1', targets: rule1.map(t) },
          { locationId: 'loc-2', targets: rule2.map(t) },
        ],
      },
    ],
  };
}

describe('healthSummary', () => {
  it('keys L4 listeners by listener and L7 rules by listener/rule, leaving out those without backends', () => {
    expect([...healthSummary(lb('lb-1', ['Alive', 'Dead', 'Unknown']))]).toEqual([
      ['lbl-tcp', { targets: 3, dead: 1 }],
      ['lbl-http/loc-1', { targets: 1, dead: 0 }],
    ]);
  });
});

describe('driftSuspected', () => {
  const before = healthSummary(lb('lb-1', ['Alive', 'Alive', 'Alive']));
  it.each<[string, LoadBalancerHealthInfo, boolean]>([
    ['nothing changed', lb('lb-1', ['Alive', 'Alive', 'Alive']), false],
    ['backends still being probed (Unknown) are no drift', lb('lb-1', ['Alive', 'Unknown', 'Alive']), false],
    ['a backend added', lb('lb-1', ['Alive', 'Alive', 'Alive', 'Alive']), false],
    ['a source back on the bound VIP: every backend Dead', lb('lb-1', ['Dead', 'Dead', 'Dead']), true],
    ['one backend Dead', lb('lb-1', ['Alive', 'Dead', 'Alive']), true],
    ['a rule got backends (new rule)', lb('lb-1', ['Alive', 'Alive', 'Alive'], ['Alive'], ['Alive']), true],
    ['a rule lost its backends (gone)', lb('lb-1', ['Alive', 'Alive', 'Alive'], []), true],
  ])('%s → %s', (_name, now, suspected) => {
    expect(driftSuspected(before, healthSummary(now)) !== undefined).toBe(suspected);
  });

  it('without an earlier answer, only Dead backends are suspect (a new process cannot tell what was before)', () => {
    expect(driftSuspected(undefined, healthSummary(lb('lb-1', ['Alive'])))).toBeUndefined();
    expect(driftSuspected(undefined, healthSummary(lb('lb-1', ['Dead', 'Dead'])))).toContain('lbl-tcp: 2 of 2 backends Dead');
  });

  it('Dead → Alive (fixed by someone else) is a change too', () => {
    expect(driftSuspected(healthSummary(lb('lb-1', ['Dead'])), healthSummary(lb('lb-1', ['Alive'])))).toContain('Dead backends 1 → 0');
  });
});

/** A reader whose health answers the test sets per CLB; counts the calls. */
function reader(answers: Map<string, LoadBalancerHealthInfo>) {
  const calls: string[][] = [];
  const r: ClbReader = {
    describeLoadBalancers: async () => [],
    describeListeners: async () => [],
    describeTargetHealth: async (ids) => {
      calls.push([...ids]);
      return ids.flatMap((id) => (answers.get(id) ? [answers.get(id) as LoadBalancerHealthInfo] : []));
    },
  };
  return { r, calls };
}

describe('HealthSignal', () => {
  it("a full read's answer is the next signal's baseline; a change after it is suspect, and stays suspect until a full read records it", async () => {
    const answers = new Map([['lb-1', lb('lb-1', ['Alive', 'Alive'])], ['lb-2', lb('lb-2', ['Alive'])]]);
    const { r } = reader(answers);
    const signal = new HealthSignal(r, 0);
    const observed = signal.recording(r);
    await observed.describeTargetHealth(['lb-1', 'lb-2']);
    expect(signal.readAt('lb-1')).toBeDefined();
    expect(await signal.check(['lb-1', 'lb-2'])).toEqual(new Map());
    // Someone puts lb-1's TCP source back on the bound VIP.
    answers.set('lb-1', lb('lb-1', ['Dead', 'Dead']));
    expect([...(await signal.check(['lb-1', 'lb-2'])).keys()]).toEqual(['lb-1']);
    // The full read failed: still suspect.
    expect([...(await signal.check(['lb-1'])).keys()]).toEqual(['lb-1']);
    // The full read (through the observer's reader) records the new answer; the next signal compares with it.
    await observed.describeTargetHealth(['lb-1']);
    expect(await signal.check(['lb-1'])).toEqual(new Map());
  });

  it('a CLB the answer leaves out (deleted) is sent to the full read, which says NotFound', async () => {
    const { r } = reader(new Map([['lb-1', lb('lb-1', ['Alive'])]]));
    const signal = new HealthSignal(r, 0);
    expect([...(await signal.check(['lb-1', 'lb-gone'])).entries()]).toEqual([['lb-gone', 'not in the DescribeTargetHealth answer']]);
  });

  it('asks once for all the ids (the client splits them by 30) and not at all for none', async () => {
    const { r, calls } = reader(new Map());
    const signal = new HealthSignal(r, 0);
    await signal.check([]);
    await signal.check(['lb-1', 'lb-1', 'lb-2']);
    expect(calls).toEqual([['lb-1', 'lb-2']]);
  });

  it('checks of several policies within the window share one call, each gets its own suspects; 30 ids go at once; an abort leaves only its caller', async () => {
    const answers = new Map([['lb-a', lb('lb-a', ['Alive'])], ['lb-b', lb('lb-b', ['Alive'])]]);
    const { r, calls } = reader(answers);
    const signal = new HealthSignal(r, 60_000);
    await signal.recording(r).describeTargetHealth(['lb-a', 'lb-b']);
    calls.length = 0;
    answers.set('lb-b', lb('lb-b', ['Dead']));
    const gone = new AbortController();
    const a = signal.check(['lb-a']);
    const aborted = signal.check(['lb-c'], { signal: gone.signal });
    gone.abort(new Error('round aborted'));
    await expect(aborted).rejects.toThrow('round aborted');
    // 30 ids fill the batch: the shared call goes now, not after the 60 s window.
    const full = Array.from({ length: 27 }, (_, i) => `lb-x${i}`);
    const b = signal.check(['lb-b', ...full]);
    expect([...(await a).keys()]).toEqual([]);
    expect([...(await b).keys()]).toEqual(['lb-b', ...full]);
    expect(calls).toEqual([['lb-a', 'lb-c', 'lb-b', ...full]]);
  });

  it('forget drops the baselines of the CLBs named, and only those', async () => {
    const answers = new Map([['lb-a', lb('lb-a', ['Alive'])], ['lb-b', lb('lb-b', ['Alive'])]]);
    const { r } = reader(answers);
    const signal = new HealthSignal(r, 0, () => 5_000);
    await signal.recording(r).describeTargetHealth(['lb-a', 'lb-b']);
    signal.forget(['lb-a', 'lb-x']);
    expect(signal.readAt('lb-a')).toBeUndefined();
    expect(signal.readAt('lb-b')).toBe(5_000);
  });

  it('spread: seeded CLBs come due one by one over the span, oldest full read first, none overdue at once; a read baseline is kept', async () => {
    const answers = new Map([['lb-a', lb('lb-a', ['Alive'])]]);
    const { r } = reader(answers);
    const signal = new HealthSignal(r, 0);
    await signal.recording(r).describeTargetHealth(['lb-a']);
    const readA = signal.readAt('lb-a');
    const now = 1_000_000;
    const span = 150_000;
    signal.spread([{ id: 'lb-a', at: 1 }, { id: 'lb-c', at: 300 }, { id: 'lb-b', at: 200 }, { id: 'lb-d', at: 200 }], now, span);
    // lb-a has a read of this process: untouched. The others: due (read span ago) at now + span/3, 2/3, 3/3, in order
    // of their full reads (lb-b and lb-d read together: by id).
    expect(signal.readAt('lb-a')).toBe(readA);
    expect(['lb-b', 'lb-d', 'lb-c'].map((id) => (signal.readAt(id) ?? NaN) + span - now)).toEqual([span / 3, (2 * span) / 3, span]);
    // No baseline was assumed: an answer with Dead backends is a suspect, an all-Alive one is not.
    answers.set('lb-b', lb('lb-b', ['Dead']));
    answers.set('lb-c', lb('lb-c', ['Alive']));
    expect([...(await signal.check(['lb-b', 'lb-c'])).keys()]).toEqual(['lb-b']);
  });
});

